"""``zeus-bench gpu info``, ``zeus-bench gpu restore`` and ``zeus-bench gpud`` (the power-limit daemon)."""

from __future__ import annotations

import argparse
from pathlib import Path

from zeus_bench.cli.common import add_format_arg, emit, render


def add_backend_arg(parser: argparse.ArgumentParser) -> None:
    """Add ``--backend`` with the registered backends (default: ``$ZEUS_BENCH_BACKEND``, else ``nvml``)."""
    from zeus_bench.device import BACKENDS

    parser.add_argument(
        "--backend",
        choices=BACKENDS,
        default=None,
        help="GPU backend (default: $ZEUS_BENCH_BACKEND, else nvml); 'fake' simulates a GPU whose state "
        "lives in $ZEUS_BENCH_FAKE_STATE",
    )


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``gpu`` command group."""
    gpu = sub.add_parser(
        "gpu",
        help="inspect GPUs and restore power limits",
        description="Inspect GPUs (zeus-bench gpu info) and put back power limits a killed run left "
        "journalled (zeus-bench gpu restore).",
    )
    gsub = gpu.add_subparsers(dest="gpu_command", metavar="SUBCOMMAND", parser_class=type(gpu))
    gsub.required = True

    info = gsub.add_parser("info", help="name, power-limit range, current limit, energy counter, permission")
    add_backend_arg(info)
    add_format_arg(info)
    info.set_defaults(func=_info)

    restore = gsub.add_parser(
        "restore",
        help="put back power limits journalled by a run that was killed",
        description="Restore every power limit that a killed zeus-bench run left journalled in the state "
        "directory ($ZEUS_BENCH_STATE_DIR, else ~/.local/state/zeus-bench). Runs still alive are skipped.",
    )
    add_backend_arg(restore)
    restore.add_argument("--state-dir", type=Path, default=None, help="state directory holding the journal")
    restore.add_argument("--dry-run", action="store_true", help="only list what would be restored")
    restore.set_defaults(func=_restore)

    daemon = sub.add_parser(
        "gpud",
        help="(root) daemon that sets power limits for members of a Unix group, restoring them when a client dies",
        description="Serve power-limit leases on a Unix socket: members of --group (and root) lease GPUs for "
        "the life of one connection; every limit a lease changed is restored when its connection closes, "
        "for any reason. Clients use it when $ZEUS_BENCH_GPUD names the socket.",
    )
    daemon.add_argument("--socket", required=True, type=Path, metavar="PATH", help="Unix socket to listen on")
    daemon.add_argument(
        "--group", required=True, metavar="NAME", help="Unix group whose members may set limits"
    )
    add_backend_arg(daemon)
    daemon.add_argument(
        "--state-dir",
        type=Path,
        default=None,
        help="folder of the lease journal (default /var/lib/zeus-bench/gpud for root)",
    )
    daemon.set_defaults(func=_gpud)


def _info(args: argparse.Namespace) -> int:
    import pandas as pd

    from zeus_bench.device import get_backend

    backend = get_backend(args.backend)
    may_set = backend.may_set_power_limits()
    rows = []
    for gpu in backend.gpus():
        lo, hi = gpu.power_limit_range_w()
        rows.append(
            {
                "gpu_index": gpu.index,
                "name": gpu.name(),
                "uuid": gpu.uuid(),
                "min_power_limit_w": lo,
                "max_power_limit_w": hi,
                "default_power_limit_w": gpu.default_power_limit_w(),
                "power_limit_w": gpu.power_limit_w(),
                "energy_counter": gpu.supports_energy_counter(),
                "may_set_limits": may_set,
            }
        )
    df = pd.DataFrame(rows)
    text = render(df, args.format)
    if args.format == "table":
        note = "" if may_set else "  (setting limits needs root or CAP_SYS_ADMIN; use observe mode)"
        text = f"backend {backend.name}, driver {backend.driver_version()}{note}\n" + text
    emit(text, args.out)
    return 0


def _restore(args: argparse.Namespace) -> int:
    from zeus_bench.device import get_backend
    from zeus_bench.device.control import default_state_dir, restore_from_journal

    backend = get_backend(args.backend)
    state_dir = args.state_dir or default_state_dir()
    entries = restore_from_journal(backend, state_dir, dry_run=args.dry_run)
    verb = "would restore" if args.dry_run else "restored"
    if not entries:
        print(f"nothing to restore ({backend.name} journal in {state_dir})")
    for e in entries:
        print(
            f"{verb} GPU {e.gpu_index} ({e.gpu_uuid}) to {e.previous_power_limit_w:g} W (left by pid {e.pid} on {e.host})"
        )
    return 0


def _gpud(args: argparse.Namespace) -> int:
    from zeus_bench.core.errors import ConfigError
    from zeus_bench.device import get_backend
    from zeus_bench.device.gpud import GPUDaemon
    from zeus_bench.device.gpud_protocol import default_gpud_state_dir

    backend = get_backend(args.backend)
    if not backend.may_set_power_limits():
        raise ConfigError(
            f"zeus-bench gpud: this process may not set power limits on the {backend.name} backend "
            "(run it as root or with CAP_SYS_ADMIN)"
        )
    GPUDaemon(backend, args.socket, args.group, args.state_dir or default_gpud_state_dir()).serve()
    return 0
