"""Replace the device machine's paths in copied-back logs and Parquet metadata by placeholders.

A device run's logs name the folders of the machine it ran on (``/work/main/...``, ``/tmp/zbv``,
``/root/out``); committed outputs must read the same wherever they were made
(``tests/core/test_committed_outputs.py``). Run on the folder the results were copied into::

    python benchmarks/h200/scrub_paths.py results/validation/h200

Text files (``.log``, ``.txt``, ``.md``, ``.json``, ``.jsonl``, ``.csv``, ``.yaml``) are rewritten in
place; Parquet files get their schema metadata rewritten, their data untouched. Files without a
machine path are left as they are (byte for byte).
"""

from __future__ import annotations

import argparse
import logging
import re
import sys
from pathlib import Path

import pyarrow.parquet as pq

log = logging.getLogger("scrub_paths")

#: Longest prefixes first: the repository of the device copy, its work and output folders.
REPLACEMENTS: tuple[tuple[str, str], ...] = (
    ("/work/main/.devwt/", "$REPO/"),
    ("/work/main/", "$REPO/"),
    ("/tmp/zbv/", "$WORK/"),
    ("/tmp/zbn/", "$WORK/"),  # the noise call's work folder (--work /tmp/zbn)
    ("/root/out/", "$OUT/"),
    ("/tmp/", "$TMP/"),  # any other scratch folder of the device (the repeat runs' optimizer states)
)
TEXT_SUFFIXES = {".log", ".txt", ".md", ".json", ".jsonl", ".csv", ".yaml"}
LEFT = re.compile(r"(?<![\w$.])/(?:work|tmp|root|home|Users|mnt|scratch)/")


def scrub(text: str) -> str:
    """``text`` with every known machine prefix replaced by its placeholder."""
    for old, new in REPLACEMENTS:
        text = text.replace(old, new)
    return text


def _scrub_parquet(path: Path) -> bool:
    table = pq.read_table(path)
    meta = table.schema.metadata or {}
    new = {k: scrub(v.decode()).encode() for k, v in meta.items()}
    if new == meta:
        return False
    pq.write_table(table.replace_schema_metadata(new), path)
    return True


def scrub_folder(root: Path) -> list[Path]:
    """Rewrite every file under ``root`` that names a machine path; return those rewritten."""
    changed: list[Path] = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        if path.suffix == ".parquet":
            if _scrub_parquet(path):
                changed.append(path)
        elif path.suffix in TEXT_SUFFIXES:
            text = path.read_text(errors="surrogateescape")
            new = scrub(text)
            if new != text:
                path.write_text(new, errors="surrogateescape")
                changed.append(path)
            for n, line in enumerate(new.splitlines(), 1):
                if LEFT.search(line):
                    log.warning("%s:%d: a machine path with no placeholder is left", path, n)
    return changed


def main(argv: list[str] | None = None) -> int:
    """Command line: scrub the folders given."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folders", nargs="+", type=Path, help="folders of copied-back device results")
    args = p.parse_args(argv)
    for folder in args.folders:
        if not folder.is_dir():
            print(f"scrub_paths: {folder}: not a folder", file=sys.stderr)
            return 2
    for folder in args.folders:
        for path in scrub_folder(folder):
            log.info("rewrote %s", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
