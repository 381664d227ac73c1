"""workflows/scripts/warm.py: the workflow's steps forked from one process that imported once, as new processes would run them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from workflow_helpers import script_module

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "workflows" / "scripts" / "warm.py"

pytestmark = pytest.mark.skipif(
    sys.platform != "linux", reason="the warm server runs on Linux (fork, Unix sockets)"
)


@pytest.fixture(scope="module")
def warm():
    """The script as a module."""
    with script_module(SCRIPT) as module:
        yield module


# A step that shows what a new process would see and do: its words, folder, a variable, its first
# search path, its buffering (stdout block-buffered into a pipe, stderr line-buffered: the order in
# which the two reach one pipe), its standard input, and its exit status.
STEP = """\
import os, sys
print("argv", sys.argv[1:], "cwd", os.getcwd(), "var", os.environ.get("STEP_VAR"))
print("path0", sys.path[0], "main", __name__)
print("err first", file=sys.stderr)
print("stdin", sys.stdin.read().strip())
if sys.argv[1:2] == ["fail"]:
    raise ValueError("the step's own error")
if sys.argv[1:2] == ["message"]:
    sys.exit("a message")
sys.exit(int(sys.argv[1]) if sys.argv[1:] else 0)
"""

SLEEPER = """\
import sys, time
try:  # (a signal sent once "started" is read lands inside the try)
    print("started", flush=True)
    time.sleep(60)
except KeyboardInterrupt:
    print("interrupted", file=sys.stderr, flush=True)
    raise
"""


@pytest.fixture
def server(tmp_path):
    """A warm server (preloading json) on a socket in a folder of its own; its process and socket path."""
    path = tmp_path / "srv" / "socket"  # a folder the server makes
    env = {k: v for k, v in os.environ.items() if k != "ZB_WARM_SOCKET"}
    err = (tmp_path / "server.err").open("w")
    proc = subprocess.Popen(
        [sys.executable, str(SCRIPT), "serve", "--socket", str(path), "--preload", "json", "no_such_module"],
        env=env, stdout=err, stderr=err, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 30
    while not path.exists():
        assert proc.poll() is None, (tmp_path / "server.err").read_text()
        assert time.monotonic() < deadline, "the server never listened"
        time.sleep(0.02)
    yield proc, path
    if proc.poll() is None:
        proc.terminate()
        proc.wait(timeout=30)
    err.close()


def _run(argv, cwd, socket_path=None, stdin="", extra=None, **kw):
    """``warm.py run ARGV`` (with the server's socket, or without one: a cold start), both streams into one pipe."""
    env = {k: v for k, v in os.environ.items() if k != "ZB_WARM_SOCKET"}
    env["STEP_VAR"] = "seen"
    env["PATH"] = (
        f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # zeus-bench, as the workflow's prefix puts it
    )
    env.update(extra or {})
    if socket_path is not None:
        env["ZB_WARM_SOCKET"] = str(socket_path)
    return subprocess.run(
        [sys.executable, str(SCRIPT), "run", *argv], cwd=cwd, env=env, input=stdin, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, timeout=60, **kw,
    )  # fmt: skip


@pytest.mark.parametrize("args", [[], ["3"], ["fail"], ["message"]])
def test_a_warm_step_does_what_a_new_process_does(server, tmp_path, args):
    proc, path = server
    script = tmp_path / "step.py"
    script.write_text(STEP)
    work = tmp_path / "work"
    work.mkdir()
    cold = _run(["python", str(script), *args], work, stdin="fed")
    hot = _run(["python", str(script), *args], work, path, stdin="fed")
    assert hot.returncode == cold.returncode == {(): 0, ("3",): 3, ("fail",): 1, ("message",): 1}[tuple(args)]
    assert hot.stdout == cold.stdout  # the same bytes, in the same order (buffering as a new process's)
    assert f"path0 {tmp_path}" in hot.stdout and "main __main__" in hot.stdout and "stdin fed" in hot.stdout
    if args == ["fail"]:
        assert (
            "ValueError: the step's own error" in hot.stdout and "warm.py" not in hot.stdout
        )  # no server frames
    proc.terminate()
    proc.wait(timeout=30)
    assert "1 steps started warm, 0 sent back" in (tmp_path / "server.err").read_text()


def test_module_and_console_steps_run_warm_as_they_run_cold(server, tmp_path):
    proc, path = server
    for argv, stdin in ((["python", "-m", "json.tool"], '{"b": [1, 2]}'), (["zeus-bench", "--version"], "")):
        cold = _run(argv, tmp_path, stdin=stdin)
        hot = _run(argv, tmp_path, path, stdin=stdin)
        assert (hot.returncode, hot.stdout) == (cold.returncode, cold.stdout)
        assert hot.returncode == 0 and hot.stdout
    proc.terminate()
    proc.wait(timeout=30)
    assert "2 steps started warm, 0 sent back" in (tmp_path / "server.err").read_text()


def test_a_step_whose_start_up_differs_starts_as_a_new_process(server, tmp_path):
    proc, path = server
    script = tmp_path / "step.py"
    script.write_text(STEP)
    cold = _run(["python", str(script)], tmp_path)
    for extra in ({"PYTHONHASHSEED": "7"}, {"OMP_NUM_THREADS": "3"}, {"MPLBACKEND": "pdf"}):
        hot = _run(["python", str(script)], tmp_path, path, extra=extra)
        assert (hot.returncode, hot.stdout) == (cold.returncode, cold.stdout)
    for argv in (
        ["python", "-c", "print('c')"],
        ["python", "-X", "utf8", str(script)],
        ["not-a-command-here"],
    ):
        out = _run(argv, tmp_path, path)
        assert out.returncode == (127 if argv[0] == "not-a-command-here" else 0), out.stdout
    proc.terminate()
    proc.wait(timeout=30)
    said = (tmp_path / "server.err").read_text()
    assert (
        "start-up variables differ: PYTHONHASHSEED" in said
        and "OMP_NUM_THREADS" in said
        and "MPLBACKEND" in said
    )
    assert "0 steps started warm, 3 sent back" in said  # -c, -X and an unknown command never reach it


def test_no_server_or_a_gone_one_means_a_cold_start(tmp_path):
    script = tmp_path / "step.py"
    script.write_text(STEP)
    cold = _run(["python", str(script), "3"], tmp_path)
    gone = _run(["python", str(script), "3"], tmp_path, tmp_path / "no-socket")
    assert (gone.returncode, gone.stdout) == (cold.returncode, cold.stdout) == (3, cold.stdout)


def _sleeping_step(socket_path: Path, folder: Path) -> subprocess.Popen[str]:
    """A client whose warm step (:data:`SLEEPER`) has started (both its streams piped)."""
    script = folder / "sleep.py"
    script.write_text(SLEEPER)
    env = {k: v for k, v in os.environ.items() if k != "ZB_WARM_SOCKET"}
    env["ZB_WARM_SOCKET"] = str(socket_path)
    client = subprocess.Popen(
        [sys.executable, str(SCRIPT), "run", "python", str(script)], env=env, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert client.stdout is not None and client.stdout.readline().strip() == "started"
    return client


@pytest.mark.parametrize(("sig", "status"), [(signal.SIGTERM, 128 + 15), (signal.SIGINT, 130)])
def test_a_signal_to_the_client_reaches_its_step(server, tmp_path, sig, status):
    _proc, path = server
    client = _sleeping_step(path, tmp_path)
    started = time.monotonic()
    client.send_signal(sig)
    _out, err = client.communicate(timeout=30)
    assert client.returncode == status and time.monotonic() - started < 20
    assert ("interrupted" in err) == (sig == signal.SIGINT)  # SIGINT: the step's KeyboardInterrupt


def test_stopping_the_server_ends_its_steps_and_removes_its_socket(server, tmp_path):
    proc, path = server
    client = _sleeping_step(path, tmp_path)
    proc.send_signal(signal.SIGINT)  # a Ctrl-C is the steps' own: the server stays
    time.sleep(0.3)
    assert proc.poll() is None
    proc.terminate()
    assert proc.wait(timeout=30) == 0
    assert client.wait(timeout=30) == 128 + signal.SIGTERM
    assert not path.exists() and not path.parent.exists()  # the folder made for the socket, gone


def test_a_folder_that_was_there_stays_when_the_server_leaves(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "keep.txt").write_text("a user's file")
    empty = tmp_path / "empty"
    empty.mkdir()
    for place in (folder, empty):
        proc = subprocess.Popen([sys.executable, str(SCRIPT), "serve", "--socket", str(place / "socket")])
        deadline = time.monotonic() + 30
        while not (place / "socket").exists():
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.02)
        proc.terminate()
        assert proc.wait(timeout=30) == 0
        assert not (place / "socket").exists()
    assert (
        folder / "keep.txt"
    ).read_text() == "a user's file" and empty.is_dir()  # not the server's to remove


def test_the_server_leaves_when_its_parent_is_gone(tmp_path):
    path = tmp_path / "srv" / "socket"
    code = (
        "import subprocess, sys, os\n"
        f"p = subprocess.Popen([sys.executable, {str(SCRIPT)!r}, 'serve', '--socket', {str(path)!r}, "
        "'--parent', str(os.getpid())])\n"
        "print(p.pid, flush=True)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=True)
    pid = int(out.stdout)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        os.kill(pid, signal.SIGKILL)
        pytest.fail("the orphaned server stayed")
    assert not path.parent.exists()


def test_plan_and_refusal(warm, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    script = tmp_path / "s.py"
    script.write_text("")
    assert warm.plan(["python", "-m", "analysis.figures", "x"]) == warm.Step(
        "module", "analysis.figures", ("x",)
    )
    assert warm.plan(["python", str(script), "a"]) == warm.Step("script", str(script), ("a",))
    assert warm.plan(["zeus-bench", "arena"]).kind == "console"
    for argv in (
        [],
        ["python"],
        ["python", "-c", "1"],
        ["python", "-u", str(script)],
        ["python", "missing.py"],
        ["ls"],
    ):
        assert warm.plan(argv) is None, argv
    env = {"PYTHONPATH": "a", "HOME": "/h", "OMP_NUM_THREADS": "1"}
    ok = {
        "kind": "module",
        "executable": sys.executable,
        "prefix": sys.prefix,
        "env": {**env, "HOME": "/other", "SOURCE_DATE_EPOCH": "0"},
    }
    assert warm.refusal(ok, env) is None  # variables read at run time may differ
    assert "another interpreter" in warm.refusal({**ok, "executable": "/usr/bin/python0"}, env)
    assert "another interpreter" in warm.refusal({**ok, "prefix": str(tmp_path)}, env)  # another venv
    # the same venv reached through a link (a clone's .venv linked to a checkout's): the same interpreter
    (tmp_path / "venv").symlink_to(sys.prefix)
    inside = Path(sys.executable).relative_to(sys.prefix)  # (the tests run in a venv: bin/python)
    through = {**ok, "executable": str(tmp_path / "venv" / inside), "prefix": str(tmp_path / "venv")}
    assert warm.refusal(through, env) is None
    assert "OMP_NUM_THREADS" in warm.refusal(
        {**ok, "env": {"PYTHONPATH": "a"}}, env
    )  # one the server has, missing
    assert "PYTHONPATH" in warm.refusal({**ok, "env": {**env, "PYTHONPATH": "b"}}, env)
    assert warm.refusal({**ok, "kind": "other"}, env) == "unknown kind"


def test_the_client_imports_none_of_the_servers_modules(tmp_path: Path) -> None:
    """``run`` is paid for by every step: it loads only what it needs (the server's modules, and
    dataclasses' inspect, cost it about 10 ms of its 25-34 ms)."""
    code = (
        "import json, subprocess, sys\n"
        "before = set(sys.modules)\n"
        f"sys.argv = [{str(SCRIPT)!r}, 'run', 'true']\n"
        "import importlib.util\n"
        f"spec = importlib.util.spec_from_file_location('warm_client', {str(SCRIPT)!r})\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(module)\n"
        "step = module.plan(['python', '-m', 'analysis.figures'])\n"
        "new = sorted(set(sys.modules) - before)\n"
        "print(json.dumps(new))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "ZB_WARM_SOCKET"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    loaded = set(json.loads(out.stdout))
    server_side = {"argparse", "dataclasses", "inspect", "runpy", "selectors", "tempfile", "threading"}
    assert not loaded & server_side, sorted(loaded & server_side)
    assert "socket" in loaded  # what it does need: the check sees the script's imports


def _preloading(tmp_path: Path, source: str) -> tuple[Path, dict[str, str], list[str], Path]:
    """A server preloading module ``preloaded`` (``source``) from ``tmp_path``: socket, environment, command, probe.

    The probe step prints whether ``preloaded`` is loaded in it (forked from the server: True).
    """
    (tmp_path / "preloaded.py").write_text(source)
    probe = tmp_path / "probe.py"
    probe.write_text("import sys\nprint('preloaded' in sys.modules)\n")
    env = {k: v for k, v in os.environ.items() if k != "ZB_WARM_SOCKET"}
    env["PYTHONPATH"] = str(tmp_path)
    path = tmp_path / "srv" / "socket"
    return (
        path,
        env,
        [sys.executable, str(SCRIPT), "serve", "--socket", str(path), "--preload", "preloaded"],
        probe,
    )


def _listening(proc: subprocess.Popen, path: Path, since: float) -> float:  # type: ignore[type-arg]
    """Seconds from ``since`` until the server ``proc`` has its socket ``path``."""
    while not path.exists():
        assert proc.poll() is None and time.monotonic() - since < 30
        time.sleep(0.01)
    return time.monotonic() - since


def test_a_step_sent_while_the_server_imports_waits_and_runs_warm(tmp_path):
    # A preloaded module that takes a second to import: the socket is there before it is done.
    path, env, command, probe = _preloading(tmp_path, "import time\ntime.sleep(1.0)\n")
    err = (tmp_path / "server.err").open("w")
    started = time.monotonic()
    proc = subprocess.Popen(command, env=env, stdout=err, stderr=err, stdin=subprocess.DEVNULL)
    listening = _listening(proc, path, started)
    hot = _run(["python", str(probe)], tmp_path, path, extra=env)
    waited = time.monotonic() - started
    proc.terminate()
    assert proc.wait(timeout=30) == 0
    err.close()
    assert listening < 0.9 < waited  # listening at once; the step waited for the imports
    assert hot.returncode == 0 and hot.stdout.strip() == "True"  # forked from the server: already imported
    assert "1 steps started warm, 0 sent back" in (tmp_path / "server.err").read_text()
    assert not path.parent.exists()


def test_a_server_stopped_while_it_imports_sends_its_waiting_step_back_and_cleans_up(tmp_path):
    path, env, command, probe = _preloading(tmp_path, "import time\ntime.sleep(1.5)\n")
    proc = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL)
    _listening(proc, path, time.monotonic())
    client = subprocess.Popen(
        [sys.executable, str(SCRIPT), "run", "python", str(probe)],
        env={**env, "ZB_WARM_SOCKET": str(path)}, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    time.sleep(0.3)  # the client waits in the backlog
    proc.terminate()  # during the imports: kept until they are done
    assert proc.wait(timeout=30) == 0
    out, _ = client.communicate(timeout=30)
    assert client.returncode == 0 and out.strip() == "False"  # sent back: a new process, nothing preloaded
    assert not path.parent.exists()


def test_a_server_whose_preload_fails_leaves_no_socket_behind(tmp_path):
    # (It listens before it imports: a module that raises while imported must not leave the socket.)
    path, env, command, _ = _preloading(tmp_path, "raise RuntimeError('broken at import')\n")
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "broken at import" in done.stderr
    assert not path.exists() and not path.parent.exists()
