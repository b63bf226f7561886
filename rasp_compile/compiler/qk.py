"""qk: query and key weights that score a selector exactly: S per term that holds, plus BOS.

One term: a table M[k, q] in {0, 1} over a categorical key variable K (values v) and query
variable Q (values u), none included. The residual holds one-hot(K) at a key position (all zeros
for none) and one-hot(Q) at a query. Take features with a constant appended:

    phi(key)   = [one-hot(K), 1]          psi(query) = [one-hot(Q), 1]

and look for A with psi(q)ᵀ A phi(k) = S * M[k, q] for every k, q, none included. Writing n for
none (its features are just the constant), the four cases pin A down:

    A[1, 1] = S M[n, n]                      A[1, v] = S (M[v, n] - M[n, n])
    A[u, 1] = S (M[n, u] - M[n, n])          A[u, v] = S (M[v, u] - M[v, n] - M[n, u] + M[n, n])

Check for a value pair: A[u,v] + A[u,1] + A[1,v] + A[1,1] = S M[v, u]; the none cases are the
rows and columns above by construction. QED. Where K (or Q) cannot be none, M[n, .] is ours to
choose: we copy the first value's row, which zeroes that value's column of A, and rows or
columns of A that are zero need no feature. A factors as q = psi·A, k = phi (or q = psi,
k = A·phi, whichever side is narrower), so a term costs min(#rows, #columns) head dimensions.

A conjunction of terms concatenates their features: scores add, a key is selected exactly
when it scores m * S (m terms), and any other key scores at most (m - 1) * S.

BOS: one more column. Its key feature is 1 at BOS only; its query feature is the constant
`bos_score`, so BOS scores (m - 1/2) S against every query for an aggregate (it wins only when
no key is selected: the default) or m S for selector_width (it ties with the selected keys).
At the BOS query itself the score of BOS is `bos_self` and every other key's is 0, so the BOS
position reads only itself and its residual stays input-independent (assemble.py relies on it).

Every ordinary key's score and BOS's are then lowered by (m - 1) S, through the constant
features: softmax ignores a shift common to a row, and the highest score a head can produce stays
near S, so exponentiating scores without subtracting the row maximum cannot overflow float32.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .ops import Var
from .layout import Layout
from .selectors import SelectorSpec, Term


@dataclass
class QK:
    """q = x w_q + b_q, k = x w_k + b_k ([d_model, d] and [d]); q_bos, k_bos: their values at BOS."""

    w_q: np.ndarray
    b_q: np.ndarray
    w_k: np.ndarray
    b_k: np.ndarray
    q_bos: np.ndarray
    k_bos: np.ndarray


def score_weights(spec: SelectorSpec, layout: Layout, sharpness: float, bos_score: float, bos_self: float) -> QK:
    """Scores sharpness * (number of terms that hold) for ordinary keys, `bos_score` for BOS,
    both lowered by (m - 1) * sharpness (m terms): softmax does not see a shift common to every
    key, and it keeps every score a head can reach below about 40, so even a forward pass that
    exponentiates scores without subtracting the row maximum stays finite in float32.

    `bos_score` and `bos_self` are in units of absolute score (already multiplied by sharpness)."""
    shift = (len(spec.terms) - 1) * sharpness
    parts = [_term_qk(term, layout, sharpness, shift if i == 0 else 0.0) for i, term in enumerate(spec.terms)]
    d = sum(p.w_q.shape[1] for p in parts) + 1
    qk = QK(*(np.zeros(shape) for shape in [(layout.d_model, d), d, (layout.d_model, d), d, d, d]))
    col = 0
    for part in parts:
        width = part.w_q.shape[1]
        for name in ("w_q", "b_q", "w_k", "b_k"):
            getattr(qk, name)[..., col : col + width] = getattr(part, name)
        col += width
    # The BOS column: key feature 1 at BOS only, query feature the constant bos_score.
    qk.b_q[col] = bos_score - shift
    qk.k_bos[col] = 1.0
    qk.q_bos[col] = bos_self
    return qk


def _table_matrix(term: Term, sharpness: float) -> np.ndarray:
    """A as derived above, [len(Q.values) + 1, len(K.values) + 1], the constant row/column last."""
    keys, queries = term.keys, term.queries
    first_key = None if keys.may_be_none else keys.values[0]
    first_query = None if queries.may_be_none else queries.values[0]

    def m(k, q) -> float:
        k = first_key if k is None else k
        q = first_query if q is None else q
        return float(term.table[(k, q)])

    ks = list(keys.values) + [None]
    qs = list(queries.values) + [None]
    a = np.zeros((len(qs), len(ks)))
    for i, q in enumerate(qs):
        for j, k in enumerate(ks):
            a[i, j] = m(k, q)
            if q is not None:
                a[i, j] -= m(k, None)
            if k is not None:
                a[i, j] -= m(None, q)
            if q is not None and k is not None:
                a[i, j] += m(None, None)
    return sharpness * a


def _features(var: Var, layout: Layout, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The kept features of [one-hot(var), 1] as (w [d_model, f], b [f])."""
    rows = layout.dims(var) + [None]
    kept = [r for r, k in zip(rows, keep) if k]
    w = np.zeros((layout.d_model, len(kept)))
    b = np.zeros(len(kept))
    for col, row in enumerate(kept):
        if row is None:
            b[col] = 1.0
        else:
            w[row, col] = 1.0
    return w, b


def _position_qk(term: Term, layout: Layout, sharpness: float) -> QK:
    """S - S (index - target)^2 = 2S index·target - S index^2 + S (1 - target^2): S where the
    index is the target, at most 0 elsewhere (indices are whole numbers). With `match` = 1 -
    target^2 for a value and 0 for none (selectors.position_term):

        indices as keys:     q = [2S target, -S, S match]      k = [index, index^2, 1]
        indices as queries:  q = [2S index, S, -S index^2]     k = [target, match, 1]
    """
    p = term.by_position
    position, squared, target, match = (layout.dims(v)[0] for v in (p.position, p.position_squared, p.target, p.match))
    s = sharpness
    w_q, w_k = np.zeros((layout.d_model, 3)), np.zeros((layout.d_model, 3))
    b_k = np.array([0.0, 0.0, 1.0])
    if p.positions_are_keys:
        b_q = np.array([0.0, -s, 0.0])
        w_q[target, 0], w_q[match, 2] = 2 * s, s
        w_k[position, 0], w_k[squared, 1] = 1.0, 1.0
    else:
        b_q = np.array([0.0, s, 0.0])
        w_q[position, 0], w_q[squared, 2] = 2 * s, -s
        w_k[target, 0], w_k[match, 1] = 1.0, 1.0
    return QK(w_q, b_q, w_k, b_k, np.zeros(3), np.zeros(3))


def _term_qk(term: Term, layout: Layout, sharpness: float, shift: float) -> QK:
    """The term's q/k columns, its every score lowered by `shift` (through the constant
    features, which every ordinary key has and BOS, compensated, does not)."""
    if term.by_position:
        qk = _position_qk(term, layout, sharpness)
        qk.b_q[2] -= shift  # the q feature that meets k's constant 1
        return qk
    a = _table_matrix(term, sharpness)
    a[-1, -1] -= shift  # constant x constant
    rows, cols = np.any(a != 0, axis=1), np.any(a != 0, axis=0)
    a = a[rows][:, cols]
    w_q, b_q = _features(term.queries, layout, rows)
    w_k, b_k = _features(term.keys, layout, cols)
    if a.shape[0] <= a.shape[1]:  # q = psi, k = A phi
        w_k, b_k = w_k @ a.T, b_k @ a.T
    else:  # q = psi A, k = phi
        w_q, b_q = w_q @ a, b_q @ a
    d = w_q.shape[1]
    return QK(w_q, b_q, w_k, b_k, np.zeros(d), np.zeros(d))
