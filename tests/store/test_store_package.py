"""The store as a package (schema, frames, columns): the old public API, and read_user_table by kind."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from zeus_bench.core.errors import TraceFormatError
from zeus_bench.store import Column, TableSchema, read_user_table

STORE = Path(__file__).resolve().parents[2] / "zeus_bench" / "store"

#: Every public name of the single-file store.py before the split.
OLD_PUBLIC = [
    "METADATA_KEY",
    "Check",
    "Column",
    "ColumnTable",
    "ColumnValues",
    "DType",
    "TableSchema",
    "TableWriter",
    "get_schema",
    "read_columns",
    "read_metadata",
    "read_table",
    "register_schema",
    "schemas",
    "validate",
    "write_table",
]

HAND = TableSchema(
    kind="test_hand_table",
    version=1,
    description="A hand-written table of the store's tests.",
    key=("job",),
    columns=(
        Column("job", "str", "Job id"),
        Column("start_s", "float", "Submission time", "s", checks=("nonnegative", "finite")),
        Column("epochs", "int", "Epochs", checks=("positive",)),
        Column("note", "str", "Free text", nullable=True, required=False),
    ),
)


@pytest.fixture(autouse=True)
def hand_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    """The test kind, registered for one test only (the README renders every registered kind)."""
    import zeus_bench.catalog  # noqa: F401  (the built-in kinds first, as any reader of every kind)
    from zeus_bench.store import schema

    monkeypatch.setitem(schema._SCHEMAS, HAND.kind, HAND)


def test_the_old_public_api_imports_from_the_package() -> None:
    import zeus_bench.store as store

    assert [n for n in OLD_PUBLIC if not hasattr(store, n)] == []
    assert set(OLD_PUBLIC) <= set(store.__all__)


def test_each_part_is_under_400_lines() -> None:
    sizes = {p.name: len(p.read_text().splitlines()) for p in STORE.glob("*.py")}
    assert set(sizes) == {"__init__.py", "schema.py", "frames.py", "columns.py"}
    assert max(sizes.values()) < 400, sizes


def test_the_parts_share_one_registry() -> None:
    from zeus_bench.store import columns, frames, register_schema, schema

    assert register_schema(HAND) is HAND

    assert frames.get_schema is schema.get_schema is columns.get_schema
    assert schema.get_schema("test_hand_table").names == ["job", "start_s", "epochs", "note"]


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_read_user_table_types_orders_and_checks_columns(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"jobs{suffix}"
    df = pd.DataFrame({"epochs": ["3", "5"], "start_s": [0, 1.5], "job": ["a", "b"]})
    if suffix == ".csv":
        df.to_csv(path, index=False)
    else:
        df.astype({"epochs": int}).to_parquet(path)
    out = read_user_table(path, "test_hand_table")
    assert list(out.columns) == ["job", "start_s", "epochs", "note"]
    assert out["epochs"].tolist() == [3, 5] and out["epochs"].dtype == "int64"
    assert out["start_s"].tolist() == [0.0, 1.5]
    assert out["note"].isna().all()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("job,start_s\na,0\n", "missing column(s) epochs for a test_hand_table table"),
        ("job,start_s,epochs\na,-1,3\n", "column 'start_s' row 0: must be >= 0, got -1.0"),
        ("job,start_s,epochs\na,0,3\nb,1,zero\n", "column 'epochs' row 1: not a number: 'zero'"),
        ("job,start_s,epochs\na,0,3\na,1,4\n", "duplicate rows for key (job=a)"),
        ("job,start_s,epochs,extra\na,0,3,1\n", "unknown column(s) extra for a test_hand_table table"),
        ("", "not a readable test_hand_table table"),
    ],
)
def test_read_user_table_refuses_a_bad_table_in_one_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "jobs.csv"
    path.write_text(text)
    with pytest.raises(TraceFormatError) as info:
        read_user_table(path, "test_hand_table")
    assert str(info.value).startswith(f"{path}: ") and message in str(info.value)
    assert "\n" not in str(info.value)


def test_read_user_table_names_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(TraceFormatError, match=r"nope\.csv: no such test_hand_table table$"):
        read_user_table(tmp_path / "nope.csv", "test_hand_table")


def test_read_user_table_refuses_an_unknown_kind_before_reading(tmp_path: Path) -> None:
    with pytest.raises(KeyError, match="unknown table kind 'no_such_kind'"):
        read_user_table(tmp_path / "nope.csv", "no_such_kind")


def test_schemas_finds_every_module_that_registers_a_kind() -> None:
    """A kind registered in a module that :mod:`zeus_bench.catalog` does not import is missing from
    ``schemas()`` (and from the README rendered from it) until something else imports it."""
    import ast
    import subprocess
    import sys

    package = STORE.parent
    registering = set()
    for path in package.rglob("*.py"):
        tree = ast.parse(path.read_text())
        calls = [
            n
            for n in tree.body
            if isinstance(n, ast.Expr | ast.Assign) and "register_schema(" in ast.unparse(n)
        ]
        if calls and path.parent != STORE:
            parts = path.relative_to(package.parent).with_suffix("").parts
            registering.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    assert {"zeus_bench.traces.schema", "zeus_bench.sim.schema"} <= registering
    code = (
        "import sys\nimport zeus_bench.catalog\n"
        f"print(sorted(m for m in {sorted(registering)!r} if m not in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", f"not imported by zeus_bench.catalog: {out.stdout.strip()}"
