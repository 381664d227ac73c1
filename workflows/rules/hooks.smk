# Run hooks (Snakefile onsuccess/onerror): what the console says after a run, and a prompt exit.


def warn_if_traces_missing():
    """After a run without the Zeus traces, say so on the console (the partial report says it too)."""
    from snakemake.logging import logger

    path = Path(ZEUS_CSV_DIR, "MANIFEST.json")
    if path.exists():
        manifest = json.loads(path.read_text())
        if manifest["status"] != "ok":
            logger.warning(
                f"Zeus traces unavailable, so only the project's own traces were drawn: {manifest['message']}. "
                f"The partial report is {PARTIAL_REPORT} (lists what was skipped); results/report.md is left as it was."
            )


_STARTED = __import__("time").time()


def explain_failure():
    """After a failed run, print the error line of each rule log written by this run (zeus-bench
    and the analysis scripts end their log with one `...error: ...` line), so that the reason is on
    the console and not only in logs/."""
    from snakemake.logging import logger

    for path in sorted(Path("logs").rglob("*.log")):
        if path.stat().st_mtime < _STARTED:
            continue
        errors = [line for line in path.read_text(errors="replace").splitlines() if "error:" in line]
        if errors:
            logger.error(f"{errors[-1]}  (log: {path})")



def finish_run():
    """End the Snakemake process promptly once the run has ended (`onsuccess`/`onerror`).

    - Stop the warm server (its steps are over).
    - Cancel Snakemake's pending scheduler timers: Snakemake 9's scheduler starts a
      `threading.Timer` (not a daemon) of its job-rate window (1 s) after each scheduling round
      to look again, and at exit Python waits for the last one, about a second of idle time
      added to every run.
    - Freeze the objects left (`gc.freeze`), so that the interpreter's final collections skip
      them (about 0.2 s for Snakemake's DAG); every output is written by then.
    """
    import gc
    import threading

    stop_warm_server()
    for thread in threading.enumerate():
        if isinstance(thread, threading.Timer):
            thread.cancel()
    gc.freeze()


# The warm server (workflows/scripts/warm.py): the modules every step imports, imported once; each
# step forked from it. Off with ZEUS_BENCH_WARM=0, and wherever a step would not run on this
# machine as a local process of this environment (a cluster executor, conda or container
# deployment, a dry run).
WARM_ENV = "ZEUS_BENCH_WARM"
WARM_PRELOAD = (
    "numpy", "pandas", "pyarrow.parquet", "matplotlib.backends.backend_agg", "matplotlib.backends.backend_pdf",
    "fontTools.subset", "analysis.figures.cli", "analysis.figures.inputs", "analysis.figures.studies",
    "analysis.plots", "analysis.metrics", "zeus_bench.cli.main", "zeus_bench.cli.arena",
    "zeus_bench.studies.arena", "zeus_bench.sim.replay", "zeus_bench.sim.summarize",
)  # fmt: skip
WARM_THREAD_VARS = (
    "OMP_NUM_THREADS", "GOTO_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)  # fmt: skip
_WARM = {}
WARM_LISTEN_WAIT_S = 5.0  # the most the run waits for the warm server to listen (it takes about 0.05 s)


def _warm_wanted():
    """ZEUS_BENCH_WARM: unset, 1, true, yes or on start the warm server; 0, false, no or off do not.

    Anything else is a typo: one line and exit status 2, before anything runs.
    """
    value = os.environ.get(WARM_ENV, "1").strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    from zeus_bench.core.errors import ConfigError

    raise ConfigError(f"${WARM_ENV}: expected 1 or 0 (true/false, yes/no, on/off), got {os.environ[WARM_ENV]!r}")


with exit_on_error():
    WARM_WANTED = _warm_wanted()


def start_warm_server():
    """Start the warm server for this run's steps (`onstart`); its socket is named in ZB_WARM_SOCKET."""
    import subprocess
    import tempfile
    import time
    import uuid

    local = workflow.is_main_process and workflow.local_exec and not workflow.dryrun and not workflow.touch
    if not WARM_WANTED or not local or workflow.deployment_settings.deployment_method or sys.platform != "linux":
        return
    # A folder the server makes (private) and removes when it leaves
    socket_path = os.path.join(tempfile.gettempdir(), f"zb-warm-{uuid.uuid4().hex[:12]}", "socket")
    # The steps' start-up environment: the shell prefix's PYTHONPATH, and the thread counts Snakemake
    # gives a job of one thread (a step of more threads starts as a new process).
    env = dict(os.environ, PYTHONPATH=WARM_PYTHONPATH, **{name: "1" for name in WARM_THREAD_VARS})
    command = [sys.executable, WARM, "serve", "--socket", socket_path, "--parent", str(os.getpid())]
    server = _WARM["server"] = subprocess.Popen([*command, "--preload", *WARM_PRELOAD], env=env, stdin=subprocess.DEVNULL)
    os.environ[WARM_SOCKET_ENV] = socket_path
    # The server listens before it imports (its steps wait for the imports): wait the few tens of
    # milliseconds until it does, so that the first steps find the socket (the shell prefix asks for
    # it) rather than starting as new processes that import everything themselves.
    deadline = time.monotonic() + WARM_LISTEN_WAIT_S
    while not os.path.exists(socket_path) and server.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)


def stop_warm_server():
    """Stop the warm server and wait for it (its steps' CPU time then counts as Snakemake's children's).

    The server removes its socket and the folder it made; one killed after a minute cannot, so its
    socket goes here, and the folder if nothing else is in it.
    """
    import contextlib
    import signal
    import subprocess

    server = _WARM.pop("server", None)
    socket_path = os.environ.pop(WARM_SOCKET_ENV, None)
    if server is None:
        return
    server.send_signal(signal.SIGTERM)
    try:
        server.wait(timeout=60)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()
        with contextlib.suppress(OSError):
            os.unlink(socket_path)
        with contextlib.suppress(OSError):  # (only when empty: nothing of anyone else's)
            os.rmdir(os.path.dirname(socket_path))
