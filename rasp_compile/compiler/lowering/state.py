"""The lowering's state: the ops built so far, in order, and what they write; and the options
the driver lowers with.

One `LoweringState` lives while one program is lowered (lower.py); the helpers of this folder
read it and add ops to it, and each rewrite (rewrites.py) builds on a draft of it that the
lowering adopts or drops. Labels are handed out in the order variables are made, `_2`, `_3`,
... for a label already taken.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable

from ... import ir
from ...frontend.infer import ValueSets
from ..ops import Op, fresh_label
from ..selector_terms import Score, Term
from ..variables import Var, sorted_values
from .rewrites import LoweringOptions, Site


@dataclass
class LoweringState:
    program: ir.Program
    value_sets: ValueSets
    nullable: set[ir.SOp]  # the s-ops that may be none (infer.nullable_sops)
    options: LoweringOptions
    lower_sop: Callable[[LoweringState, ir.SOp], Var]  # lowers one s-op (lower.py)
    ops: list[Op] = field(default_factory=list)
    vars: dict[ir.SOp, Var] = field(default_factory=dict)  # ir node -> Var
    writer: dict[Var, Op] = field(default_factory=dict)  # Var -> Op
    cache: dict[tuple[str, Any], Var] = field(default_factory=dict)  # (kind, key) -> Var: views, joints, features made once
    origin: dict[Var, str] = field(default_factory=dict)  # Var -> the name of the rewrite whose proposal wrote it
    labels: set[str] = field(default_factory=set)
    scores: dict[tuple[Any, ...], Score] = field(default_factory=dict)  # selectors.spec_key -> its score, computed once; drafts share it

    def var_for(self, node: ir.SOp) -> Var:
        """The variable of `node`, lowered (with every s-op it reads) on first demand."""
        return self.vars[node] if node in self.vars else self.lower_sop(self, node)

    def new_var(self, label: str, encoding: str, values: Any, may_be_none: bool = False, loc: Any = None,
                ordered: bool = False) -> Var:
        """A variable with a fresh label and its values in dimension order (`ordered`: `values`
        are distinct and in that order already, as another variable's are)."""
        ordered_values = tuple(values) if ordered else tuple(sorted_values(set(values)))
        label = fresh_label(label, self.labels)
        self.labels.add(label)
        return Var(label, encoding, ordered_values, may_be_none and encoding == ir.CATEGORICAL, loc)

    def emit(self, op: Op) -> Var:
        """Append `op` to the graph; its variable."""
        self.ops.append(op)
        self.writer[op.out] = op
        return op.out

    def cached(self, kind: str, key: Any, make: Callable[[], Op]) -> Var:
        """The variable made for (kind, key) before, or the one `make()`'s op writes, emitted."""
        if (kind, key) not in self.cache:
            self.cache[(kind, key)] = self.emit(make())
        return self.cache[(kind, key)]

    def rewritten(self, site: Site) -> Any:
        """The first answer, in order, of the rewrites that match `site` (rewrites.py), with what
        its rewrite built on its draft added here; None when every one passes."""
        for rewrite in self.options.rewrites:
            if not isinstance(site, rewrite.matches):
                continue
            draft = self.draft()
            answer = rewrite.propose(draft, site)
            if answer is not None:
                self.adopt(draft, rewrite.name)
                if not isinstance(answer, Term):  # the op writing the site's variable, which the lowering emits
                    self.origin[answer.out] = rewrite.name
                return answer
        return None

    def draft(self) -> LoweringState:
        """A copy to build a proposal on: what is added to it stays out of this state unless
        `adopt`ed."""
        return dataclasses.replace(self, ops=list(self.ops), vars=dict(self.vars), writer=dict(self.writer),
                                   cache=dict(self.cache), origin=dict(self.origin), labels=set(self.labels))

    def adopt(self, draft: LoweringState, name: str) -> None:
        """Take what `draft` (of this state) built, the rewrite `name` having proposed it."""
        for op in draft.ops[len(self.ops):]:
            draft.origin.setdefault(op.out, name)
        self.ops, self.vars, self.writer = draft.ops, draft.vars, draft.writer
        self.cache, self.origin, self.labels = draft.cache, draft.origin, draft.labels
