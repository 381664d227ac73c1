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

    - Cancel Snakemake's pending scheduler timers: Snakemake 9's scheduler starts a
      `threading.Timer` (not a daemon) of its job-rate window (1 s) after each scheduling round
      to look again, and at exit Python waits for the last one, about a second of idle time
      added to every run.
    - Freeze the objects left (`gc.freeze`), so that the interpreter's final collections skip
      them (about 0.2 s for Snakemake's DAG); every output is written by then.
    """
    import gc
    import threading

    for thread in threading.enumerate():
        if isinstance(thread, threading.Timer):
            thread.cancel()
    gc.freeze()
