"""Warm starts for the workflow's Python steps: one process imports once, each step is a fork of it.

Every step of ``make reproduce`` is a new Python process that imports numpy, pandas, pyarrow and
(for the figures) matplotlib before it does its work: 0.5-0.8 s of CPU each, about 20 s over a
run's 35 steps on two cores. A *warm server* imports them once; a step sent to it runs in a
process forked from it, with the step's own command line, working folder, environment and
standard streams, so it does what a fresh process would and writes the same bytes (a preforking
server, as Ruby's Spring and Python's ``multiprocessing`` forkserver do).

Usage (the workflow's hooks start and stop the server; its shell prefix routes the steps)::

    python warm.py serve --socket PATH [--parent PID] [--preload MODULE ...]
    python warm.py run zeus-bench ARGS...          # or: python warm.py run python -m MODULE ARGS...
                                                   #     python warm.py run python SCRIPT ARGS...

``run`` sends the step to the server named by ``$ZB_WARM_SOCKET`` and exits with its status; it
runs the step itself, as a new process (``exec``), whenever the server cannot run it as a fresh
process would: no server (not started, stopped, another machine), another interpreter, a
start-up setting that differs from the server's (``PYTHON*``, ``MPL*``, thread-pool, locale and
time-zone variables: :data:`STARTUP_ENV`), or an interpreter option (``python -X ...``).
Signals the client receives (SIGINT, SIGTERM, SIGHUP, SIGQUIT) are passed on to the step.

The server leaves when told (SIGTERM, SIGINT does not stop it: a Ctrl-C reaches the steps
themselves) or when its parent process (Snakemake) is gone; it then ends the steps still running,
waits for them and removes its socket, and the socket's folder if it made that folder (it makes
it, private, when it is not there; a folder that was there stays). Each step is reaped by the
server (``wait4``), so its CPU time counts among the server's children and, once Snakemake has
waited for the server, among Snakemake's.

Only the standard library is imported until ``serve`` preloads its modules, and ``run`` imports
only the few modules it needs: it takes about 7 ms of CPU more than an interpreter that does
nothing (25 ms against 18 ms in a venv with the project installed editable; 34 ms when it
imported the server's modules too).
"""

from __future__ import annotations

# The client (``run``) imports only what a new interpreter has loaded anyway and what it needs:
# the server's and the steps' modules (argparse, runpy, selectors, tempfile, threading) are
# imported where they are used, which ``run`` never reaches.
import collections
import contextlib
import importlib
import io
import json
import os
import signal
import socket
import struct
import sys

TYPE_CHECKING = False  # (typing itself is not imported: 8 ms)
if TYPE_CHECKING:
    import selectors
    from collections.abc import Sequence

SOCKET_ENV = "ZB_WARM_SOCKET"
"""The environment variable that names the server's socket (set by the workflow's start hook)."""

STARTUP_ENV = (
    "PYTHON", "MPL", "OPENBLAS", "OMP_", "MKL_", "GOTO", "VECLIB", "NUMEXPR", "ARROW", "NUMPY", "PANDAS",
    "LC_", "LANG", "TZ", "ZB_TIMELINE",
)  # fmt: skip
"""Prefixes of the environment variables read while the interpreter and the preloaded modules
start: a step whose value of one differs from the server's (or that lacks one the server has, or
has one it lacks) runs as a new process."""

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
"""The signals ``run`` passes on to its step."""

_HEADER = struct.Struct("!I")  # the request's length, sent with the step's standard streams
_MAX_REQUEST = 16 * 1024 * 1024  # bytes: a command line and an environment, far below
_STEP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD, signal.SIGQUIT)  # default in a step


class Step(collections.namedtuple("Step", "kind target args")):
    """What a step runs: ``kind`` ``console`` (the ``zeus-bench`` command), ``module`` (``python -m``) or ``script``.

    ``target`` is the module's name or the script's path (the console command's path for
    ``console``); ``args`` the words after it (a tuple). (Not a dataclass: ``dataclasses`` costs
    the client some 6 ms of imports.)
    """

    __slots__ = ()


def plan(argv: Sequence[str]) -> Step | None:
    """The :class:`Step` of a command line, or None for one a warm start does not run as it would.

    ``zeus-bench ARGS`` (found on ``PATH``), ``python -m MODULE ARGS`` and ``python SCRIPT ARGS``
    are warm; any interpreter option, ``-c``, ``-`` or a missing script are not.
    """
    import shutil

    if not argv:
        return None
    head, rest = argv[0], list(argv[1:])
    if head == "zeus-bench":
        path = shutil.which(head)
        return Step("console", path, tuple(rest)) if path else None
    if os.path.basename(head) not in ("python", "python3") or not rest:
        return None
    if rest[0] == "-m" and len(rest) >= 2 and not rest[1].startswith("-"):
        return Step("module", rest[1], tuple(rest[2:]))
    if rest[0].startswith("-") or not os.path.isfile(rest[0]):
        return None
    return Step("script", rest[0], tuple(rest[1:]))


def startup_env(env: dict[str, str]) -> dict[str, str]:
    """The variables of ``env`` that the interpreter and the preloaded modules read as they start (:data:`STARTUP_ENV`)."""
    return {k: v for k, v in env.items() if k.startswith(STARTUP_ENV)}


# ---------------------------------------------------------------- the client


def _exec(argv: Sequence[str]) -> None:
    """Run ``argv`` in place of this process (a cold start): ``python`` is this interpreter."""
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        if os.path.basename(argv[0]) in ("python", "python3"):
            os.execv(sys.executable, [sys.executable, *argv[1:]])
        os.execvp(argv[0], list(argv))
    except OSError as exc:
        print(f"warm.py: {argv[0]}: {exc.strerror or exc}", file=sys.stderr)
        sys.exit(127)


def _request(step: Step) -> bytes:
    return json.dumps(
        {
            "kind": step.kind,
            "target": step.target,
            "args": list(step.args),
            "cwd": os.getcwd(),
            "env": dict(os.environ),
            "executable": sys.executable,
            "prefix": sys.prefix,
            "ignored": [int(sig) for sig in SIGNALS if signal.getsignal(sig) == signal.SIG_IGN],
        }
    ).encode()


def _send(sock: socket.socket, payload: bytes) -> None:
    socket.send_fds(sock, [_HEADER.pack(len(payload))], [0, 1, 2])
    sock.sendall(payload)


class _Replies:
    """The server's reply lines on one connection (``pid N``, ``exit N``, ``refused WHY``)."""

    def __init__(self, sock: socket.socket) -> None:
        self._file = sock.makefile("rb")

    def next(self) -> tuple[str, str] | None:
        """The next reply (word, rest), or None when the server closed the connection."""
        line = self._file.readline()  # (a signal handled meanwhile: the read goes on, PEP 475)
        if not line:
            return None
        word, _, rest = line.decode().strip().partition(" ")
        return word, rest


def run_client(argv: Sequence[str]) -> int:
    """Run one step warm (its exit status), or in place of this process when it cannot be (no return)."""
    where = os.environ.get(SOCKET_ENV, "")
    step = plan(argv)
    if step is None or not where:
        _exec(argv)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(where)
        _send(sock, _request(step))  # type: ignore[arg-type]
        replies = _Replies(sock)
        first = replies.next()
    except OSError:
        first = None
    if first is None or first[0] != "pid":  # refused, or no server: a cold start
        sock.close()
        _exec(argv)
    pid = int(first[1])  # type: ignore[index]

    def forward(signum: int, _frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signum)

    # (a signal ignored here, as a background job's SIGINT is, the step ignores too: not forwarded)
    for sig in SIGNALS:
        if signal.getsignal(sig) != signal.SIG_IGN:
            signal.signal(sig, forward)
    reply = replies.next()
    if reply is None or reply[0] != "exit":
        print(f"warm.py: the warm server ended before step {pid} did: {' '.join(argv)}", file=sys.stderr)
        return 1
    code = int(reply[1])
    return 128 - code if code < 0 else code  # killed by signal s: 128 + s, as a shell reports it


# ---------------------------------------------------------------- the step, in a forked process


def _fresh_streams() -> None:
    """Standard streams on file descriptors 0-2 as a new interpreter makes them (buffering by what they are)."""
    for name, fd in (("stdin", 0), ("stdout", 1), ("stderr", 2)):
        old = getattr(sys, name)
        encoding = getattr(old, "encoding", None) or "utf-8"
        errors = getattr(old, "errors", None) or "strict"
        try:
            if fd == 0:
                stdin = open(0, "rb", closefd=False)  # noqa: SIM115  (open while the step runs)
                stream = io.TextIOWrapper(stdin, encoding=encoding, errors=errors)
            else:
                # stderr is line-buffered in every new interpreter (3.9+), stdout on a terminal
                # only; with -u or PYTHONUNBUFFERED neither is buffered
                unbuffered = bool(getattr(old, "write_through", False))  # as the server's own started
                line = not unbuffered and (fd == 2 or os.isatty(fd))
                raw = open(fd, "wb", buffering=0 if unbuffered else -1, closefd=False)  # noqa: SIM115
                stream = io.TextIOWrapper(
                    raw, encoding=encoding, errors=errors, line_buffering=line, write_through=unbuffered
                )
        except OSError:
            stream = None  # a closed descriptor, as a new interpreter leaves it
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def _exit_code(exc: SystemExit) -> int:
    """The status a new interpreter exits with on ``exc`` (None 0, an int itself, else printed and 1)."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)
    return 1


def _run_step(request: dict[str, object]) -> int:
    """Run the step of ``request`` in this (forked) process as a new interpreter would; its exit status."""
    import runpy
    import tempfile

    step = Step(str(request["kind"]), str(request["target"]), tuple(request["args"]))  # type: ignore[arg-type]
    env = request["env"]
    os.environ.clear()
    os.environ.update(env)  # type: ignore[arg-type]
    os.chdir(str(request["cwd"]))
    tempfile.tempdir = None  # found again from the step's TMPDIR, as a new process finds it
    cwd = os.getcwd()
    if step.kind == "module":
        sys.path[0] = cwd
        sys.argv = ["-m", *step.args]  # runpy puts the module's path first
        orig = [sys.executable, "-m", step.target, *step.args]
    else:
        sys.path[0] = os.path.dirname(os.path.realpath(step.target))
        sys.argv = [step.target, *step.args]
        orig = [sys.executable, step.target, *step.args]
    sys.orig_argv = orig
    try:
        if step.kind == "module":
            runpy.run_module(step.target, run_name="__main__", alter_sys=True)
        elif step.kind == "console":
            from zeus_bench.cli.main import run

            run()
        else:
            runpy.run_path(step.target, run_name="__main__")
        return 0
    except SystemExit as exc:
        return _exit_code(exc)
    except KeyboardInterrupt as exc:
        _print_uncaught(exc)
        return 128 + signal.SIGINT
    except BaseException as exc:
        _print_uncaught(exc)
        return 1


def _print_uncaught(exc: BaseException) -> None:
    """``sys.excepthook`` of an exception the step left, its traceback without this file's and runpy's frames."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename in (__file__, "<frozen runpy>"):
        tb = tb.tb_next
    sys.excepthook(type(exc), exc.with_traceback(tb), tb)


def _finish(code: int) -> None:
    """End a step as a new interpreter ends: its threads joined, its exit handlers run, its streams flushed."""
    import atexit
    import threading

    with contextlib.suppress(Exception):  # a step that left a broken thread still ends
        threading._shutdown()  # type: ignore[attr-defined]  # what the interpreter does at exit, first
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code & 0xFF)


def _step_process(
    conn: socket.socket, fds: list[int], request: dict[str, object], closing: Sequence[int]
) -> None:
    """In the forked process: the server's sockets closed, the step's streams and signals set, the step run."""
    signal.set_wakeup_fd(-1)
    for fd in closing:
        os.close(fd)
    conn.close()
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    for sig in _STEP_SIGNALS:
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for sig in request.get("ignored") or ():  # type: ignore[attr-defined]
        signal.signal(sig, signal.SIG_IGN)  # as a new interpreter started with it ignored keeps it
    _fresh_streams()
    code = 1
    try:
        code = _run_step(request)
    finally:
        _finish(code)


# ---------------------------------------------------------------- the server


def _recv_request(conn: socket.socket) -> tuple[list[int], dict[str, object]]:
    """A step's standard streams and its request (raises OSError or ValueError on a bad one)."""
    conn.settimeout(10.0)
    data, fds, _flags, _addr = socket.recv_fds(conn, _HEADER.size, 3)
    while len(data) < _HEADER.size:
        more = conn.recv(_HEADER.size - len(data))
        if not more:
            raise ValueError("short header")
        data += more
    if len(fds) != 3:
        for fd in fds:
            os.close(fd)
        raise ValueError("a request comes with its three standard streams")
    (size,) = _HEADER.unpack(data)
    if size > _MAX_REQUEST:
        raise ValueError("request too large")
    body = bytearray()
    while len(body) < size:
        more = conn.recv(size - len(body))
        if not more:
            raise ValueError("short request")
        body += more
    conn.settimeout(None)
    return list(fds), json.loads(bytes(body))


def _interpreter(executable: object, prefix: object) -> tuple[str, str]:
    """An interpreter and its environment, through links (a venv reached by a link is the same venv).

    The prefix tells two venvs apart whose interpreters link to one base interpreter.
    """
    return os.path.realpath(str(executable)), os.path.realpath(str(prefix))


def refusal(request: dict[str, object], server_env: dict[str, str]) -> str | None:
    """Why the server would not run ``request`` as a new process would (None: it would).

    Another interpreter or environment (compared through links), or a start-up variable
    (:data:`STARTUP_ENV`) that differs from the server's.
    """
    if _interpreter(request.get("executable"), request.get("prefix")) != _interpreter(
        sys.executable, sys.prefix
    ):
        return f"another interpreter ({request.get('executable')})"
    theirs = startup_env(dict(request.get("env") or {}))  # type: ignore[call-overload]
    ours = startup_env(server_env)
    if theirs != ours:
        names = sorted(k for k in theirs.keys() | ours.keys() if theirs.get(k) != ours.get(k))
        return f"start-up variables differ: {', '.join(names)}"
    if request.get("kind") not in ("console", "module", "script"):
        return "unknown kind"
    return None


class Server:
    """The warm server on ``path``: forks a process per step; see the module's docstring."""

    def __init__(self, path: str, parent: int | None) -> None:
        """Listen on ``path`` (a Unix socket) for the steps; ``parent``: leave when that process is gone."""
        self.path = path
        self.parent = parent
        self.env = dict(os.environ)
        self.steps: dict[int, socket.socket] = {}
        self.stopping = False
        self.said: set[str] = set()
        self.counts = {"warm": 0, "refused": 0}
        folder = os.path.dirname(os.path.abspath(path))
        self.made_folder = not os.path.isdir(folder)
        if self.made_folder:
            os.mkdir(folder, 0o700)  # fails if another process made it meanwhile: then it is not ours
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(64)
        self.listener.setblocking(False)
        self._selector: selectors.BaseSelector | None = None
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)

    def _on_signal(self, signum: int, _frame: object) -> None:
        if signum == signal.SIGTERM:
            self.stopping = True

    def serve(self) -> None:
        """Run steps until told to stop or orphaned; then end the steps left and clean up."""
        signal.set_wakeup_fd(self._wake_w)
        signal.signal(signal.SIGCHLD, self._on_signal)
        signal.signal(signal.SIGTERM, self._on_signal)
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is the steps' to act on
        import selectors

        sel = self._selector = selectors.DefaultSelector()
        sel.register(self.listener, selectors.EVENT_READ, "accept")
        sel.register(self._wake_r, selectors.EVENT_READ, "wake")
        try:
            while not self.stopping:
                for key, _ in sel.select(timeout=1.0):
                    if key.data == "accept":
                        self._accept()
                    else:
                        self._drain()
                self._reap()
                if self.parent is not None and os.getppid() != self.parent:
                    break
        finally:
            self._close(sel)

    def _drain(self) -> None:
        try:
            while os.read(self._wake_r, 512):
                pass
        except BlockingIOError:
            pass

    def _accept(self) -> None:
        try:
            conn, _ = self.listener.accept()
        except BlockingIOError:
            return
        conn.setblocking(True)
        try:
            fds, request = _recv_request(conn)
        except (OSError, ValueError):
            conn.close()
            return
        why = refusal(request, self.env)
        self.counts["warm" if why is None else "refused"] += 1
        if why is not None:
            if why not in self.said:
                self.said.add(why)
                print(f"warm.py: steps run as new processes: {why}", file=sys.stderr, flush=True)
            for fd in fds:
                os.close(fd)
            self._reply(conn, f"refused {why}")
            conn.close()
            return
        pid = os.fork()
        if pid == 0:  # the step: none of the server's descriptors stays open in it
            others = [c.detach() for c in self.steps.values()]
            self.listener.close()
            if self._selector is not None:
                self._selector.close()
            _step_process(conn, fds, request, [self._wake_r, self._wake_w, *others])
        for fd in fds:
            os.close(fd)
        self.steps[pid] = conn
        self._reply(conn, f"pid {pid}")

    @staticmethod
    def _reply(conn: socket.socket, line: str) -> None:
        with contextlib.suppress(OSError):  # the client is gone; its step still runs to its end
            conn.sendall(f"{line}\n".encode())

    def _reap(self) -> None:
        while self.steps:
            try:
                pid, status, _usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            conn = self.steps.pop(pid, None)
            if conn is not None:
                self._reply(conn, f"exit {os.waitstatus_to_exitcode(status)}")
                conn.close()

    def _close(self, sel: selectors.BaseSelector) -> None:
        """Stop listening, end the steps left (SIGTERM), wait for them, remove the socket and its folder."""
        sel.close()
        self.listener.close()
        for pid in list(self.steps):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        while self.steps:
            try:
                pid, status, _usage = os.wait4(-1, 0)
            except ChildProcessError:
                break
            conn = self.steps.pop(pid, None)
            if conn is not None:
                self._reply(conn, f"exit {os.waitstatus_to_exitcode(status)}")
                conn.close()
        remove_socket(self.path, self.made_folder)
        if sum(self.counts.values()):
            warm, cold = self.counts["warm"], self.counts["refused"]
            print(
                f"warm.py: {warm} steps started warm, {cold} sent back to start as new processes",
                file=sys.stderr,
                flush=True,
            )


def remove_socket(path: str, folder_too: bool) -> None:
    """Remove the socket ``path``; with ``folder_too`` (the server made it) its folder too, if that is empty then."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    if folder_too:
        with contextlib.suppress(OSError):
            os.rmdir(os.path.dirname(os.path.abspath(path)))


def preload(modules: Sequence[str]) -> list[str]:
    """Import ``modules`` (those missing, e.g. an optional dependency, are skipped); the names imported."""
    done = []
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError:
            continue
        done.append(name)
    return done


def serve(path: str, parent: int | None, modules: Sequence[str]) -> None:
    """Listen on ``path``, preload ``modules``, then serve.

    The socket is there from the start: a step sent while the imports run waits for them in the
    socket's backlog (about a second) instead of starting as a new process that imports them all
    again (the workflow's first steps did: 0.8 s of CPU each). A SIGTERM meanwhile is kept for the
    loop, which then leaves at once (the waiting steps start as new processes).
    """
    import gc

    server = Server(path, parent)
    signal.signal(signal.SIGTERM, server._on_signal)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # (as while serving)
    try:
        # what every step's own start and end use (_run_step, _finish), loaded once before the forks
        preload(["atexit", "runpy", "tempfile", "threading", *modules])
    except BaseException:  # a module that fails to import otherwise: nothing of the server stays behind
        server.listener.close()
        remove_socket(path, server.made_folder)
        raise
    server.env = dict(os.environ)  # the start-up the steps are compared with: after the imports
    gc.collect()
    gc.freeze()  # the steps' collections skip what every step shares (fewer pages copied)
    server.serve()


def main(argv: Sequence[str] | None = None) -> int:
    """``serve`` or ``run`` (see the module's docstring)."""
    words = list(sys.argv[1:] if argv is None else argv)
    if words and words[0] == "run":
        return run_client(words[1:])
    import argparse

    parser = argparse.ArgumentParser(prog="warm.py", description="the workflow's warm server")
    sub = parser.add_subparsers(dest="command", required=True)
    srv = sub.add_parser("serve", help="preload the modules, then run the steps sent to the socket")
    srv.add_argument("--socket", required=True, help="the Unix socket to listen on")
    srv.add_argument("--parent", type=int, help="leave when this process is gone")
    srv.add_argument("--preload", nargs="*", default=[], help="modules to import first")
    sub.add_parser("run", help="run a step on the server (the words after run)")
    args = parser.parse_args(words)
    serve(args.socket, args.parent, args.preload)
    return 0


if __name__ == "__main__":
    sys.exit(main())
