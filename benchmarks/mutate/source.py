"""Where in a module's source its mutants may fall: the chosen functions, off logging, off annotations."""

from __future__ import annotations

import ast


def spans(source: str, functions: list[str]) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Line spans of the named functions (``Class.method`` or ``function``) and of logging calls."""
    tree = ast.parse(source)
    wanted: list[tuple[int, int]] = []
    logging_calls: list[tuple[int, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                qual = f"{prefix}{child.name}"
                if qual in functions:
                    wanted.append((child.lineno, child.end_lineno or child.lineno))
                visit(child, qual + ".")
            else:
                if (
                    isinstance(child, ast.Expr)
                    and isinstance(child.value, ast.Call)
                    and isinstance(child.value.func, ast.Attribute)
                    and isinstance(child.value.func.value, ast.Name)
                    and child.value.func.value.id in ("log", "logger", "logging")
                ):
                    logging_calls.append((child.lineno, child.end_lineno or child.lineno))
                visit(child, prefix)

    visit(tree, "")
    return wanted, logging_calls


def annotation_spans(source: str) -> list[tuple[int, int, int, int]]:
    """(line, col, end line, end col) of every annotation (never evaluated: ``from __future__ import annotations``)."""
    found: list[tuple[int, int, int, int]] = []
    for node in ast.walk(ast.parse(source)):
        notes: list[ast.expr | None] = []
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            a = node.args
            notes += [x.annotation for x in [*a.posonlyargs, *a.args, *a.kwonlyargs]]
            notes += [a.vararg.annotation if a.vararg else None, a.kwarg.annotation if a.kwarg else None]
            notes.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            notes.append(node.annotation)
        for n in notes:
            if n is not None:
                found.append((n.lineno, n.col_offset, n.end_lineno or n.lineno, n.end_col_offset or 0))
    return found


def in_annotation(row: int, col: int, notes: list[tuple[int, int, int, int]]) -> bool:
    return any((a, b) <= (row, col) < (c, d) for a, b, c, d in notes)


def inside(line: int, spans: list[tuple[int, int]]) -> bool:
    return any(a <= line <= b for a, b in spans)
