"""The primitives' named bases: a head or MLP slice built with a swapped array, or a weight
written to a dimension the layout does not have, fails where it is made."""

from __future__ import annotations

import numpy as np
import pytest

from rasp_compile.compiler.layout import Layout
from rasp_compile.compiler.primitives.pieces import MLP, Head


def _head(**changes) -> Head:
    d_model, d_qk, d_v = 5, 3, 2
    arrays = dict(w_q=np.zeros((d_model, d_qk)), b_q=np.zeros(d_qk), w_k=np.zeros((d_model, d_qk)), b_k=np.zeros(d_qk),
                  w_v=np.zeros((d_model, d_v)), b_v=np.zeros(d_v), w_o=np.zeros((d_v, d_model)),
                  q_bos=np.zeros(d_qk), k_bos=np.zeros(d_qk), v_bos=np.zeros(d_v))
    return Head(**{**arrays, **changes})


def test_a_head_is_built_by_name_and_checks_every_shape():
    head = _head()
    assert (head.d_qk, head.d_v) == (3, 2)
    with pytest.raises(TypeError):
        Head(*[np.zeros(1)] * 10)  # positional arrays are refused
    with pytest.raises(ValueError, match=r"Head.w_o has shape \(5, 2\), expected \(2, 5\)"):
        _head(w_o=np.zeros((5, 2)))  # transposed
    with pytest.raises(ValueError, match="Head.v_bos"):
        _head(v_bos=np.zeros(3))  # the key's BOS value given for the value's


def test_an_mlp_slice_checks_its_shapes():
    MLP(w_in=np.zeros((4, 2)), b_in=np.zeros(2), w_out=np.zeros((2, 4)), b_out=np.zeros(4))
    with pytest.raises(ValueError, match="MLP.w_out"):
        MLP(w_in=np.zeros((4, 2)), b_in=np.zeros(2), w_out=np.zeros((4, 2)), b_out=np.zeros(4))


def test_a_layout_refuses_a_label_it_lacks_or_has_twice():
    layout = Layout(("bos", "tokens:a", "tokens:b"))
    assert layout["tokens:b"] == 2 and list(layout.vector({"tokens:a": 2.0})) == [0.0, 2.0, 0.0]
    with pytest.raises(KeyError, match="no residual dimension 'token:a'"):
        layout.vector({"token:a": 1.0})
    with pytest.raises(ValueError, match="two residual dimensions are named 'tokens:a'"):
        Layout(("bos", "tokens:a", "tokens:a"))
