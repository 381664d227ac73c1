"""Measure a whole command's GPU energy: what ``zeus-bench measure -- COMMAND`` runs.

The command runs as a child process, unchanged (its standard streams are this process's); one
:class:`~zeus_bench.device.monitor.EnergyMonitor` window spans each run, from just before the
child starts to just after it ends, on every GPU asked for. The GPUs are measured whoever uses
them: anything else running on them in that time counts too, as with ``nvidia-smi``.

Each run gives one :class:`~zeus_bench.device.measurement.Measurement` (energy per GPU with its
uncertainty, one counter update's energy); :func:`measurement_rows` turns runs into the rows of
the ``energy_measurement`` table (:mod:`zeus_bench.device.schema`).
"""

from __future__ import annotations

import logging
import math
import shlex
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from zeus_bench.core.errors import ConfigError
from zeus_bench.device.base import GPU
from zeus_bench.device.measurement import Measurement
from zeus_bench.device.monitor import EnergyMonitor

log = logging.getLogger(__name__)

__all__ = ["CommandRun", "measure_command", "measurement_rows", "run_summary"]


@dataclass(frozen=True)
class CommandRun:
    """One run of a measured command.

    Attributes:
        run: Its number, from 1.
        exit_status: The child's exit status (negative: killed by that signal).
        measurement: Its GPUs' energy and time.
        interrupted: Whether this process got SIGINT (Ctrl-C) while the child ran.
    """

    run: int
    exit_status: int
    measurement: Measurement
    interrupted: bool = False


def _wait(child: subprocess.Popen[bytes]) -> tuple[int, bool]:
    """Wait for the child; a Ctrl-C (which the child gets too) waits for it to end, then says so."""
    interrupted = False
    while True:
        try:
            return child.wait(), interrupted
        except KeyboardInterrupt:
            interrupted = True
            log.info("interrupted: waiting for the command to end")


def measure_command(
    argv: Sequence[str], gpus: Sequence[GPU], repeat: int = 1, monitor: EnergyMonitor | None = None
) -> list[CommandRun]:
    """Run ``argv`` ``repeat`` times, each run in its own measurement window over ``gpus``.

    Stops after a run that failed or was interrupted (the runs so far are returned).

    Args:
        argv: The command and its arguments (no shell).
        gpus: The GPUs to measure.
        repeat: How many times to run it, one after the other.
        monitor: A monitor over ``gpus`` to use (tests); by default one is made and closed.

    Raises:
        ConfigError: ``argv`` is empty, ``repeat`` is below 1, or the command cannot be started.
    """
    if not argv:
        raise ConfigError("measure: no command given (usage: zeus-bench measure [OPTIONS] -- COMMAND [ARGS])")
    if repeat < 1:
        raise ConfigError(f"measure: --repeat must be at least 1, got {repeat}")
    own = monitor is None
    mon = monitor if monitor is not None else EnergyMonitor(gpus, sync_cuda=False)
    runs: list[CommandRun] = []
    try:
        for run in range(1, repeat + 1):
            name = f"run-{run}"
            mon.begin_window(name)
            try:
                child = subprocess.Popen(list(argv))
            except OSError as exc:
                mon.end_window(name)
                raise ConfigError(f"measure: cannot run {argv[0]!r}: {exc.strerror or exc}") from None
            status, interrupted = _wait(child)
            runs.append(CommandRun(run, status, mon.end_window(name), interrupted))
            if status != 0 or interrupted:
                break
    finally:
        if own:
            mon.close()
    return runs


def measurement_rows(
    runs: Sequence[CommandRun], gpus: Sequence[GPU], backend: str, argv: Sequence[str]
) -> list[dict[str, Any]]:
    """The ``energy_measurement`` rows of ``runs``: one per (run, GPU)."""
    command = shlex.join(argv)
    rows: list[dict[str, Any]] = []
    for r in runs:
        m = r.measurement
        for g in gpus:
            energy = float(m.energy_j[g.index])
            rows.append(
                {
                    "run": r.run,
                    "gpu_index": g.index,
                    "gpu_name": g.name(),
                    "gpu_uuid": g.uuid(),
                    "backend": backend,
                    "command": command,
                    "exit_status": r.exit_status,
                    "time_s": m.time_s,
                    "energy_j": energy,
                    "energy_uncertainty_j": float(m.energy_uncertainty_j.get(g.index, 0.0)),
                    "avg_power_w": energy / m.time_s if m.time_s > 0 else 0.0,
                    "counter_update_period_s": m.counter_update_period_s,
                    "energy_from": m.energy_from,
                    "high_uncertainty": bool(m.high_uncertainty),
                }
            )
    return rows


def _mean_and_error(values: Sequence[float], instrument: Sequence[float]) -> tuple[float, float]:
    """Mean of ``values`` and its uncertainty.

    The uncertainty is the instrument's (its mean) and, over several runs, the standard error of
    the mean, added in quadrature.
    """
    n = len(values)
    mean = sum(values) / n
    unc = sum(instrument) / n
    if n > 1:
        var = sum((v - mean) ** 2 for v in values) / (n - 1)
        unc = math.hypot(unc, math.sqrt(var / n))
    return mean, unc


def run_summary(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per GPU (and ``total`` over the GPUs), the mean over runs with its uncertainty.

    Energy's uncertainty is the counter's (one update's energy per run, averaged) and, over
    several runs, the standard error of the mean added in quadrature; time's is the standard
    error of the mean (0 for one run). Average power is mean energy over mean time, with the
    energy's relative uncertainty.
    """
    by_gpu: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        by_gpu.setdefault(int(row["gpu_index"]), []).append(row)
    runs = sorted({int(r["run"]) for r in rows})
    out: list[dict[str, Any]] = []

    def entry(
        label: str, name: str, energies: list[float], uncs: list[float], times: list[float]
    ) -> dict[str, Any]:
        energy, energy_unc = _mean_and_error(energies, uncs)
        time_s, time_unc = _mean_and_error(times, [0.0] * len(times))
        power = energy / time_s if time_s > 0 else 0.0
        rel = energy_unc / energy if energy > 0 else 0.0
        return {
            "gpu": label,
            "name": name,
            "energy_j": energy,
            "energy_pm_j": energy_unc,
            "time_s": time_s,
            "time_pm_s": time_unc,
            "avg_power_w": power,
            "avg_power_pm_w": power * rel,
            "runs": len(energies),
        }

    for index, gpu_rows in sorted(by_gpu.items()):
        out.append(
            entry(
                str(index),
                str(gpu_rows[0]["gpu_name"]),
                [float(r["energy_j"]) for r in gpu_rows],
                [float(r["energy_uncertainty_j"]) for r in gpu_rows],
                [float(r["time_s"]) for r in gpu_rows],
            )
        )
    if len(by_gpu) > 1:
        per_run = [[r for r in rows if int(r["run"]) == k] for k in runs]
        out.append(
            entry(
                "total",
                f"{len(by_gpu)} GPUs",
                [sum(float(r["energy_j"]) for r in rr) for rr in per_run],
                [sum(float(r["energy_uncertainty_j"]) for r in rr) for rr in per_run],
                [float(rr[0]["time_s"]) for rr in per_run],
            )
        )
    return out
