"""lowering/scores.py: the factored head columns score every key against every query exactly as the
selector's terms say, whichever blocks the cover picks, with and without sharing."""

from __future__ import annotations

from itertools import product

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rasp_compile.compiler.variables import CONSTANT, Var
from rasp_compile.compiler.lowering.scores import score_columns
from rasp_compile.compiler.lowering.scores import shared_block
from rasp_compile.compiler.selector_terms import PairTable, SelectorSpec, Term


@st.composite
def specs(draw):
    """An AND of 1-4 random tables over a pool of 1-3 small categorical variables."""
    pool = [
        Var(f"v{i}", "categorical", tuple(range(draw(st.integers(1, 4)))), draw(st.booleans()))
        for i in range(draw(st.integers(1, 3)))
    ]
    terms = []
    for _ in range(draw(st.integers(1, 4))):
        keys, queries = draw(st.sampled_from(pool)), draw(st.sampled_from(pool))
        held = [[k is not None and q is not None and draw(st.booleans()) for q in queries.domain] for k in keys.domain]
        table = PairTable(keys.domain, queries.domain, np.array(held, dtype=bool).reshape(len(keys.domain), -1))
        terms.append(Term(keys, queries, table))
    return SelectorSpec(tuple(terms))


def _value(form: dict, assignment: dict) -> float:
    """A linear form at a position where each variable holds assignment[var] (None: all zeros)."""
    return sum(a for f, a in form.items() if f is CONSTANT or assignment[f[0]] == f[1] and assignment[f[0]] is not None)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(specs(), st.booleans())
def test_columns_reproduce_the_terms(spec, share):
    score = score_columns(spec, shared_block if share else None)
    variables = list(dict.fromkeys(v for t in spec.terms for v in (t.keys, t.queries)))
    m = len(spec.terms)
    for key_values in product(*(v.domain for v in variables)):
        key = dict(zip(variables, key_values))
        for query_values in product(*(v.domain for v in variables)):
            query = dict(zip(variables, query_values))
            got = sum(_value(c.q, query) * _value(c.k, key) for c in score.columns)
            held = sum(t.table[(key[t.keys], query[t.queries])] for t in spec.terms)
            assert abs(got - (held - (m - 1))) < 1e-9


def test_terms_on_one_query_variable_share_its_dimensions():
    """Two comparisons of different keys with the same 5-value query: its rows (index 0's is
    zero, table_matrix) and the constant's, 4 + 1 columns shared, against 5 per term unshared."""
    index = Var("i", "categorical", tuple(range(5)))
    low, high = (Var(name, "categorical", tuple(range(6))) for name in ("low", "high"))
    k, q = np.arange(6)[:, None], np.arange(5)[None, :]
    at_most = Term(low, index, PairTable(low.domain, index.domain, k <= q))
    above = Term(high, index, PairTable(high.domain, index.domain, k > q))
    spec = SelectorSpec((at_most, above))
    assert len(score_columns(spec, shared_block).columns) == 5
    assert len(score_columns(spec).columns) == 10
