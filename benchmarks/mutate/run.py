"""``make mutate``: sampled mutation testing of the rules that matter, with cosmic-ray.

For each module of ``benchmarks/mutate/modules.toml`` this

1. copies the checkout (tracked and untracked, not ignored files) into a temporary folder, so the
   working tree is never mutated, and checks that the module's fast test files pass there;
2. lets ``cosmic-ray init`` list every mutant of the module (its core operators), keeps those in
   the configured functions (all, if none) and off logging calls, and draws ``sample`` of them
   with a fixed seed (the same mutants on every machine, for the same source);
3. marks the others skipped and runs ``cosmic-ray exec`` (the local distributor: one pytest run
   of the module's test files per mutant; a timeout counts as killed);
4. prints the kill rate per module and every survivor as a one-line diff, and writes the table
   (``--out``, default ``docs/mutation-results.csv``) and the survivors
   (``docs/mutation-survivors.txt``).

Survivors marked equivalent in ``modules.toml`` (by operator, function and line text, with a
reason) count neither as killed nor as survivors; ``docs/testing.md`` lists them.

Usage: ``python benchmarks/mutate/run.py [--module NAME ...] [--sample N] [--jobs N]``.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import logging
import os
import random
import re
import shlex
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

from outcomes import Module, Outcome, write_report
from source import annotation_spans, in_annotation, inside, spans

log = logging.getLogger("mutate")
REPO = Path(__file__).resolve().parents[2]
CONFIG = Path(__file__).with_name("modules.toml")


def load_modules(path: Path = CONFIG) -> tuple[dict[str, object], list[Module]]:
    """The defaults and the modules of the configuration."""
    cfg = tomllib.loads(path.read_text())
    defaults = cfg.get("defaults", {})
    modules = []
    for m in cfg["module"]:
        modules.append(
            Module(
                name=m["name"],
                path=m["path"],
                tests=list(m["tests"]),
                functions=list(m.get("functions", [])),
                sample=int(m.get("sample", defaults.get("sample", 20))),
                timeout=float(m.get("timeout", defaults.get("timeout", 120.0))),
                equivalent=list(m.get("equivalent", [])),
            )
        )
    return defaults, modules


def copy_checkout(dest: Path) -> None:
    """Copy the checkout's tracked and untracked (not ignored) files into ``dest``."""
    files = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        check=True,
        capture_output=True,
    ).stdout.split(b"\0")
    for raw in files:
        if not raw:
            continue
        rel = raw.decode()
        src = REPO / rel
        if not src.is_file():
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target)


def _equivalent(module: Module, operator: str, line_text: str) -> str:
    """The reason a mutant is marked equivalent in the configuration ("" if it is not)."""
    for eq in module.equivalent:
        if re.search(eq["operator"], operator) and eq["line"] in line_text:
            return eq["reason"]
    return ""


#: Printed between the two test runs of ``--compare-rev`` (the older tests passed).
OLD_PASSED = "@@mutate: the older tests passed@@"


def _older_tests(module: Module, rev: str) -> list[str]:
    """The module's test files that exist at ``rev``, unchanged since (``--compare-rev``)."""
    older = []
    for t in module.tests:
        path = t.split("::")[0]
        at_rev = subprocess.run(["git", "cat-file", "-e", f"{rev}:{path}"], cwd=REPO, capture_output=True)
        if at_rev.returncode == 0 and (REPO / path).is_file():
            older.append(t)
    files = sorted({t.split("::")[0] for t in older})
    changed = subprocess.run(["git", "diff", "--quiet", rev, "--", *files], cwd=REPO) if older else None
    if changed is not None and changed.returncode != 0:
        raise SystemExit(f"mutate: {', '.join(older)} changed since {rev}; cannot compare")
    return older


def run_module(
    module: Module,
    seed: int,
    env: dict[str, str],
    keep: Path | None,
    compare_rev: str | None = None,
    resume: Path | None = None,
) -> Outcome:
    """Mutate one module in a copy of the checkout; return its outcome."""
    out = Outcome(module)
    start = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix=f"mutate-{module.name}-"))
    try:
        copy_checkout(work)
        python = sys.executable
        pytest = f"{python} -m pytest -x -q -p no:cacheprovider --no-header"
        command = f"{pytest} {' '.join(module.tests)}"
        run_env = env | {"PYTHONPATH": str(work)}
        started = time.monotonic()
        base = subprocess.run(command.split(), cwd=work, env=run_env, capture_output=True, text=True)
        base_s = time.monotonic() - started
        if base.returncode != 0:
            out.error = f"the unmutated tests fail: {base.stdout.strip().splitlines()[-1:]}"
            return out
        if compare_rev is not None:
            older = _older_tests(module, compare_rev)
            newer = [t for t in module.tests if t not in older]
            steps = [f"{pytest} {' '.join(older)}"] if older else []
            steps += [f"echo {json.dumps(OLD_PASSED)}"] + ([f"{pytest} {' '.join(newer)}"] if newer else [])
            command = "bash -c " + shlex.quote(" && ".join(steps))
        # a mutant whose tests run far longer than the module's own counts as killed (a hang)
        timeout = max(module.timeout, 5.0 * base_s)
        cfg = work / "cosmic-ray.toml"
        cfg.write_text(
            "[cosmic-ray]\n"
            f'module-path = "{module.path}"\n'
            f"timeout = {timeout:.0f}\n"
            "excluded-modules = []\n"
            f"test-command = {json.dumps(command)}\n"
            "[cosmic-ray.distributor]\n"
            'name = "local"\n'
        )
        session = work / "session.sqlite"
        cr = str(Path(python).with_name("cosmic-ray"))
        source = (work / module.path).read_text()
        previous = None if resume is None else resume / f"{module.name}.sqlite"
        if previous is not None and previous.is_file():
            # Tests only grow between the two runs: a killed mutant stays killed, so only the
            # survivors (and what could not run) are run again.
            shutil.copy2(previous, session)
            db = sqlite3.connect(session)
            out.population = len(_eligible(module, source, db)[1])
            db.execute(
                "DELETE FROM work_results WHERE worker_outcome != 'SKIPPED' AND "
                "(test_outcome IS NULL OR test_outcome != 'KILLED')"
            )
            db.commit()
            db.close()
        else:
            subprocess.run(
                [cr, "init", str(cfg), str(session)], cwd=work, env=run_env, check=True, capture_output=True
            )
            db = sqlite3.connect(session)
            items, eligible = _eligible(module, source, db)
            out.population = len(eligible)
            rng = random.Random(f"{seed}:{module.name}")
            chosen = rng.sample(eligible, min(module.sample, len(eligible)))
            keep_ids = {c[4] for c in chosen}
            skip = [(job,) for job, *_ in items if job not in keep_ids]
            db.executemany(
                "INSERT INTO work_results (job_id, worker_outcome, output, test_outcome, diff) "
                "VALUES (?, 'SKIPPED', 'not sampled', NULL, NULL)",
                skip,
            )
            db.commit()
            db.close()
        subprocess.run([cr, "exec", str(cfg), str(session)], cwd=work, env=run_env, capture_output=True)
        collect(out, session, source, compare_rev is not None)
        if keep is not None:
            shutil.copy2(session, keep / f"{module.name}.sqlite")
    finally:
        shutil.rmtree(work, ignore_errors=True)
        out.seconds = time.monotonic() - start
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the configured modules; print and write the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--module", action="append", help="only these modules (by name; repeatable)")
    parser.add_argument("--sample", type=int, help="mutants per module (default: the configuration's)")
    parser.add_argument("--jobs", type=int, default=1, help="modules mutated at once (default 1)")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "mutation-results.csv")
    parser.add_argument("--keep-sessions", type=Path, help="copy each module's cosmic-ray session here")
    parser.add_argument("--from-sessions", type=Path, help="only recount the sessions kept in this folder")
    parser.add_argument(
        "--resume",
        type=Path,
        help="start from the sessions kept in this folder (--keep-sessions) and run only their mutants "
        "that were not killed (after adding tests: a killed mutant stays killed)",
    )
    parser.add_argument(
        "--compare-rev",
        help="also count the mutants that the module's test files existing at this git revision kill "
        "(before/after a change that adds tests; those files must be unchanged since)",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if shutil.which("cosmic-ray", path=str(Path(sys.executable).parent)) is None:
        print(
            "mutate: cosmic-ray is not installed in this venv (pip install -e '.[mutate]')", file=sys.stderr
        )
        return 2
    defaults, modules = load_modules()
    if args.module:
        unknown = sorted(set(args.module) - {m.name for m in modules})
        if unknown:
            print(f"mutate: unknown module(s) {', '.join(unknown)} (see {CONFIG})", file=sys.stderr)
            return 2
        modules = [m for m in modules if m.name in args.module]
    if args.sample is not None:
        for m in modules:
            m.sample = args.sample
    seed = int(defaults.get("seed", 0))
    env = dict(os.environ)
    env.setdefault("ZEUS_TRACE_DIR", str(REPO.parent / "shared" / "traces" / "zeus-nsdi23"))
    if args.from_sessions:  # recount kept sessions (e.g. after marking equivalents)
        outcomes = []
        for m in modules:
            path = args.from_sessions / f"{m.name}.sqlite"
            if not path.is_file():
                continue
            o = Outcome(m)
            source = (REPO / m.path).read_text()
            db = sqlite3.connect(path)
            o.population = len(_eligible(m, source, db)[1])
            db.close()
            collect(o, path, source, args.compare_rev is not None)
            outcomes.append(o)
        write_report(outcomes, args.out, args.compare_rev is not None, 0.0)
        return 0
    if args.keep_sessions:
        args.keep_sessions.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    outcomes: list[Outcome] = []
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        futures = {
            pool.submit(run_module, m, seed, env, args.keep_sessions, args.compare_rev, args.resume): m
            for m in modules
        }
        for fut in concurrent.futures.as_completed(futures):
            o = fut.result()
            outcomes.append(o)
            status = o.error or f"{o.killed}/{o.sampled - o.equivalent - o.incompetent} killed"
            log.info("%-12s %s (%.0f s)", o.module.name, status, o.seconds)
    outcomes.sort(key=lambda o: [m.name for m in modules].index(o.module.name))
    total_s = time.monotonic() - start
    write_report(outcomes, args.out, args.compare_rev is not None, total_s)
    return 1 if any(o.error for o in outcomes) else 0


def _eligible(module: Module, source: str, db: sqlite3.Connection) -> tuple[list[tuple], list[tuple]]:
    """Every mutant of a session, and those eligible (in the functions, off logging), sorted."""
    wanted, logging_calls = spans(source, module.functions)
    items = db.execute(
        "SELECT job_id, operator_name, occurrence, start_pos_row, start_pos_col FROM mutation_specs"
    ).fetchall()
    eligible = sorted(
        (op, occ, row, col, job)
        for job, op, occ, row, col in items
        if (not module.functions or inside(row, wanted)) and not inside(row, logging_calls)
    )
    return items, eligible


def collect(out: Outcome, session: Path, source: str, compare: bool) -> None:
    """Count a finished session's mutants into ``out`` (killed, equivalent, survivors)."""
    module = out.module
    lines = source.splitlines()
    db = sqlite3.connect(session)
    results = db.execute(
        "SELECT s.operator_name, s.start_pos_row, s.definition_name, r.worker_outcome, r.test_outcome, r.diff, "
        "r.output, s.start_pos_col "
        "FROM mutation_specs s JOIN work_results r ON s.job_id = r.job_id WHERE r.worker_outcome != 'SKIPPED'"
    ).fetchall()
    db.close()
    notes = annotation_spans(source) if module.equivalent_annotations else []
    for op, row, definition, worker, test, diff, output, col in sorted(results, key=lambda r: (r[1], r[0])):
        out.sampled += 1
        text = lines[row - 1].strip() if 0 < row <= len(lines) else ""
        if worker != "NORMAL" or test == "INCOMPETENT":
            # the mutant could not run (cosmic-ray failed, or it breaks the import): no verdict
            out.incompetent += 1 if worker != "NORMAL" else 0
            out.killed += 1 if test == "INCOMPETENT" and worker == "NORMAL" else 0
            continue
        if test == "KILLED":
            out.killed += 1
            if compare and OLD_PASSED not in (output or ""):
                out.killed_before += 1
            continue
        reason = _equivalent(module, op, text) or (
            "an annotation (not evaluated)" if in_annotation(row, col, notes) else ""
        )
        if reason:
            out.equivalent += 1
            continue
        changed = [
            x[1:].strip() for x in (diff or "").splitlines() if x.startswith("+") and not x.startswith("+++")
        ]
        out.survivors.append(
            f"{module.path}:{row} [{definition}] {op}: {text!r} -> {changed[0] if changed else '?'!r}"
        )


if __name__ == "__main__":
    sys.exit(main())
