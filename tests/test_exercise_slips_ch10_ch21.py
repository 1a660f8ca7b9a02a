"""The likeliest slips of tokens.1 and dffn.1, pinned apart from their ``solve()``.

Review 2026-12-03 (F19) found two plausible wrong answers that got only "too high/too low". Each is worked out here by
hand from the exercise's inputs (or, for dffn.1, from the values the chapter prints), and must get a hint that names
its own slip.
"""
import pytest

from byhand.exercises import check

# tokens.1 at width 8 (d_ff = 32), ten tokens, context 5, two heads, one block, a separate W_out
_FULL = 10 * 8 + 5 * 8 + 4 * 8 * 8 + 4 * 8 + 2 * 2 * 8 + 8 * 32 + 32 + 32 * 8 + 8 + 2 * 8 + 8 * 10

SLIPS = [
    # key, the wrong answer, a word its hint must contain, the slip
    ("tokens.1", _FULL - 5 * 8, "position table P", "the 5 × 8 position table left out"),
    ("tokens.1", _FULL - 32 - 8, "b_1", "the feed-forward biases b_1 (32) and b_2 (8) left out"),
    # ch21 prints ã[3, 62] = -0.57042, da = -0.06275, dã = -0.00571: GELU'(ã) alone is dã / da
    ("dffn.1", 0.0910, "alone", "GELU'(ã) without the factor da"),
]


@pytest.mark.parametrize("key, wrong, word, slip", SLIPS, ids=[f"{s[0]}-{s[1]}" for s in SLIPS])
def test_the_slip_gets_its_own_hint(key, wrong, word, slip):
    v = check(key, wrong)
    assert not v, f"{key}: {slip} is accepted"
    assert word in v.message and "too" not in v.message.split(":")[0], f"{key}: {slip} gets {v.message!r}"
