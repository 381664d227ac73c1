"""Exact, cheaper equivalents of the two NumPy ``Generator`` calls the replay makes per try.

The replay's results must equal the paper's simulator bit for bit, so its random draws must come
from the same streams: the environment's ``integers(0, n)`` (which training path a try samples)
and the batch-size optimizer's ``choice(n, n, replace=False)`` (its visiting order of the arms).
NumPy spends microseconds of argument handling on each such call; here the same numbers are
computed from the generator's raw 64-bit outputs (``bit_generator.random_raw``), fetched in
blocks, with the published algorithms NumPy documents for these calls:

* bounded integers: Lemire's multiply-and-reject method on 32-bit words (D. Lemire, "Fast Random
  Integer Generation in an Interval", ACM TOMACS 2019);
* sampling without replacement: R. Floyd's algorithm, then a Fisher-Yates shuffle of the sample,
  each step a bounded integer as above.

Only the :class:`numpy.random.PCG64` family is emulated (the bit generator of
``numpy.random.default_rng``); any other bit generator falls back to the NumPy call itself. The
equality with NumPy is a test (``tests/sim/test_sim_draws.py``), over many seeds and sizes and
through the rare rejection branch.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Iterator
from itertools import repeat
from operator import and_, lt, mul

import numpy as np

MASK32 = 0xFFFFFFFF
_EXACT_BIT_GENERATORS = (np.random.PCG64, np.random.PCG64DXSM)
# Floyd's algorithm is what Generator.choice uses without replacement up to this population.
FLOYD_MAX_POPULATION = 10_000
LITTLE_ENDIAN = sys.byteorder == "little"  # a 64-bit output viewed as two words: low, then high
REJECT_SET_MAX_N = 64  # up to here, a permutation's rejectable words are few enough to list


def rejected_words(span: int) -> list[int]:
    """Every 32-bit word that Lemire's method rejects for a range of ``span`` values.

    A word ``w`` is rejected when ``(w * span) mod 2**32 < 2**32 mod span``: at most ``span``
    words, the solutions of ``w * span = r (mod 2**32)`` for each such ``r``.
    """
    threshold = (1 << 32) % span
    g = span & -span  # gcd(span, 2**32)
    modulus = (1 << 32) // g
    inverse = pow(span // g, -1, modulus) if modulus > 1 else 0
    words: list[int] = []
    for r in range(0, threshold, g):
        w0 = (r // g) * inverse % modulus
        words.extend(w0 + k * modulus for k in range(g))
    return words


@functools.cache
def rejectable_words(n: int) -> frozenset[int]:
    """Every 32-bit word that some bounded draw of a permutation of ``n`` (spans 2..n) rejects."""
    return frozenset(w for span in range(2, n + 1) for w in rejected_words(span))


def lemire_accept(m: int, span: int, next_word: Callable[[], int]) -> int:
    """Lemire's rejection step: the accepted product from a first product ``m = word x span``.

    NumPy's ``integers(0, span)`` (a span below 2**32) takes a 32-bit word ``w``, forms
    ``m = w * span`` and returns ``m >> 32`` unless ``m``'s low word is below ``2**32 mod span``,
    when it takes the next word instead. The low word below ``span`` is the cheap first test
    (``2**32 mod span < span``).
    """
    if (m & MASK32) < span:
        threshold = (1 << 32) % span
        while (m & MASK32) < threshold:
            m = next_word() * span
    return m


def emulated(rng: np.random.Generator) -> bool:
    """Whether this module reproduces ``rng``'s draws (a PCG64-family bit generator)."""
    return type(rng.bit_generator) in _EXACT_BIT_GENERATORS


class PathDraws:
    """``rng.integers(0, n)`` one call at a time, from raw outputs fetched ``block`` at a time.

    NumPy's scalar ``integers`` takes 32-bit words from the bit generator's buffer: the low word
    of a 64-bit output, then (at the next call or on a rejection) its high word. The generator
    must not be used by anyone else afterwards: outputs fetched ahead are consumed only here.
    ``n == 1`` draws nothing.
    """

    def __init__(self, rng: np.random.Generator, block: int = 256) -> None:
        """Wrap ``rng`` (owned from now on; it must not hold a buffered word yet)."""
        self._rng = rng
        self._raw = rng.bit_generator.random_raw
        self._block = block
        self._buf: list[int] = []
        self._pos = 0
        self._high: int | None = None
        self._exact = emulated(rng) and not rng.bit_generator.state["has_uint32"]

    def _word(self) -> int:
        high = self._high
        if high is not None:
            self._high = None
            return high
        if self._pos == len(self._buf):
            self._buf = self._raw(self._block).tolist()
            self._pos = 0
            self._block = min(self._block * 2, 1 << 14)
        r: int = self._buf[self._pos]
        self._pos += 1
        self._high = r >> 32
        return r & MASK32

    def __call__(self, n: int) -> int:
        """A uniform integer in ``[0, n)`` (``n`` in ``[1, 2**32]``), as ``rng.integers(0, n)``."""
        if not self._exact or n > 1 << 32:
            return int(self._rng.integers(0, n))
        if n == 1:
            return 0
        if n == 1 << 32:
            return self._word()
        return lemire_accept(self._word() * n, n, self._word) >> 32


def word_stream(rng: np.random.Generator) -> Iterator[int]:
    """The 32-bit words ``rng.integers`` takes, in its order: each 64-bit output's low, then high.

    Outputs are fetched in blocks; ``rng`` is owned from then on (like :class:`PathDraws`, whose
    words these are: ``rng`` must not hold a buffered word yet).
    """
    raw = rng.bit_generator.random_raw
    block = 64
    while True:
        for r in raw(block).tolist():
            yield r & MASK32
            yield r >> 32
        block = min(block * 4, 1 << 14)


class ChoiceDraws:
    """``rng.choice(n, n, replace=False)`` (a random permutation) drawn as NumPy draws it.

    NumPy takes each 32-bit word from the bit generator's own 32-bit buffer (half of a 64-bit
    output kept for the next call). That half is kept here between calls and written back by
    :meth:`sync`, which every outside use of the generator must be preceded by (the owner's
    ``rng`` property does it). Other draws on the generator that use whole 64-bit outputs (such
    as ``standard_normal``) leave the buffer alone and may be interleaved freely.
    """

    def __init__(self, rng: np.random.Generator) -> None:
        """Wrap ``rng``; its buffered 32-bit word is read at the first draw."""
        self._rng = rng
        self._raw = rng.bit_generator.random_raw
        self._exact = emulated(rng)
        self._loaded = False
        self._pending: int | None = None
        self._spans_cache: dict[int, list[int]] = {}

    def sync(self) -> None:
        """Write the buffered 32-bit word back into the generator (before any outside use)."""
        if not self._loaded:
            return
        bit_gen = self._rng.bit_generator
        state = dict(bit_gen.state)
        state["has_uint32"] = int(self._pending is not None)
        state["uinteger"] = 0 if self._pending is None else self._pending
        bit_gen.state = state
        self._loaded = False

    def _load(self) -> None:
        state = self._rng.bit_generator.state
        self._pending = int(state["uinteger"]) if state["has_uint32"] else None
        self._loaded = True

    def _words(self, count: int) -> list[int]:
        """The next ``count`` 32-bit words in the generator's order (low word, then high)."""
        first: list[int] = []
        if count and self._pending is not None:
            first.append(self._pending)
            self._pending = None
        outputs = (count - len(first) + 1) // 2
        if not outputs:
            return first
        raw = self._raw(outputs)
        if LITTLE_ENDIAN:
            words = first + raw.view(np.uint32).tolist()
        else:
            words = first + [w for r in raw.tolist() for w in (r & MASK32, r >> 32)]
        if len(words) > count:
            self._pending = words.pop()
        return words

    def _spans(self, n: int) -> list[int]:
        """Range sizes of the bounded draws of a permutation of n: Floyd's 2..n, then n..2."""
        spans = self._spans_cache.get(n)
        if spans is None:
            spans = self._spans_cache[n] = [*range(2, n + 1), *range(n, 1, -1)]
        return spans

    def skip(self, n: int) -> None:
        """Draw as :meth:`permutation` does, without computing the permutation."""
        if not self._exact or n > FLOYD_MAX_POPULATION or n <= 1:
            self.permutation(n)
            return
        if not self._loaded:
            self._load()
        pending = self._pending
        if pending is None and LITTLE_ENDIAN:  # n - 1 outputs are the 2n - 2 words, in order
            words = self._raw(n - 1).view(np.uint32).tolist()
        else:
            words = self._words(2 * n - 2)
        # Lemire's method rejects a word only if its low product falls below the span (rare):
        # for small n, only if it is one of a few listed words of some span (rarer still).
        if n <= REJECT_SET_MAX_N:
            if not rejectable_words(n).isdisjoint(words):
                self._permute(n, words)
            return
        spans = self._spans(n)
        if any(map(lt, map(and_, map(mul, words, spans), repeat(MASK32)), spans)):
            self._permute(n, words)

    def permutation(self, n: int) -> list[int]:
        """Equal to ``rng.choice(n, n, replace=False).tolist()``, with the same draws."""
        if not self._exact or n > FLOYD_MAX_POPULATION:
            self.sync()
            return [int(i) for i in self._rng.choice(n, n, replace=False)]
        if n <= 1:
            return [0] * n
        if not self._loaded:
            self._load()
        return self._permute(n, self._words(2 * n - 2))

    def _permute(self, n: int, words: list[int]) -> list[int]:
        """Floyd's sample and its shuffle from ``words`` (more are drawn after rejections)."""
        pos = 0

        def word() -> int:
            """The next 32-bit word (past the prefetched ones after a rejection)."""
            nonlocal pos
            if pos < len(words):
                pos += 1
                return words[pos - 1]
            return self._words(1)[0]

        def bounded(top: int) -> int:
            """Uniform integer in [0, top] (Lemire), from the next words."""
            span = top + 1
            return lemire_accept(word() * span, span, word) >> 32

        # Floyd: for j = 0 .. n-1 take a uniform value in [0, j], or j itself if already taken.
        taken: set[int] = {0}
        out = [0]
        for j in range(1, n):
            v = bounded(j)
            if v in taken:
                v = j
            taken.add(v)
            out.append(v)
        # Fisher-Yates shuffle of the sample, from the last position down.
        for i in range(n - 1, 0, -1):
            k = bounded(i)
            out[i], out[k] = out[k], out[i]
        return out


# --- standard normal draws ------------------------------------------------------------------
# ``Generator.standard_normal`` (NumPy's ziggurat for doubles) turns one 64-bit output ``r`` into
# a draw: strip ``idx = r & 0xff``, sign bit ``(r >> 8) & 1`` and 52-bit magnitude ``rabs = (r >>
# 9) & (2**52 - 1)``; the draw is ``+-rabs * w[idx]`` when ``rabs < k[idx]`` (the common case),
# else it takes further outputs (wedge or tail). The strip tables ``w`` and ``k`` are NumPy's; they
# are measured from NumPy itself (:func:`measure_normal_tables`, by steering a PCG64 generator to
# output chosen words) and stored in :mod:`zeus_bench.optimizers._ziggurat`; :func:`normal_tables`
# checks them against NumPy once per process and refuses them on any difference.

PCG64_MULTIPLIER = 0x2360ED051FC65DA44385DF649FCCF645  # PCG's 128-bit LCG multiplier
_MASK128 = (1 << 128) - 1
MASK52 = (1 << 52) - 1


def pcg64_steps_between(before: int, after: int, inc: int, limit: int = 64) -> int | None:
    """Outputs taken from PCG64 state ``before`` to ``after`` (None beyond ``limit``)."""
    for k in range(limit + 1):
        if before == after:
            return k
        before = (before * PCG64_MULTIPLIER + inc) & _MASK128
    return None


def _steered_normal(bit_gen: np.random.PCG64, gen: np.random.Generator, word: int) -> tuple[float, int]:
    """``standard_normal()`` of a PCG64 whose next output is ``word``, and the outputs it took."""
    inc = bit_gen.state["state"]["inc"]
    # XSL-RR of a state whose high half is 0 is its low half: step back from state ``word``.
    before = ((word - inc) * pow(PCG64_MULTIPLIER, -1, 1 << 128)) & _MASK128
    bit_gen.state = {
        "bit_generator": "PCG64", "state": {"state": before, "inc": inc}, "has_uint32": 0, "uinteger": 0,
    }  # fmt: skip
    x = float(gen.standard_normal())
    taken = pcg64_steps_between(before, bit_gen.state["state"]["state"], inc)
    return x, -1 if taken is None else taken


def measure_normal_tables() -> tuple[list[float], list[int]]:
    """NumPy's ziggurat strip widths ``w`` and thresholds ``k``, measured (about 0.1 s).

    ``w[idx]`` is the draw of ``rabs = 1`` (exact: one times the width); ``k[idx]`` is the smallest
    ``rabs`` whose draw takes more than one output, found by bisection.

    Raises:
        RuntimeError: NumPy's PCG64 or its normal draws do not behave as described above.
    """
    bit_gen = np.random.PCG64(0)
    gen = np.random.Generator(bit_gen)
    widths: list[float] = []
    thresholds: list[int] = []
    for idx in range(256):
        x, taken = _steered_normal(bit_gen, gen, idx | (1 << 9))
        if taken not in (1, 2):  # 2: the wedge test accepted the draw itself (a strip with k <= 1)
            raise RuntimeError(f"unexpected ziggurat draw at strip {idx}")
        widths.append(x)
        lo, hi = -1, 1 << 52  # fast(lo) (or lo = -1), not fast(hi); fast is monotone in rabs
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if _steered_normal(bit_gen, gen, idx | (mid << 9))[1] == 1:
                lo = mid
            else:
                hi = mid
        thresholds.append(hi)
    return widths, thresholds


def fast_normals(
    raw: np.ndarray, widths: np.ndarray, thresholds: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per 64-bit output, the normal draw it makes alone and whether it does (no further output)."""
    # The strip (low 8 bits) and the sign (bit 8) index tables of 512 entries: the signed width
    # makes -x at once (-0.0 for a zero magnitude, as NumPy's negation).
    # (The low 16 bits first: a narrower index array, read faster by the lookups below.)
    idx = raw.astype(np.uint16)
    idx &= 0x1FF
    magnitude = raw >> np.uint64(9)
    magnitude &= np.uint64(MASK52)
    x = magnitude.astype(np.float64)  # the magnitude: exact (< 2**52)
    limits = thresholds.astype(np.float64)  # thresholds <= 2**52: exact as doubles
    fast = x < np.concatenate([limits, limits])[idx]
    x *= np.concatenate([widths, -widths])[idx]
    return x, fast


def strip_densities(widths: np.ndarray) -> np.ndarray:
    """The density ``exp(-x**2 / 2)`` at each strip's edge ``x = w * 2**52`` (1 above strip 1).

    NumPy's wedge test accepts a draw ``x`` of strip ``i`` when ``(f[i-1] - f[i]) * u + f[i] <
    exp(-x * x / 2)`` (``u`` the next output as a double); these ``f`` are its densities up to
    rounding (tests/sim/test_sim_seed_zeus.py bounds the difference).
    """
    edges = widths * 2.0**52
    out = np.exp(-0.5 * edges * edges)
    out[0] = 1.0
    return out


@functools.cache
def normal_tables() -> tuple[np.ndarray, np.ndarray] | None:
    """The stored ziggurat tables as arrays, if they reproduce this NumPy's draws (else None).

    The check draws normals from 32 seeded PCG64 generators and recomputes each draw up to the
    first that takes more than one output, from the same outputs (fetched from a twin generator).
    :func:`measure_normal_tables` is the exact derivation (the tests compare the two).
    """
    from zeus_bench.optimizers._ziggurat import THRESHOLDS, WIDTHS

    widths = np.array(WIDTHS, dtype=np.float64)
    thresholds = np.array(THRESHOLDS, dtype=np.uint64)
    if widths.shape != (256,) or thresholds.shape != (256,):
        return None
    for seed in range(32):
        raw = np.random.PCG64(seed).random_raw(128)
        drawn = np.random.Generator(np.random.PCG64(seed)).standard_normal(128).tolist()
        x, fast = fast_normals(raw, widths, thresholds)
        for pos, value in enumerate(drawn):
            if not fast[pos]:
                break  # its outputs taken are not known here: the check of this stream ends
            if x[pos] != value:
                return None
    return widths, thresholds
