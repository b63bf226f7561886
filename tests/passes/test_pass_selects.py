"""position-selects and compact-heads on tiny selectors: what they make of a term or a score,
and what they leave as it is."""

from __future__ import annotations

import pytest

from rasp_compile.compiler.lowering.rewrites import TermSite
from rasp_compile.compiler.lowering.scores import score_columns, shared_block
from rasp_compile.compiler.lowering.selectors import normalize_selector
from rasp_compile.compiler.passes import position_selects
from rasp_compile.compiler.selector_terms import SelectorSpec

from tiny import lowering_of

SHIFT = """
vocab {a, b}
max_len 5
{causal}
prev = aggregate(select(indices, indices, lambda k, q: k == q - 1), tokens, default="a")
upto = aggregate(select(indices, indices, <=), tokens, default="a")
same = aggregate(select(tokens, tokens, ==), tokens)
output sequence_map(lambda p, u: p if u == "a" else u, prev, sequence_map(lambda u, s: u, upto, same))
"""


def _term(state, node_label: str):
    """The one plain term of the selector of the aggregate labelled `node_label`."""
    node = next(n for n in state.vars if n.label == node_label)
    (term,) = normalize_selector(node.selector, state).terms
    return term


def test_position_term_scores_a_shift_from_position_features():
    state, _ = lowering_of(SHIFT.replace("{causal}", ""))
    plain = _term(state, "prev")
    matched = position_selects.position_term(state, TermSite(plain))
    assert plain.by_position is None and matched.by_position is not None
    assert matched.table is plain.table  # the same selection, scored another way
    assert {v.label for v in matched.reads()} >= {"indices.value", "indices.value^2"}


def test_position_term_leaves_a_select_that_matches_many_indices_alone():
    state, _ = lowering_of(SHIFT.replace("{causal}", ""))
    for label in ("upto", "same"):  # k <= q matches several keys; tokens are not indices
        term = _term(state, label)
        assert position_selects.position_term(state, TermSite(term)) is None


def test_causal_term_makes_a_select_the_mask_decides_true():
    state, _ = lowering_of(SHIFT.replace("{causal}", "causal"))
    upto = position_selects.causal_term(state, TermSite(_term(state, "upto")))
    assert upto.table.held.all()
    shift = _term(state, "prev")  # k == q - 1 does not hold for every earlier key
    assert position_selects.causal_term(state, TermSite(shift)) is None
    state, _ = lowering_of(SHIFT.replace("{causal}", ""))  # without the mask, k <= q stays a comparison
    term = _term(state, "upto")
    assert position_selects.causal_term(state, TermSite(term)) is None


def test_compact_heads_shares_a_variable_two_terms_read():
    state, _ = lowering_of(SHIFT.replace("{causal}", ""))
    same = _term(state, "same")
    both = SelectorSpec((same, same))  # two terms on tokens: the shared factoring reads tokens once
    shared, own = score_columns(both, shared_block), score_columns(both)
    assert len(shared.columns) < len(own.columns)
    single = SelectorSpec((same,))  # one term: nothing to share
    assert len(score_columns(single, shared_block).columns) == len(score_columns(single).columns)


LONG_SHIFT = """vocab {a, b}
max_len MAX_LEN
shifted = aggregate(select(indices, indices, lambda k, q: k == q - 2), tokens, default="a")
output shifted
"""


@pytest.mark.parametrize("max_len, by_digits", [(1_024, False), (1_100, True)])
def test_the_plain_match_is_kept_while_float32_carries_it_and_digits_past_it(max_len, by_digits):
    state, _ = lowering_of(LONG_SHIFT.replace("MAX_LEN", str(max_len)))
    node = next(n for n in state.vars if n.label == "shifted")
    (term,) = normalize_selector(node.selector, state).terms
    match = position_selects.position_term(state, TermSite(term)).by_position
    assert bool(match.more) is by_digits
    labels = {v.label for v in match.positions()}
    assert labels == ({"indices.high", "indices.low", "indices.digit_norm"} if by_digits
                      else {"indices.value", "indices.value^2"})


WIDTH_TO_INDEX = """vocab {1, 2, 3}
max_len MAX_LEN
smaller = selector_width(select(tokens, tokens, <))
placed = aggregate(select(smaller, indices, ==), tokens)
output placed
"""


@pytest.mark.parametrize("max_len, bits", [(36, 0), (37, 6), (64, 7)])
def test_a_width_the_plain_match_cannot_carry_is_matched_bit_by_bit(max_len, bits):
    """Up to 36 the plain match carries the width's steps; past it the index and the width are
    compared by their K Gray bits (K = max_len.bit_length()): one pair of features per bit, the
    index's bits and their count as position features. A split's heads never get it."""
    state, _ = lowering_of(WIDTH_TO_INDEX.replace("MAX_LEN", str(max_len)))
    term = _term(state, "placed")
    match = position_selects.position_term(state, TermSite(term)).by_position
    labels = {v.label for v in match.positions()}
    if not bits:
        assert labels == {"indices.value", "indices.value^2"}
        return
    assert 1 + len(match.more) == bits and match.match == {}
    assert labels == {f"indices.gray{k}" for k in range(bits)} | {"indices.gray_ones"}
    split = position_selects.position_term(state, TermSite(term, shared=frozenset({term.keys})))
    assert split is None
