"""Every command fails cleanly: one line on stderr, exit status 2, nothing written, no traceback.

Output-path problems (read-only place, a folder where a file belongs, a file where a folder
belongs, a suffix that does not match the format), sizes beyond a sane bound (checked before any
allocation, with the bound in the message), a missing optional dependency (naming the extra to
install), a user policy that raises (naming the policy and the exception), and trace folders
that hold raw Zeus CSVs.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from zeus_bench.cli.main import main
from zeus_bench.core.entry import MAX_SEEDS

REPO = Path(__file__).resolve().parents[2]


def _one_line_exit_2(capsys: pytest.CaptureFixture[str], args: list[str], *expected: str) -> str:
    capsys.readouterr()
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for text in expected:
        assert text in err, err
    return err


@pytest.fixture
def read_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A folder nobody may write in (mode 0555; as root, where modes do not bind, access() says so)."""
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    if os.access(folder, os.W_OK):  # root ignores the mode: answer as a read-only mount would
        import zeus_bench.core.fsutil

        real = os.access

        def access(path, mode, **kw):
            if Path(path) == folder and mode & os.W_OK:
                return False
            return real(path, mode, **kw)

        monkeypatch.setattr(zeus_bench.core.fsutil.os, "access", access)
    yield folder
    folder.chmod(0o755)


def _sim(traces: Path, out: Path, *extra: str) -> list[str]:
    return ["simulate", "--traces", str(traces), "--gpu", "v100", "--workloads", "squad", "--seeds", "1",
            "--recurrences", "3", "--out", str(out), *extra]  # fmt: skip


@pytest.mark.parametrize(
    ("out_name", "message"),
    [
        ("folder", "is a folder (give a file name)"),
        ("runs.txt", "unsupported suffix '.txt' (use .parquet or .csv)"),
        ("runs", "unsupported suffix '(none)'"),
        ("a_file/runs.parquet", "a_file is a file, not a folder"),
    ],
)
def test_simulate_output_path_problems(zeus_traces, tmp_path, capsys, out_name, message):
    (tmp_path / "folder").mkdir()
    (tmp_path / "a_file").write_text("x")
    before = sorted(p.name for p in tmp_path.rglob("*"))
    _one_line_exit_2(capsys, _sim(zeus_traces, tmp_path / out_name), message)
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


def test_read_only_output_places(zeus_traces, read_only, capsys):
    _one_line_exit_2(capsys, _sim(zeus_traces, read_only / "runs.parquet"), "cannot write in", str(read_only))
    _one_line_exit_2(
        capsys,
        ["potential", "--traces", str(zeus_traces), "--gpu", "v100", "--format", "csv", "--out", str(read_only / "p.csv")],
        "permission denied or read-only",
    )  # fmt: skip
    _one_line_exit_2(
        capsys, ["traces", "import-zeus", str(read_only), "--out", str(read_only / "x")], "import folder"
    )
    assert list(read_only.iterdir()) == []


def test_output_paths_of_the_other_commands(zeus_traces, zeus_csv_dir, tmp_path, capsys):
    (tmp_path / "folder").mkdir()
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    pot = ["potential", "--traces", str(zeus_traces), "--gpu", "v100"]
    _one_line_exit_2(
        capsys,
        [*pot, "--format", "csv", "--out", str(tmp_path / "p.json")],
        "unsupported suffix '.json' (use .csv)",
    )
    _one_line_exit_2(capsys, [*pot, "--format", "json", "--out", str(tmp_path / "folder")], "is a folder")
    par = ["pareto", "--traces", str(zeus_traces), "--gpu", "v100", "--workload", "squad"]
    _one_line_exit_2(capsys, [*par, "--out", str(tmp_path / "f.xlsx")], "unsupported suffix '.xlsx'")
    _one_line_exit_2(
        capsys, ["traces", "import-zeus", str(zeus_csv_dir), "--out", str(a_file)], "is a file, not a folder"
    )
    _one_line_exit_2(
        capsys,
        ["summarize", str(tmp_path / "none.parquet"), "--out", str(tmp_path / "s.xls")],
        "unsupported suffix",
    )
    _one_line_exit_2(
        capsys, ["synth-arrivals", "--workloads", "squad", "--out", str(tmp_path / "folder")], "is a folder"
    )
    _one_line_exit_2(
        capsys,
        ["sweep-merge", str(a_file), "--out", str(tmp_path / "m.csv")],
        "unsupported suffix '.csv' (use .parquet)",
    )
    fetch = ["fetch-traces", "--file", "summary_train.csv", "--local-dir", str(zeus_csv_dir)]
    _one_line_exit_2(capsys, [*fetch, "--out", str(a_file)], "trace folder", "is a file, not a folder")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt", "folder"]
    assert list((tmp_path / "folder").iterdir()) == []
    assert a_file.read_text() == "x"  # fmt: skip


def test_sizes_beyond_the_bound_are_refused_before_any_allocation(zeus_traces, tmp_path, capsys):
    out = tmp_path / "runs.parquet"
    tracemalloc.start()
    try:
        _one_line_exit_2(capsys, [*_sim(zeus_traces, out), "--seeds", "1-1000000000"],
                         f"'1-1000000000' is 1000000000 values; at most {MAX_SEEDS} are allowed")  # fmt: skip
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 50_000_000  # refused from the bounds, not after building a billion-entry list
    _one_line_exit_2(capsys, [*_sim(zeus_traces, out), "--recurrences", "100000000000"],
                     "recurrences must be in [1, 100000], got 100000000000")  # fmt: skip
    _one_line_exit_2(capsys, ["synth-arrivals", "--workloads", "squad", "--jobs-per-group", "10000000000",
                              "--out", str(tmp_path / "a.csv")], "must be in [1, 5000000]")  # fmt: skip
    assert list(tmp_path.iterdir()) == []


def test_a_raising_user_policy_is_named(zeus_traces, tmp_path, capsys, monkeypatch):
    from zeus_bench.sim.policies import POLICIES

    # The module registers a policy in the process-wide registry: take it out again afterwards.
    monkeypatch.setattr("zeus_bench.sim.policies.base.POLICIES", dict(POLICIES))
    module = tmp_path / "raising.py"
    module.write_text(
        "from zeus_bench.sim.policies import Policy, register_policy\n\n"
        "@register_policy\n"
        "class Broken(Policy):\n"
        "    name = 'test-broken'\n"
        "    def predict(self):\n"
        "        raise ZeroDivisionError('my bug')\n"
        "    def observe(self, outcome):\n"
        "        pass\n"
    )
    out = tmp_path / "runs.parquet"
    for jobs in ("1", "2"):
        _one_line_exit_2(
            capsys,
            [*_sim(zeus_traces, out), "--policy-module", str(module), "--policies", "test-broken,baseline", "--jobs", jobs],
            "policy 'test-broken'",
            "raised ZeroDivisionError: my bug",
        )  # fmt: skip
        assert not out.exists()
    POLICIES.pop("test-broken", None)
    sys.modules.pop("zeus_bench_user_policies_raising", None)


def test_raw_csv_folder_says_to_import(zeus_csv_dir, tmp_path, capsys):
    for args in (
        ["potential", "--traces", str(zeus_csv_dir), "--gpu", "v100"],
        _sim(zeus_csv_dir, tmp_path / "r.parquet"),
    ):
        _one_line_exit_2(capsys, args, "holds the raw Zeus CSV traces", "zeus-bench traces import-zeus")


_NO_TORCH = "import sys, runpy; sys.modules['torch'] = None; sys.argv = {argv!r}; runpy.run_{how}({what!r}, run_name='__main__')"  # fmt: skip


def _without_torch(how: str, what: str, argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    code = _NO_TORCH.format(argv=argv, how=how, what=what)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def test_missing_torch_names_the_extra(tmp_path):
    sweep = _without_torch("module", "zeus_bench.cli.main",
                           ["zeus-bench", "sweep", "--workload", "squad", "--batch-sizes", "8", "--backend", "fake",
                            "--out", str(tmp_path / "s.parquet")], tmp_path)  # fmt: skip
    assert sweep.returncode == 2, sweep.stderr
    assert sweep.stderr.strip().splitlines() == [
        "zeus-bench: error: zeus-bench sweep (it trains the workloads) needs torch, which is not installed: "
        "pip install -e '.[workloads]'"
    ]
    example = _without_torch("path", str(REPO / "examples" / "train_online.py"),
                             ["train_online.py", "--state-dir", str(tmp_path / "st")], tmp_path)  # fmt: skip
    assert example.returncode == 2
    assert example.stderr.strip().splitlines() == [
        "train_online.py: error: needs PyTorch, which is not installed: pip install -e '.[workloads]'"
    ]
    assert list(tmp_path.iterdir()) == []


def test_oserror_past_the_checks_is_one_line(tmp_path, capsys, monkeypatch):
    from zeus_bench.cli import analysis

    def denied(args):
        raise PermissionError(13, "Permission denied", str(tmp_path / "x.csv"))

    monkeypatch.setattr(analysis, "_pareto", denied)
    _one_line_exit_2(capsys, ["pareto", "--traces", str(tmp_path), "--gpu", "v100", "--workload", "squad"],
                     f"zeus-bench: error: {tmp_path / 'x.csv'}: Permission denied")  # fmt: skip


def test_example_recurrences_bound(tmp_path):
    out = subprocess.run(
        [sys.executable, str(REPO / "examples" / "train_online.py"), "--state-dir", str(tmp_path / "s"),
         "--recurrences", "100000000000"],
        capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "--recurrences: must be in [1, 10000], got 100000000000" in out.stderr
    assert list(tmp_path.iterdir()) == []


def test_exit_command_exits_with_the_status_and_skips_the_final_collections() -> None:
    import gc

    from zeus_bench.core.entry import exit_command

    try:
        with pytest.raises(SystemExit) as info:
            exit_command(3)
        assert info.value.code == 3
        assert gc.get_freeze_count() > 0  # every object left is out of the collector's reach
    finally:
        gc.unfreeze()
    # In a process: atexit handlers still run and buffered output still reaches the pipe.
    code = (
        "import atexit, sys\n"
        "from zeus_bench.cli.common import exit_command\n"
        "atexit.register(lambda: print('atexit ran'))\n"
        "sys.stdout.write('buffered ')\n"
        "exit_command(2)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 2 and out.stdout == "buffered atexit ran\n"
