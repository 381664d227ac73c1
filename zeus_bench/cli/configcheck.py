"""Checks of the workflows' configurations: one line per mistake, before anything is scheduled.

The JSON schemas (config/*.schema.json) describe the keys and types; a schema violation is turned
into one line naming the key (an unknown key with the nearest valid one, as a typo usually is),
never jsonschema's dump of the schema. The values the schemas cannot judge are checked here:
GPU kinds and workload or policy ids against what exists (with the nearest valid names),
seed ranges (``"10-1"`` is empty), duplicated entries of a list, numbers that are not finite
(YAML's ``.nan`` and ``.inf``), and a sweep whose GPU backend cannot start on this machine.

Every check raises :class:`~zeus_bench.core.errors.ConfigError`; :func:`exit_on_error` is how the
Snakefiles turn it into one line on stderr and exit status 2.
"""

from __future__ import annotations

import difflib
import json
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from zeus_bench.core.errors import ConfigError


def config_source(workflow: Any, default: str) -> str:
    """The config files a Snakemake run reads (``--configfile`` ones after the Snakefile's), for messages."""
    files = [str(f) for f in (getattr(workflow, "configfiles", None) or [])]
    return ", ".join(dict.fromkeys(files)) if files else default


def nearest(name: str, valid: Iterable[str], n: int = 3) -> str:
    """``"; did you mean a, b?"`` for the valid names closest to ``name`` (empty when none is close)."""
    close = difflib.get_close_matches(str(name), [str(v) for v in valid], n=n, cutoff=0.5)
    if not close:
        close = difflib.get_close_matches(str(name).lower(), [str(v) for v in valid], n=n, cutoff=0.5)
    return f"; did you mean {', '.join(close)}?" if close else ""


def _key_path(path: Iterable[Any]) -> str:
    return ".".join(str(p) for p in path) or "(top level)"


def _schema_at(schema: Mapping[str, Any], path: Sequence[Any]) -> Mapping[str, Any]:
    """The sub-schema describing the object at ``path`` (following properties/additionalProperties)."""
    node: Mapping[str, Any] = schema
    for part in path:
        props = node.get("properties", {})
        if isinstance(part, str) and part in props:
            node = props[part]
        elif isinstance(node.get("additionalProperties"), Mapping):
            node = node["additionalProperties"]
        elif isinstance(node.get("items"), Mapping):
            node = node["items"]
        else:
            return {}
    return node


def schema_error_line(error: Any, schema: Mapping[str, Any], source: str) -> str:
    """One line for a jsonschema ``ValidationError``: the key at fault, the bad value, the rule broken."""
    path = list(error.absolute_path)
    key = _key_path(path)
    if error.validator == "additionalProperties":
        allowed = list(_schema_at(schema, path).get("properties", {}))
        extra = sorted(set(error.instance) - set(allowed)) if isinstance(error.instance, Mapping) else []
        if extra:
            where = f"{key}." if path else ""
            return (
                f"{source}: unknown key {where}{extra[0]}{nearest(extra[0], allowed)}"
                f" (valid keys here: {', '.join(allowed)})"
            )
    if error.validator == "uniqueItems":
        seen: set[str] = set()
        dups = []
        for item in error.instance:
            text = json.dumps(item, sort_keys=True)
            if text in seen:
                dups.append(item)
            seen.add(text)
        return f"{source}: {key}: duplicated value {dups[0] if dups else '?'} in {error.instance}"
    if error.validator in ("oneOf", "anyOf") and error.context:
        best = min(error.context, key=lambda e: len(list(e.absolute_path)) * -1)
        return schema_error_line(best, schema, source)
    value = json.dumps(error.instance)
    value = value if len(value) <= 80 else "this value"
    message = error.message.splitlines()[0]
    message = message if len(message) <= 200 else message[:200] + "..."
    return f"{source}: {key}: {value} is not valid: {message}"


def skip_unused_iri_grammar() -> None:
    """Mark the optional package ``rfc3987_syntax`` absent in this process, before jsonschema is first imported.

    For the Snakefiles, which validate their configs with jsonschema: as it is imported, jsonschema
    builds that package's grammar (Lark) when it is installed (the test extras bring it), about 1 s
    of every Snakemake start, for an ``iri`` format check that neither Snakemake's validation (no
    format checker) nor this project's schemas (no ``format``) use. Once jsonschema is imported,
    nothing changes.
    """
    if "jsonschema" not in sys.modules:
        sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]  # None: "not installed"


def check_schema(data: Any, schema_path: str | Path, source: str) -> None:
    """Validate ``data`` against the JSON schema at ``schema_path``; the first violation as one line.

    Raises:
        ConfigError: ``<source>: <key>: ...`` for the most relevant violation.
    """
    import jsonschema

    schema = json.loads(Path(schema_path).read_text())
    validator = jsonschema.Draft202012Validator(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(data))
    if error is not None:
        raise ConfigError(schema_error_line(error, schema, source))


def check_known(key: str, values: Any, known: Sequence[str], source: str, what: str) -> None:
    """Refuse names not in ``known`` (a list, or "all"), naming the nearest valid ones."""
    if values == "all":
        return
    for value in values:
        if value not in known:
            raise ConfigError(
                f"{source}: {key}: unknown {what} {value!r}{nearest(value, known)} (known: {', '.join(known)})"
            )


def check_unique(key: str, values: Any, source: str) -> None:
    """Refuse a list that names one entry twice (``1.5`` and ``1.50`` are the same number)."""
    if not isinstance(values, list):
        return
    seen: dict[str, Any] = {}
    for value in values:
        norm = (
            f"{float(value):g}"
            if isinstance(value, int | float) and not isinstance(value, bool)
            else str(value)
        )
        if norm in seen:
            raise ConfigError(f"{source}: {key}: {value!r} is listed twice in {values}")
        seen[norm] = value


#: Keys whose infinity means something (beta: no early stopping); NaN is refused everywhere.
_INF_KEYS = ("beta", "beta_sweep.values")


def check_finite(config: Mapping[str, Any], source: str) -> None:
    """Refuse a number that is not finite (YAML's ``.nan``, ``.inf``) anywhere in a config, naming its key.

    Lists are walked item by item. ``inf`` is taken only by beta's keys (:data:`_INF_KEYS`, and
    any key ending in ``.beta``), as ``--beta inf`` is on the command line.
    """
    import math

    for key, value in _walk(config):
        items = value if isinstance(value, list) else [value]
        for item in items:
            if isinstance(item, float) and not math.isfinite(item):
                if math.isinf(item) and (key in _INF_KEYS or key.rpartition(".")[2] == "beta"):
                    continue
                raise ConfigError(f"{source}: {key}: {item!r} is not a finite number")


def check_seeds(key: str, text: Any, source: str) -> None:
    """Refuse a seed range that is malformed or empty (``"10-1"``), as the simulator would later."""
    import argparse

    from zeus_bench.core.entry import int_range_arg

    try:
        int_range_arg(str(text))
    except argparse.ArgumentTypeError as exc:
        raise ConfigError(f'{source}: {key}: {text!r}: {exc} (write e.g. "1-10", "3" or "1,4,7-9")') from None


def known_gpus(config: Mapping[str, Any], own_dir: str | Path) -> list[str]:
    """GPU kinds the main workflow can evaluate: the Zeus files' and the project's own traces."""
    zeus = [
        name.removeprefix("summary_power_").removesuffix(".csv")
        for name in config["traces"]["zeus"]["files"]
        if name.startswith("summary_power_")
    ]
    own = list(own_power_traces(own_dir))
    return [*zeus, *(g for g in own if g not in zeus)]


def own_power_traces(own_dir: str | Path) -> dict[str, Path]:
    """The project's own power traces by GPU kind: ``<own_dir>/<gpu>/power-<gpu>.parquet``.

    A trace directly in ``own_dir`` (``<own_dir>/power-<gpu>.parquet``: ``own_dir`` is one GPU's
    folder, the layout before ``results/traces/<gpu>/``) counts too.

    Raises:
        ConfigError: two traces of the same GPU kind (the message names both files).
    """
    root = Path(own_dir)
    found: dict[str, Path] = {}
    for path in sorted([*root.glob("power-*.parquet"), *root.glob("*/power-*.parquet")]):
        gpu = path.stem.removeprefix("power-")
        if gpu in found:
            raise ConfigError(f"traces.own_dir: two power traces of GPU {gpu!r}: {found[gpu]} and {path}")
        found[gpu] = path
    return found


def check_main_config(config: Mapping[str, Any], source: str, own_dir: str | Path | None = None) -> None:
    """Values of the main workflow's (schema-valid) config: GPUs, workloads, policies, seeds, duplicates."""
    from zeus_bench.sim.policies import POLICIES
    from zeus_bench.traces.workloads import load_workloads

    gpus = known_gpus(config, own_dir if own_dir is not None else config["traces"]["own_dir"])
    for key in ("gpus", "workloads", "policies"):
        check_unique(key, config.get(key), source)
    check_known("gpus", config["gpus"], gpus, source, "GPU kind")
    check_known("workloads", config["workloads"], list(load_workloads()), source, "workload")
    check_known("policies", config["policies"], list(POLICIES), source, "policy")
    for sweep in ("eta_sweep", "beta_sweep"):
        section = config[sweep]
        check_unique(f"{sweep}.values", section["values"], source)
        check_unique(f"{sweep}.policies", section["policies"], source)
        check_known(f"{sweep}.policies", section["policies"], list(POLICIES), source, "policy")
    for key, value in _walk(config):  # every seed range, wherever a section has one
        if key.rpartition(".")[2] == "seeds":
            check_seeds(key, value, source)
    check_sizes(config, source)
    check_finite(config, source)
    check_unique("figures.formats", config["figures"]["formats"], source)


def _walk(node: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Every (dotted key, value) of a nested config, sections included."""
    for key, value in node.items():
        path = f"{prefix}{key}"
        yield path, value
        if isinstance(value, Mapping):
            yield from _walk(value, f"{path}.")


def check_sizes(config: Mapping[str, Any], source: str) -> None:
    """``recurrences``, ``window``, ``arena.jobs`` and ``policy_study.jobs`` within what the commands they reach accept.

    The bounds are the commands' own (:data:`~zeus_bench.core.entry.MAX_RECURRENCES`, the
    simulator's window rule, ``zeus-bench arena --jobs`` and ``study --jobs``), so the workflow refuses at start what
    a job would refuse later.
    """
    from zeus_bench.core.entry import MAX_JOBS, MAX_RECURRENCES
    from zeus_bench.sim.grid import check_window

    def at(key: str, check: Callable[[], Any]) -> None:
        try:
            check()
        except ConfigError as exc:
            raise ConfigError(f"{source}: {key}: {exc}") from None

    rec = config.get("recurrences", "auto")
    if rec != "auto" and not (isinstance(rec, int) and 1 <= rec <= MAX_RECURRENCES):
        raise ConfigError(f"{source}: recurrences: must be auto or in [1, {MAX_RECURRENCES}], got {rec!r}")
    at("window", lambda: check_window(int(config.get("window", 0))))
    for section in ("arena", "policy_study"):
        jobs = config.get(section, {}).get("jobs", 1)
        if not 1 <= int(jobs) <= MAX_JOBS:
            raise ConfigError(f"{source}: {section}.jobs: must be in [1, {MAX_JOBS}], got {jobs}")


def fake_backend_hint(config_path: str) -> str:
    """How to rehearse the sweep without a GPU."""
    return f"to rehearse without a GPU, run on the fake backend: --configfile config/sweep-fake.yaml (not {config_path})"


def check_sweep_config(sweep: Mapping[str, Any], source: str) -> None:
    """Values of the sweep workflow's (schema-valid) ``sweep`` section: ids, backends, limits."""
    from zeus_bench.device import BACKENDS
    from zeus_bench.sweep.measure import MeasureSettings
    from zeus_bench.traces.workloads import load_workloads

    workloads = list(load_workloads())
    check_finite({"sweep": sweep}, source)
    check_known("sweep.workloads", list(sweep["workloads"]), workloads, source, "workload")
    try:  # the measuring settings' own rules (a cap below its minimum, ...), as the sweep would refuse them
        MeasureSettings(**{k: v for k, v in sweep.get("measure", {}).items() if v is not None})
    except ConfigError as exc:
        raise ConfigError(f"{source}: sweep.measure: {exc}") from None
    except TypeError as exc:
        raise ConfigError(f"{source}: sweep.measure: {exc}") from None
    for workload, sizes in sweep["workloads"].items():
        check_unique(f"sweep.workloads.{workload}", sizes, source)
    for kind, gpu in sweep["gpus"].items():
        key = f"sweep.gpus.{kind}"
        backend = gpu.get("backend", "nvml")
        if backend not in BACKENDS:
            raise ConfigError(
                f"{source}: {key}.backend: unknown backend {backend!r}{nearest(backend, BACKENDS)} (known: {', '.join(BACKENDS)})"
            )
        limits = gpu.get("power_limits", "current")
        check_unique(f"{key}.power_limits", limits, source)
        if gpu.get("observe", True) and limits != "current":
            raise ConfigError(
                f"{source}: {key}: observe: true never sets a limit, so power_limits must be 'current' "
                f"(got {limits}); set observe: false to sweep limits"
            )


def check_backends_start(sweep: Mapping[str, Any], source: str) -> None:
    """Start each GPU kind's backend once, here: a sweep that cannot reach its GPUs fails now, once.

    Raises:
        ConfigError: the backend cannot start, with how to rehearse on the fake backend.
    """
    from zeus_bench.core.errors import ZeusBenchError
    from zeus_bench.device import get_backend

    for kind, gpu in sweep["gpus"].items():
        backend = gpu.get("backend", "nvml")
        try:
            devices = get_backend(backend).device_count()
        except ZeusBenchError as exc:
            reason = str(exc).split(" (or use --backend fake)")[0]
            raise ConfigError(
                f"{source}: sweep.gpus.{kind}: the {backend} backend cannot start on this machine: {reason}; "
                f"{fake_backend_hint(source)}"
            ) from None
        index = int(gpu.get("gpu_index", 0))
        if index >= devices:
            raise ConfigError(
                f"{source}: sweep.gpus.{kind}.gpu_index: {index}, but the {backend} backend sees {devices} GPU(s)"
            )
        limits = gpu.get("power_limits", "current")
        if limits != "current":
            lo, hi = get_backend(backend).gpu(index).power_limit_range_w()
            outside = [w for w in limits if not lo <= float(w) <= hi]
            if outside:
                raise ConfigError(
                    f"{source}: sweep.gpus.{kind}.power_limits: {outside[0]:g} W is outside the range of "
                    f"GPU {index} ({lo:g}-{hi:g} W on the {backend} backend)"
                )


def check_sweep_places(sweep: Mapping[str, Any], source: str) -> None:
    """The sweep's command exists and its output folder can be written (before the job table).

    Raises:
        ConfigError: ``sweep.command``'s program is not found or not executable, or
            ``sweep.out_dir`` cannot be written.
    """
    import shlex
    import shutil

    from zeus_bench.core.fsutil import check_writable_dir

    command = sweep.get("command")
    if command:
        words = shlex.split(str(command))
        program = words[0] if words else ""
        if not program or shutil.which(program) is None:
            raise ConfigError(
                f"{source}: sweep.command: {program or command!r} is not a program found on PATH or executable"
            )
    try:
        check_writable_dir(sweep.get("out_dir", "results/sweep"), "sweep.out_dir")
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from None


def check_capriccio_config(config: dict[str, Any], schema_path: str | Path, source: str) -> None:
    """Check the Capriccio drift workflow's options: every key known and typed, then their values.

    The schema (``config/capriccio.schema.json``) refuses unknown keys and wrong types; then the
    Sentiment140 CSV and vocabulary must exist, and ``default_batch_size`` be one of ``batch_sizes``.
    A boolean key given as ``true``/``false`` on the command line (Snakemake keeps those as text)
    is turned into a boolean in ``config``.

    Raises:
        ConfigError: one line naming the key.
    """
    schema = json.loads(Path(schema_path).read_text())
    for key, spec in schema["properties"].items():
        if spec.get("type") == "boolean" and str(config.get(key)).lower() in ("true", "false"):
            config[key] = str(config[key]).lower() == "true"
    check_schema(config, schema_path, source)
    check_finite(config, source)
    for key in ("sentiment140", "vocab"):
        if key in config and not Path(str(config[key])).is_file():
            raise ConfigError(f"{source}: {key}: no such file {config[key]}")
    if "batch_sizes" in config:
        sizes = [int(b) for b in str(config["batch_sizes"]).split(",")]
        check_unique("batch_sizes", sizes, source)
        if any(b < 1 for b in sizes):
            raise ConfigError(
                f"{source}: batch_sizes: every batch size must be >= 1, got {config['batch_sizes']}"
            )
        b0 = config.get("default_batch_size")
        if b0 is not None and b0 not in sizes:
            raise ConfigError(f"{source}: default_batch_size: {b0} is not one of batch_sizes {sizes}")


@contextmanager
def exit_on_error(stream: Callable[[str], Any] | None = None) -> Iterator[None]:
    """Turn a :class:`ConfigError` raised inside into one line ``error: ...`` on stderr and exit status 2.

    For the Snakefiles: Snakemake would print an exception with its file and line context; a
    config mistake is the user's, so it gets one line and nothing is scheduled.
    """
    try:
        yield
    except ConfigError as exc:
        (stream or sys.stderr.write)(f"error: {exc}\n")
        sys.stderr.flush()
        raise SystemExit(2) from None
