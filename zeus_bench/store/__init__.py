"""Versioned, validated tables: one ``write_table`` / ``read_table`` pair for everything.

The package in three parts, each importable on its own:

- :mod:`zeus_bench.store.schema`: the table kinds (:class:`Column`, :class:`TableSchema`,
  :func:`register_schema`, :func:`get_schema`, :func:`schemas`, ``METADATA_KEY``);
- :mod:`zeus_bench.store.frames`: pandas frames (:func:`validate`, :func:`write_table`,
  :func:`read_table`, :func:`read_metadata`, :func:`read_user_table` for hand-written tables,
  :func:`as_frame` for a :class:`ColumnTable`);
- :mod:`zeus_bench.store.columns`: the pandas-free path (:class:`ColumnTable`,
  :class:`TableWriter`, :func:`read_columns`).

``from zeus_bench.store import X`` finds every public name here.
"""

from zeus_bench.store.columns import ColumnTable, ColumnValues, TableWriter, read_columns
from zeus_bench.store.frames import (
    as_frame,
    read_metadata,
    read_table,
    read_user_file,
    read_user_table,
    validate,
    write_table,
)
from zeus_bench.store.schema import (
    METADATA_KEY,
    Check,
    Coded,
    Column,
    DType,
    TableSchema,
    get_schema,
    register_schema,
    schemas,
)

__all__ = [
    "METADATA_KEY",
    "Check",
    "Coded",
    "Column",
    "ColumnTable",
    "ColumnValues",
    "DType",
    "TableSchema",
    "TableWriter",
    "as_frame",
    "get_schema",
    "read_columns",
    "read_metadata",
    "read_table",
    "read_user_file",
    "read_user_table",
    "register_schema",
    "schemas",
    "validate",
    "write_table",
]
