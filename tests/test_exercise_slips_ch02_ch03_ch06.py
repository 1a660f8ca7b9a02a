"""The likeliest slips of the softmax, logs and learning exercises, pinned apart from their ``solve()``.

Review 2026-12-03 (F19) found three plausible wrong answers that got only "too high/too low". Each is worked out here
by hand from the exercise's inputs, and must get a hint that names its own slip.
"""
import math

import pytest

from byhand.exercises import check

SLIPS = [
    # key, the wrong answer, a word its hint must contain, the slip
    ("softmax.2", math.e, "factor", "one point higher is e times as likely, taken as the new ratio"),
    ("learning.1", 0.5 - 0.5 * 0.2, "θ[0]", "θ₀ − η g₀ = 0.5 − 0.5 · 0.2: the first entry, not θ₁"),
    ("learning.2", -(0.2**2 + 0.4**2), "η", "−‖g‖² without the learning rate"),
]


@pytest.mark.parametrize("key, wrong, word, slip", SLIPS, ids=[s[0] for s in SLIPS])
def test_the_slip_gets_its_own_hint(key, wrong, word, slip):
    v = check(key, wrong)
    assert not v, f"{key}: {slip} is accepted"
    assert word in v.message and "too" not in v.message.split(":")[0], f"{key}: {slip} gets {v.message!r}"
