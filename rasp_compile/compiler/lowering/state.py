"""The lowering's state: the ops built so far, in order, and what they write.

One `LoweringState` lives while one program is lowered (lower.py); the helpers of this folder
and the driver's rewrites read it and add ops to it. Labels are handed out in the order
variables are made, `_2`, `_3`, ... for a label already taken.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ... import ir
from ...frontend.infer import ValueSets
from ..ops import Op, fresh_label
from ..variables import Var, sorted_values
from .rewrites import Rewrites


@dataclass
class LoweringState:
    program: ir.Program
    value_sets: ValueSets
    nullable: set  # the s-ops that may be none (infer.nullable_sops)
    rewrites: Rewrites
    var_for: Callable[[ir.SOp], Var] = None  # lowers an s-op on demand (set by lower.py)
    ops: list[Op] = field(default_factory=list)
    vars: dict = field(default_factory=dict)  # ir node -> Var
    writer: dict = field(default_factory=dict)  # Var -> Op
    cache: dict = field(default_factory=dict)  # (kind, key) -> Var: views, joints, features made once
    lengths: set = field(default_factory=set)  # the variables holding a non-causal length
    split_inputs: set = field(default_factory=set)  # the answer's split table inputs and their views
    length_offsets: dict = field(default_factory=dict)  # Var -> offset[p]: it is the length plus offset[p] at p
    labels: set = field(default_factory=set)

    def new_var(self, label: str, encoding: str, values, may_be_none=False, loc=None, ordered=False) -> Var:
        """A variable with a fresh label and its values in dimension order (`ordered`: `values`
        are distinct and in that order already, as another variable's are)."""
        ordered = tuple(values) if ordered else tuple(sorted_values(set(values)))
        label = fresh_label(label, self.labels)
        self.labels.add(label)
        return Var(label, encoding, ordered, may_be_none and encoding == ir.CATEGORICAL, loc)

    def emit(self, op: Op) -> Var:
        """Append `op` to the graph; its variable."""
        self.ops.append(op)
        self.writer[op.out] = op
        return op.out

    def cached(self, kind: str, key, make: Callable[[], Op]) -> Var:
        """The variable made for (kind, key) before, or the one `make()`'s op writes, emitted."""
        if (kind, key) not in self.cache:
            self.cache[(kind, key)] = self.emit(make())
        return self.cache[(kind, key)]
