"""holds_word: an output holding a rejectable word in its low or high half, found as np.isin finds it."""

from __future__ import annotations

import numpy as np
import pytest

from zeus_bench.optimizers.rng import rejectable_words
from zeus_bench.optimizers.streams import _FEW_WORDS, holds_word

_LOW = np.uint64(0xFFFFFFFF)


@pytest.mark.parametrize("arms", [9, 40])  # a few words (one comparison each), and many (np.isin)
def test_low_and_high_words_found(arms: int) -> None:
    words = np.array(sorted(rejectable_words(arms)), dtype=np.uint64)
    assert (len(words) <= _FEW_WORDS) == (arms == 9)
    raw = np.random.PCG64(arms).random_raw((5, 64))
    raw[1, 3] = (int(words[1]) << 32) | 5  # high word
    raw[2, 7] = int(words[-1])  # low word
    raw[4, 63] = (int(words[0]) << 32) | int(words[0])  # both
    expected = np.isin(raw & _LOW, words) | np.isin(raw >> np.uint64(32), words)
    assert sorted(zip(*np.nonzero(expected), strict=True)) == [(1, 3), (2, 7), (4, 63)]
    assert holds_word(raw, words).tolist() == expected.tolist()
    assert holds_word(raw[:, ::3], words).tolist() == expected[:, ::3].tolist()  # a strided view
