"""Figure files that do not depend on the machine's floating point.

The layout engine (constrained layout, legend placement) solves for positions in floating point,
and another CPU, or the same libraries built for another instruction set, can move a coordinate in
its sixth decimal: matplotlib writes path coordinates to the PDF with six decimals and other
numbers with ten, so the file's bytes change although nothing visible did (issue 23: the committed
``results/figures/pareto-v100.pdf`` came out modified on a second machine).

:func:`stable_pdf_numbers` rounds every number matplotlib writes into a PDF to
:data:`PDF_DECIMALS` decimals of a point (0.01 pt = 3.5 micrometres on paper, far below anything
a viewer or printer resolves; colours to 1/100 of their range, under 3/255). A coordinate that
moves by 1e-6 pt then changes the file only if it lies within 1e-6 of a rounding boundary (about
1 in 5,000 such coordinates), instead of always.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: Decimals of every number written to a PDF (points, colours, line widths).
PDF_DECIMALS = 2

_NUMBER = re.compile(rb"-?\d+\.\d+")


def round_number(value: float, decimals: int = PDF_DECIMALS) -> float:
    """``value`` rounded to ``decimals``, with -0.0 written as 0."""
    return round(float(value), decimals) + 0.0


def round_numbers_in(text: bytes, decimals: int = PDF_DECIMALS) -> bytes:
    """Every decimal number in a PDF content fragment (``b"12.345678 3 m"``) rounded to ``decimals``."""

    def repl(match: re.Match[bytes]) -> bytes:
        out = b"%.*f" % (decimals, round_number(float(match.group()), decimals))
        return out.rstrip(b"0").rstrip(b".") if b"." in out else out

    return _NUMBER.sub(repl, text)


@contextmanager
def stable_pdf_numbers(decimals: int = PDF_DECIMALS) -> Iterator[None]:
    """While active, matplotlib's PDF backend writes every number rounded to ``decimals``.

    Two places write numbers: ``pdfRepr`` (text positions, transforms, colours, widths) and
    ``PdfFile.pathOperations`` (path coordinates, written by matplotlib's C code); both are
    wrapped, and restored on exit.
    """
    import numpy as np
    from matplotlib.backends import backend_pdf

    original_repr = backend_pdf.pdfRepr
    original_paths = backend_pdf.PdfFile.pathOperations

    isfinite, floats = math.isfinite, (float, np.floating)

    def pdf_repr(obj: Any) -> Any:  # (called for every number of a PDF: no NumPy call on a scalar)
        if isinstance(obj, floats) and isfinite(obj):
            obj = round_number(float(obj), decimals)
        return original_repr(obj)

    def path_operations(*args: Any, **kwargs: Any) -> list[Any]:
        ops = original_paths(*args, **kwargs)
        return [backend_pdf.Verbatim(round_numbers_in(op.pdfRepr(), decimals)) for op in ops]

    backend_pdf.pdfRepr = pdf_repr
    backend_pdf.PdfFile.pathOperations = staticmethod(path_operations)  # type: ignore[method-assign]
    try:
        yield
    finally:
        backend_pdf.pdfRepr = original_repr
        backend_pdf.PdfFile.pathOperations = staticmethod(original_paths)  # type: ignore[method-assign]
