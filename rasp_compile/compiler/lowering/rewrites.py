"""The one form of the lowering's rewrites: named, matching one kind of site, proposing or passing.

The lowering (lower.py) builds each s-op's plain construction. Where an optimisation chooses a
different construction for one s-op, the choice must be made as that s-op is lowered: the ops
built for later s-ops look at how earlier ones were built (whether a variable is embedded, is a
step MLP's one-hot, is linear), and the labels handed out follow that order. So such an
optimisation is a `Rewrite` the driver hands to the lowering, as xDSL's pattern rewriters are:

    name       the optimisation it belongs to (`--no-opt NAME`)
    matches    the kind of site it rewrites: one of the site classes below
    propose    (draft, site) -> what it proposes for the site, or None to pass

A site is where the lowering is about to build something: an s-op's op (MapSite,
SequenceMapSite, AggregateSite, WidthSite), the step MLP writing a categorical view
(ViewSite), or one term of a selector (TermSite). The rewrite builds on a draft of the lowering
(state.LoweringState.draft): the variables, features and heads it needs besides its answer go
there, and `propose` returns the op writing the site's variable (a `Term` for a TermSite). The
lowering alone adds them (state.LoweringState.rewritten): the rewrites matching the site are
asked in the driver's order, the first answer wins and its draft is adopted; a draft whose
rewrite passes is dropped with everything on it. With no rewrite this is the plain lowering of
`--no-opt` every optimisation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from collections.abc import Callable

from ... import ir
from ..variables import Var
from ..selector_terms import Term


@dataclass(frozen=True, eq=False)
class MapSite:
    """`out = fn(inner)`: a map, or a sequence_map of one variable twice."""

    out: Var
    fn: Callable[[Any], Any]  # a value of `inner` -> a value of `out`
    inner: Var


@dataclass(frozen=True, eq=False)
class SequenceMapSite:
    """`out = fn(first, second)`, two different variables."""

    out: Var
    fn: Callable[[Any, Any], Any]  # (a value of `first`, one of `second`) -> a value of `out`
    first: Var
    second: Var


@dataclass(frozen=True, eq=False)
class AggregateSite:
    """A categorical aggregate `node` writing `out`, whose plain head `whole` is already scored."""

    node: ir.Aggregate
    out: Var
    whole: Any  # the plain Attend


@dataclass(frozen=True, eq=False)
class WidthSite:
    """`out = selector_width(selector)` (also a non-causal length: the width of select-all)."""

    selector: ir.Selector
    out: Var


@dataclass(frozen=True, eq=False)
class ViewSite:
    """The one-hot `view` of the number `number`: plainly a step MLP of it, `classify` mapping
    each of its values to the view's value."""

    view: Var
    number: Var
    classify: Callable[[Any], Any]  # a value of `number` -> a value of `view`


@dataclass(frozen=True, eq=False)
class TermSite:
    """One term of a selector being scored; `shared`: its sides that every head of a split answer
    reads alike (passes/split_keys.py), which may hold features all those heads share."""

    term: Term
    shared: frozenset[Var] = frozenset()


Site = MapSite | SequenceMapSite | AggregateSite | WidthSite | ViewSite | TermSite


@dataclass(frozen=True)
class Rewrite:
    """An optimisation's rewrite of one kind of site: `propose(draft, site)` -> its answer or
    None, the draft a state.LoweringState."""

    name: str
    matches: type
    propose: Callable[[Any, Any], Any]


@dataclass(frozen=True)
class LoweringOptions:
    """How the driver lowers: the rewrites to ask, in order, two choices of the plain
    constructions themselves, and whether a hopeless score is built."""

    rewrites: tuple[Rewrite, ...] = ()
    reader_classes: bool = False  # a view keeps a dimension per class of values its reader tells apart (views.py)
    shared_blocks: bool = False  # terms of one selector reading one variable share its head dimensions (scores.py)
    unbuilt_large_scores: bool = False  # a score over joints no model could hold is left unbuilt (selectors.py)
