"""Import of the published Zeus CSVs: accepted variants and every refusal, through the CLI."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from zeus_bench.cli.main import main
from zeus_bench.store import read_metadata, read_table
from zeus_bench.traces.zeus_csv import import_zeus

TRAIN_HEADER = "dataset,network,batch_size,optimizer,learning_rate,run,target_metric,target_epoch"
POWER_HEADER = "dataset,network,batch_size,optimizer,power_limit,time_per_epoch,average_power"
TRAIN_ROWS = [
    "cifar100,shufflenetv2,128,adadelta,1e-1,1,0.6,18",
    "cifar100,shufflenetv2,128,adadelta,1e-1,2,0.6,",
    "cifar100,shufflenetv2,256,adadelta,1e-1,1,0.6,nan",
]
POWER_ROWS = [
    "cifar100,shufflenetv2,128,adadelta,100,12.5,90.0",
    "cifar100,shufflenetv2,128,adadelta,250,8.0,200.5",
    "cifar100,shufflenetv2,256,adadelta,250,6.0,230.0",
]


def write_traces(folder: Path, train: str | bytes | None = None, power: str | bytes | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, content, default in (
        ("summary_train.csv", train, "\n".join([TRAIN_HEADER, *TRAIN_ROWS]) + "\n"),
        ("summary_power_v100.csv", power, "\n".join([POWER_HEADER, *POWER_ROWS]) + "\n"),
    ):
        data = default if content is None else content
        (folder / name).write_bytes(data if isinstance(data, bytes) else data.encode())
    return folder


def run_import(src: Path, out: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    code = main(["traces", "import-zeus", str(src), "--out", str(out), *extra])
    return code, capsys.readouterr().err


def test_import_writes_train_and_power(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = write_traces(tmp_path / "src")
    code, err = run_import(src, tmp_path / "out", capsys)
    assert code == 0, err
    train = read_table(tmp_path / "out" / "train.parquet", "train")
    power = read_table(tmp_path / "out" / "power-v100.parquet", "power")
    assert train["target_epoch"].tolist()[0] == 18
    assert train["target_epoch"].isna().tolist() == [False, True, True]
    assert power["gpu"].unique().tolist() == ["v100"]
    assert power["power_limit_w"].tolist() == [100.0, 250.0, 250.0]
    assert power["avg_power_w"].iloc[1] == pytest.approx(200.5)
    meta = read_metadata(tmp_path / "out" / "power-v100.parquet")
    assert meta["kind"] == "power" and meta["schema_version"] == 2
    assert len(meta["sources"][0]["sha256"]) == 64
    assert meta["package_version"] and meta["created_utc"]


@pytest.mark.parametrize(
    "variant",
    ["crlf", "bom", "reordered", "blank_lines", "extra_column", "identical_duplicate", "uppercase_optimizer"],
)
def test_accepted_variants(variant: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    header, rows = POWER_HEADER, list(POWER_ROWS)
    newline, prefix = "\n", ""
    if variant == "crlf":
        newline = "\r\n"
    elif variant == "bom":
        prefix = "\ufeff"
    elif variant == "reordered":
        cols = header.split(",")
        order = [6, 0, 5, 1, 4, 2, 3]
        header = ",".join(cols[i] for i in order)
        rows = [",".join(r.split(",")[i] for i in order) for r in rows]
    elif variant == "blank_lines":
        rows = [rows[0], "", rows[1], "   ", rows[2]]
    elif variant == "extra_column":
        header += ",comment"
        rows = [r + ",note" for r in rows]
    elif variant == "identical_duplicate":
        rows = [*rows, rows[0]]
    elif variant == "uppercase_optimizer":
        rows = [r.replace("adadelta", "Adadelta") for r in rows]
    power = prefix + newline.join([header, *rows]) + newline
    src = write_traces(tmp_path / "src", power=power)
    code, err = run_import(src, tmp_path / "out", capsys)
    assert code == 0, err
    df = read_table(tmp_path / "out" / "power-v100.parquet", "power")
    assert len(df) == 3
    assert sorted(df["time_per_epoch_s"]) == [6.0, 8.0, 12.5]
    assert set(df["optimizer"]) == {"adadelta"}


def _replace(rows: list[str], index: int, column: int, value: str) -> list[str]:
    out = list(rows)
    fields = out[index].split(",")
    fields[column] = value
    out[index] = ",".join(fields)
    return out


TRAIN_CASES = {
    "missing_column": (
        "\n".join(
            [
                TRAIN_HEADER.replace(",run", ""),
                *[",".join(r.split(",")[:5] + r.split(",")[6:]) for r in TRAIN_ROWS],
            ]
        ),
        "missing column(s) run",
    ),
    "non_numeric": (
        "\n".join([TRAIN_HEADER, *_replace(TRAIN_ROWS, 0, 2, "big")]),
        "line 2, column 'batch_size': not a number",
    ),
    "fractional_batch": (
        "\n".join([TRAIN_HEADER, *_replace(TRAIN_ROWS, 1, 2, "12.5")]),
        "line 3, column 'batch_size': must be an integer",
    ),
    "negative_epoch": (
        "\n".join([TRAIN_HEADER, *_replace(TRAIN_ROWS, 0, 7, "-3")]),
        "line 2, column 'target_epoch'",
    ),
    "infinite_lr": (
        "\n".join([TRAIN_HEADER, *_replace(TRAIN_ROWS, 2, 4, "inf")]),
        "line 4, column 'learning_rate': non-finite",
    ),
    "truncated": (
        "\n".join([TRAIN_HEADER, TRAIN_ROWS[0], "cifar100,shufflenetv2,128"]),
        "line 3: truncated row",
    ),
    "conflicting_duplicate": (
        "\n".join([TRAIN_HEADER, *TRAIN_ROWS, TRAIN_ROWS[0][:-2] + "25"]),
        "line 5: conflicting duplicate of line 2",
    ),
    "empty": ("", "empty file"),
    "header_only": (TRAIN_HEADER + "\n", "no data rows"),
}

POWER_CASES = {
    "zero_power": (
        "\n".join([POWER_HEADER, *_replace(POWER_ROWS, 1, 6, "0")]),
        "line 3, column 'average_power': must be > 0",
    ),
    "negative_limit": (
        "\n".join([POWER_HEADER, *_replace(POWER_ROWS, 0, 4, "-100")]),
        "line 2, column 'power_limit': must be > 0",
    ),
    "zero_time": (
        "\n".join([POWER_HEADER, *_replace(POWER_ROWS, 2, 5, "0.0")]),
        "line 4, column 'time_per_epoch': must be > 0",
    ),
    "nan_power": (
        "\n".join([POWER_HEADER, *_replace(POWER_ROWS, 0, 6, "nan")]),
        "line 2, column 'average_power': non-finite",
    ),
    "conflicting_measurement": (
        "\n".join([POWER_HEADER, *POWER_ROWS, POWER_ROWS[1].replace("8.0", "9.0")]),
        "conflicting duplicate of line 3 (differs in time_per_epoch)",
    ),
    "too_many_fields": ("\n".join([POWER_HEADER, POWER_ROWS[0] + ",1,2"]), "line 2: 9 fields, header has 7"),
}


@pytest.mark.parametrize("case", sorted(TRAIN_CASES))
def test_train_refusals(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    content, message = TRAIN_CASES[case]
    src = write_traces(tmp_path / "src", train=content)
    out = tmp_path / "out"
    code, err = run_import(src, out, capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "summary_train.csv" in lines[0] and message in lines[0]
    assert not out.exists()


@pytest.mark.parametrize("case", sorted(POWER_CASES))
def test_power_refusals(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    content, message = POWER_CASES[case]
    src = write_traces(tmp_path / "src", power=content)
    out = tmp_path / "out"
    out.mkdir()
    code, err = run_import(src, out, capsys)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "summary_power_v100.csv" in err and message in err
    assert list(out.iterdir()) == []


def test_binary_file_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = write_traces(tmp_path / "src", power=b"PK\x03\x04\x00\x00binary\xff\xfe")
    code, err = run_import(src, tmp_path / "out", capsys)
    assert code == 2 and "binary file" in err and not (tmp_path / "out").exists()


def test_non_utf8_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = write_traces(tmp_path / "src", power=(POWER_HEADER + "\ncaf\xe9,x,1,a,1,1,1\n").encode("latin-1"))
    code, err = run_import(src, tmp_path / "out", capsys)
    assert code == 2 and "non-UTF-8" in err


def test_missing_folder_and_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_import(tmp_path / "nope", tmp_path / "out", capsys)
    assert code == 2 and "not a folder" in err
    (tmp_path / "only-train").mkdir()
    (tmp_path / "only-train" / "summary_train.csv").write_text(TRAIN_HEADER + "\n" + TRAIN_ROWS[0] + "\n")
    code, err = run_import(tmp_path / "only-train", tmp_path / "out", capsys)
    assert code == 2 and "no summary_power_<gpu>.csv" in err


def test_failed_import_keeps_previous_outputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = write_traces(tmp_path / "src")
    out = tmp_path / "out"
    assert run_import(src, out, capsys)[0] == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    write_traces(src, power="\n".join([POWER_HEADER, *_replace(POWER_ROWS, 0, 6, "-1")]))
    code, err = run_import(src, out, capsys, "--force")
    assert code == 2 and "average_power" in err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_validate_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = write_traces(tmp_path / "src")
    import_zeus(src, tmp_path / "out")
    code = main(
        ["traces", "validate", str(src / "summary_train.csv"), str(tmp_path / "out" / "power-v100.parquet")]
    )
    out = capsys.readouterr().out
    assert code == 0 and "Zeus train trace, 3 rows" in out and "power table, 3 rows" in out
    bad = tmp_path / "bad"
    write_traces(bad, power="\n".join([POWER_HEADER, *_replace(POWER_ROWS, 0, 2, "1.5")]))
    code = main(["traces", "validate", str(bad / "summary_power_v100.csv")])
    assert code == 2 and "must be an integer" in capsys.readouterr().err
    (tmp_path / "x.parquet").write_bytes(b"not parquet")
    assert main(["traces", "validate", str(tmp_path / "x.parquet")]) == 2
    assert "not a readable Parquet file" in capsys.readouterr().err


def test_published_traces_import(zeus_csv_dir: Path, tmp_path: Path) -> None:
    shutil.copytree(zeus_csv_dir, tmp_path / "src")
    written = import_zeus(tmp_path / "src", tmp_path / "out")
    assert sorted(p.name for p in written) == ["power-a40.parquet", "power-v100.parquet", "train.parquet"]
    train = read_table(tmp_path / "out" / "train.parquet", "train")
    raw = pd.read_csv(zeus_csv_dir / "summary_train.csv")
    assert len(train) == len(raw)
    assert train["target_epoch"].isna().sum() == raw["target_epoch"].isna().sum()
