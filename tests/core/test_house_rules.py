"""House rules of issue 20's gates, checked on the source: one cost formula, one set of defaults, no
dispatch by class identity.

- ``1 - eta`` / ``1.0 - eta`` is written only in the cost module (``zeus_bench/core/cost.py``):
  everything else calls ``zeus_cost`` / ``epoch_cost`` (the gate's grep, docstrings included);
- ``is Zeus`` appears nowhere in ``zeus_bench``: policies are dispatched by method, not identity;
- no eta/beta default is written as a literal outside ``zeus_bench/core/`` (in the package, the
  analysis or the workflow's scripts): a parameter, dataclass
  field or constant named like eta/beta (``eta``, ``beta``, ``DEFAULT_ETA``, ``default_beta``...)
  whose default is the literal 0.5 (eta) or 2.0 (beta); ``add_argument("--eta", default=0.5)``;
  ``config.get("eta", 0.5)``; ``{"eta": 0.5}``. They take ``DEFAULT_ETA`` / ``DEFAULT_BETA`` from
  ``zeus_bench.core.cost`` instead (parsed with :mod:`ast`, so a comment or a help text is no
  violation).

Files that other work still has to change are listed in one ``PENDING`` dict per rule (file ->
reason): the lead empties them at the merge. A rule fails on any violation not listed, and on a
listed file that no longer violates (so that the lists cannot go stale). The ``*_catches_*`` tests
show each checker failing on a hand-made violation.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "zeus_bench"
#: The one module that states the cost formula and the eta/beta defaults.
COST_MODULE = "zeus_bench/core/cost.py"
#: Where literal defaults may be written (the floor that owns them).
DEFAULTS_HOME = "zeus_bench/core/"

#: The cost formula written out: the gate's ``grep -rn "1 - eta\|1.0 - eta"`` (any spacing).
ONE_MINUS_ETA = re.compile(r"\b1(?:\.0*)?\s*-\s*eta\b")
#: Dispatch by class identity (``policy_cls is Zeus``, ``is not Zeus``).
IS_ZEUS = re.compile(r"\bis\s+(?:not\s+)?Zeus\b")
#: Names that hold an eta or a beta default.
ETA_NAME = re.compile(r"^_?(?:default_)?etas?(?:_default)?$", re.IGNORECASE)
BETA_NAME = re.compile(r"^_?(?:default_)?betas?(?:_default)?$", re.IGNORECASE)
LITERALS = {"eta": 0.5, "beta": 2.0}

PENDING_ONE_MINUS_ETA: dict[str, str] = {}
PENDING_IS_ZEUS: dict[str, str] = {}
PENDING_LITERAL_DEFAULTS: dict[str, str] = {}


def _package_files() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _library_files() -> list[Path]:
    """The package, the analysis and the workflow's scripts: every place a default could be set."""
    return [
        *_package_files(),
        *sorted((REPO / "analysis").rglob("*.py")),
        *sorted((REPO / "workflows").rglob("*.py")),
    ]


def _rel(path: Path) -> str:
    return path.resolve().relative_to(REPO).as_posix()


def one_minus_eta(source: str) -> list[int]:
    """Lines of ``source`` that write ``1 - eta`` (code, comment or docstring)."""
    return [i for i, line in enumerate(source.splitlines(), 1) if ONE_MINUS_ETA.search(line)]


def is_zeus(source: str) -> list[int]:
    """Lines of ``source`` that test a class's identity against ``Zeus``."""
    return [i for i, line in enumerate(source.splitlines(), 1) if IS_ZEUS.search(line)]


def _knob(name: str) -> str | None:
    """``"eta"`` or ``"beta"`` when ``name`` names an eta or a beta (or their default)."""
    if ETA_NAME.match(name):
        return "eta"
    if BETA_NAME.match(name):
        return "beta"
    return None


def _is_literal(node: ast.AST | None, knob: str | None) -> bool:
    """Whether ``node`` is the literal default of ``knob`` (``0.5`` for eta, ``2.0``/``2`` for beta)."""
    if knob is None or node is None:
        return False
    if isinstance(node, ast.Call) and node.keywords:  # dataclasses.field(default=0.5)
        return any(k.arg == "default" and _is_literal(k.value, knob) for k in node.keywords)
    if isinstance(node, (ast.List, ast.Tuple)) and node.elts:  # default=[0.5], etas=(0.5,)
        return all(_is_literal(e, knob) for e in node.elts)
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, (int, float))
        and not isinstance(node.value, bool)
        and float(node.value) == LITERALS[knob]
    )


def _flag_knob(value: ast.AST) -> str | None:
    """The knob an ``add_argument`` flag (``"--eta"``, ``"--default-beta"``) names, if any."""
    if isinstance(value, ast.Constant) and isinstance(value.value, str) and value.value.startswith("-"):
        return _knob(value.value.lstrip("-").replace("-", "_"))
    return None


def _text(node: ast.AST | None) -> str:
    """The string of a string literal, else ``""``."""
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""


def literal_defaults(source: str) -> list[tuple[int, str]]:
    """(line, what) of every eta/beta default written as a literal in ``source``."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            args = node.args
            positional = [*args.posonlyargs, *args.args]
            pairs = list(zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True))
            pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None]
            found += [(d.lineno, f"parameter {a.arg}") for a, d in pairs if _is_literal(d, _knob(a.arg))]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if _is_literal(node.value, _knob(node.target.id)):
                found.append((node.lineno, f"field {node.target.id}"))
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and _is_literal(node.value, _knob(target.id)):
                    found.append((node.lineno, f"constant {target.id}"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            method = node.func.attr
            if method == "add_argument":
                knobs = {_flag_knob(a) for a in node.args} - {None}
                found += [
                    (node.lineno, f"add_argument default of --{k}")
                    for k in sorted(knobs)  # type: ignore[type-var]
                    for kw in node.keywords
                    if kw.arg == "default" and _is_literal(kw.value, k)
                ]
            elif method == "set_defaults":
                found += [
                    (node.lineno, f"set_defaults {kw.arg}")
                    for kw in node.keywords
                    if kw.arg and _is_literal(kw.value, _knob(kw.arg))
                ]
            elif method in {"get", "pop", "setdefault"} and len(node.args) == 2:
                key = _text(node.args[0])
                if key and _is_literal(node.args[1], _knob(key)):
                    found.append((node.lineno, f"{method}({key!r}, literal)"))
        elif isinstance(node, ast.Dict):  # {"eta": 0.5, ...}: settings spelled out
            found += [
                (v.lineno, f"dict entry {_text(k)!r}")
                for k, v in zip(node.keys, node.values, strict=True)
                if _text(k) and _is_literal(v, _knob(_text(k)))
            ]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr":
            name = _text(node.args[1]) if len(node.args) == 3 else ""
            if name and _is_literal(node.args[2], _knob(name)):
                found.append((node.lineno, f"getattr(..., {name!r}, literal)"))
    return sorted(found)


def _violations(files: Iterable[Path], check, allowed: Iterable[str] = ()) -> dict[str, list]:  # type: ignore[no-untyped-def]
    allowed = tuple(allowed)
    out: dict[str, list] = {}  # type: ignore[type-arg]
    for path in files:
        rel = _rel(path)
        if rel.startswith(allowed):
            continue
        hits = check(path.read_text())
        if hits:
            out[rel] = hits
    return out


def _assert_matches_pending(found: dict[str, list], pending: dict[str, str], rule: str) -> None:  # type: ignore[type-arg]
    new = {f: hits for f, hits in found.items() if f not in pending}
    stale = sorted(set(pending) - set(found))
    assert not new, f"{rule}: violations not in PENDING (file: lines): {new}"
    assert not stale, f"{rule}: PENDING files that no longer violate (remove them): {stale}"


def test_one_minus_eta_only_in_the_cost_module() -> None:
    found = _violations(_package_files(), one_minus_eta, allowed=(COST_MODULE,))
    _assert_matches_pending(found, PENDING_ONE_MINUS_ETA, "1 - eta outside the cost module")
    assert one_minus_eta((REPO / COST_MODULE).read_text()), "the cost module states the formula"


def test_no_dispatch_by_identity_against_zeus() -> None:
    _assert_matches_pending(_violations(_package_files(), is_zeus), PENDING_IS_ZEUS, "`is Zeus`")


def test_no_literal_eta_or_beta_default_outside_core() -> None:
    found = _violations(_library_files(), literal_defaults, allowed=(DEFAULTS_HOME,))
    _assert_matches_pending(found, PENDING_LITERAL_DEFAULTS, "literal eta/beta default")


def test_the_defaults_live_in_core() -> None:
    from zeus_bench.core.cost import DEFAULT_BETA, DEFAULT_ETA

    assert (DEFAULT_ETA, DEFAULT_BETA) == (0.5, 2.0)
    assert literal_defaults((REPO / COST_MODULE).read_text()) == [
        (33, "constant DEFAULT_ETA"),
        (34, "constant DEFAULT_BETA"),
    ]


# The checkers, each on a hand-made violation (and on the forms that are not one).


@pytest.mark.parametrize(
    ("line", "hit"),
    [
        ("k = eta * e + (1 - eta) * p * t", True),
        ("k = (1.0-eta) * p", True),
        ("    ``(1 - eta) x MAXPOWER x time``", True),
        ("k = (1 - beta)", False),
        ("k = 1 - etas[0]", False),
        ("k = 11 - eta_j", False),
    ],
)
def test_the_formula_check_catches_a_copy(line: str, hit: bool) -> None:
    assert bool(one_minus_eta(f"x = 1\n{line}\n")) is hit


@pytest.mark.parametrize(
    ("line", "hit"),
    [
        ("if policy_cls is Zeus:", True),
        ("fast = cls is not Zeus", True),
        ("if issubclass(policy_cls, Zeus):", False),
        ("this is ZeusPlus", False),
    ],
)
def test_the_identity_check_catches_is_zeus(line: str, hit: bool) -> None:
    assert bool(is_zeus(line)) is hit


@pytest.mark.parametrize(
    ("source", "what"),
    [
        ("def f(x, eta=0.5): pass", "parameter eta"),
        ("def f(x, *, beta: float = 2.0): pass", "parameter beta"),
        ("def f(beta=2): pass", "parameter beta"),
        ("f = lambda eta=0.5: eta", "parameter eta"),
        ("class C:\n    eta: float = 0.5\n", "field eta"),
        ("class C:\n    beta: float = field(default=2.0)\n", "field beta"),
        ("DEFAULT_ETA = 0.5", "constant DEFAULT_ETA"),
        ("_DEFAULT_BETA = 2.0", "constant _DEFAULT_BETA"),
        ("p.add_argument('--eta', type=float, default=0.5)", "add_argument default of --eta"),
        ("p.add_argument('-b', '--beta', default=2.0)", "add_argument default of --beta"),
        ("p.set_defaults(eta=0.5)", "set_defaults eta"),
        ("eta = config.get('eta', 0.5)", "get('eta', literal)"),
        ("eta = getattr(args, 'beta', 2.0)", "getattr(..., 'beta', literal)"),
        ("p.add_argument('--etas', type=float_list, default=[0.5])", "add_argument default of --eta"),
        ("def f(betas=(2.0,)): pass", "parameter betas"),
        ("knobs = {'seed': 1, 'eta': 0.5}", "dict entry 'eta'"),
    ],
)
def test_the_default_check_catches_a_literal(source: str, what: str) -> None:
    assert [w for _, w in literal_defaults(source)] == [what]


@pytest.mark.parametrize(
    "source",
    [
        "def f(eta=DEFAULT_ETA, beta=DEFAULT_BETA): pass",
        "def f(eta=0.25, beta=3.0): pass",
        "def f(noise=0.5, window=2.0, theta=0.5): pass",
        "p.add_argument('--warmup-s', default=2.0)",
        "p.add_argument('--eta', default=None, help='default 0.5')",
        "simulate(eta=0.5)",  # a value passed, not a default
        "x = d.get('alpha', 0.5)",
        "class C:\n    beta: float = field(default=DEFAULT_BETA)\n",
        "def f(etas=(0.5, 1.0)): pass",
        "knobs = {'eta': 1.0, 'noise': 0.5}",
    ],
)
def test_the_default_check_passes_what_is_no_literal_default(source: str) -> None:
    assert literal_defaults(source) == []


def test_pending_mismatch_fails_both_ways() -> None:
    with pytest.raises(AssertionError, match="not in PENDING"):
        _assert_matches_pending({"a.py": [1]}, {}, "rule")
    with pytest.raises(AssertionError, match="no longer violate"):
        _assert_matches_pending({}, {"a.py": "fixed elsewhere"}, "rule")
    _assert_matches_pending({"a.py": [1]}, {"a.py": "pending"}, "rule")


def test_the_config_schemas_defaults_are_cores() -> None:
    """A JSON schema cannot import Python: its eta/beta defaults must equal ``zeus_bench.core.cost``'s."""
    import json

    from zeus_bench.core.cost import DEFAULT_BETA, DEFAULT_ETA

    found = {}
    for path in sorted((REPO / "config").glob("*.schema.json")):
        props = json.loads(path.read_text()).get("properties", {})
        found |= {
            f"{path.name}:{k}": props[k]["default"] for k in ("eta", "beta") if "default" in props.get(k, {})
        }
    assert found["config.schema.json:eta"] == DEFAULT_ETA
    assert {v for k, v in found.items() if k.endswith(":eta")} == {DEFAULT_ETA}
    assert {v for k, v in found.items() if k.endswith(":beta")} == {DEFAULT_BETA}


# --- signatures and lengths (issue 38, item 4) -----------------------------------------------

#: Most parameters a function may take (``self``/``cls`` not counted; ``*args``, ``**kwargs`` count one each).
MAX_PARAMETERS = 8
#: Most lines a function may span (decorators included); argparse registration (a function that
#: calls ``add_argument``/``add_parser``) is exempt.
MAX_LINES = 80
#: Functions still over a limit ("path:name" -> what): this list may only shrink.
PENDING_LONG: dict[str, str] = {}

_REGISTRATION = {"add_argument", "add_parser", "add_argument_group"}


def _too_long(source: str) -> dict[str, str]:
    """Functions of ``source`` over :data:`MAX_PARAMETERS` or :data:`MAX_LINES` (name -> what)."""
    out: dict[str, str] = {}
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        a = node.args
        names = [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
        if names and names[0] in ("self", "cls"):
            names = names[1:]
        params = len(names) + (a.vararg is not None) + (a.kwarg is not None)
        start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        lines = (node.end_lineno or node.lineno) - start + 1
        registers = any(
            isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr in _REGISTRATION
            for c in ast.walk(node)
        )
        what = [f"{params} parameters"] * (params > MAX_PARAMETERS)
        what += [f"{lines} lines"] * (lines > MAX_LINES and not registers)
        if what:
            out[node.name] = ", ".join(what)
    return out


def test_no_function_over_8_parameters_or_80_lines() -> None:
    """The package and the analysis: every function within the limits, but the pending ones."""
    found = {
        f"{path.relative_to(REPO).as_posix()}:{name}": what
        for path in [*_package_files(), *sorted((REPO / "analysis").rglob("*.py"))]
        for name, what in _too_long(path.read_text(encoding="utf-8")).items()
    }
    new = sorted(set(found) - set(PENDING_LONG))
    assert not new, "over the limits: " + "; ".join(f"{k} ({found[k]})" for k in new)
    fixed = sorted(set(PENDING_LONG) - set(found))
    assert not fixed, f"within the limits now, drop from PENDING_LONG: {fixed}"


def test_the_length_check_catches_a_long_signature_and_body() -> None:
    nine = "def f(a, b, c, d, e, f, g, h, i):\n    pass\n"
    assert _too_long(nine) == {"f": "9 parameters"}
    assert _too_long("class C:\n    def m(self, a, b, c, d, e, f, g, h):\n        pass\n") == {}
    assert _too_long("def f(*args, **kwargs):\n    pass\n") == {}
    body = "def f():\n" + "    x = 1\n" * 80
    assert _too_long(body) == {"f": "81 lines"}
    registration = "def register(p):\n" + "    p.add_argument('--x')\n" * 80
    assert _too_long(registration) == {}
