"""Live tracr expressions (`tracr.rasp.rasp`) -> our IR, node for node (docs/from_tracr.md).

    from tracr.compiler import lib
    sop = rasp_compile.from_tracr(lib.make_sort_unique(lib.rasp.tokens, lib.rasp.tokens))

Each tracr node becomes the IR node of the same meaning, keeping its functions (called as they
are, never read or copied), its explicit name as the label and its encoding. A node reached twice
is converted once, so shared sub-programs stay shared. tracr is the optional extra `[tracr]`: it is
imported only here, when a conversion is asked for.
"""

from __future__ import annotations

from .. import ir
from .. import rasp as ours
from ..errors import ArgumentTypeError, MissingExtraError

EXTRA_HINT = ("converting tracr programs needs tracr: pip install 'rasp-compile[tracr]' "
              "(from a checkout: pip install -e '.[tracr]')")


def is_tracr_expression(obj: object) -> bool:
    """Whether `obj` is a tracr RASP expression (told by its class's module, without importing tracr)."""
    return any(cls.__module__.split(".")[0] == "tracr" for cls in type(obj).__mro__)


def from_tracr(expr) -> ir.Expression:
    """Our IR for the tracr s-op or selector `expr` (and everything it depends on).

    Raises MissingExtraError (one line naming the extra) when tracr is not installed, and
    ArgumentTypeError (a TypeError) for an object that is not a tracr expression or a kind of node we have no rule for.
    """
    try:
        from tracr.rasp import rasp as tracr_rasp
    except ImportError:
        raise MissingExtraError(EXTRA_HINT) from None
    if not isinstance(expr, tracr_rasp.RASPExpr):
        raise ArgumentTypeError(f"from_tracr converts tracr RASP expressions, not {type(expr).__name__}")
    converted: dict[int, ir.Expression] = {}
    for node in _children_first(expr):
        converted[id(node)] = _labelled(_convert(node, converted, tracr_rasp), node, tracr_rasp)
    return converted[id(expr)]


def _children_first(root) -> list:
    """Every node reachable from `root`, each once, after all of its children (iterative: deep
    programs must not hit Python's recursion limit)."""
    order, seen, stack = [], set(), [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
        elif id(node) not in seen:
            seen.add(id(node))
            stack.append((node, True))
            stack.extend((child, False) for child in reversed(node.children) if id(child) not in seen)
    return order


def _convert(node, converted: dict, tracr_rasp) -> ir.Expression:
    """One node, its children already converted."""
    children = [converted[id(child)] for child in node.children]
    builtins = {tracr_rasp.TokensType: ir.tokens, tracr_rasp.IndicesType: ir.indices,
                tracr_rasp.LengthType: ir.length}
    for kind, ours_builtin in builtins.items():
        if isinstance(node, kind):
            return ours_builtin
    if isinstance(node, tracr_rasp.Map):
        return ir.Map(_function(node.f, tracr_rasp), *children)
    if isinstance(node, tracr_rasp.SequenceMap):  # LinearSequenceMap too: its `f` is the linear form
        return ir.SequenceMap(_function(node.f, tracr_rasp), *children)
    if isinstance(node, tracr_rasp.Full):
        return ours.Full(node.fill)
    if isinstance(node, tracr_rasp.ConstantSOp):
        return ours.ConstantSOp(node.value)
    if isinstance(node, tracr_rasp.Select):
        keys, queries = children
        return ir.Select(keys, queries, _predicate(node.predicate, tracr_rasp))
    if isinstance(node, tracr_rasp.ConstantSelector):
        return ours.ConstantSelector(node.value)
    if isinstance(node, tracr_rasp.Aggregate):
        selector, sop = children
        return ir.Aggregate(selector, sop, default=node.default)
    simple = {tracr_rasp.SelectorWidth: ir.SelectorWidth, tracr_rasp.SelectorAnd: ir.SelectAnd,
              tracr_rasp.SelectorOr: ir.SelectOr, tracr_rasp.SelectorNot: ir.SelectNot}
    for kind, ours_kind in simple.items():
        if isinstance(node, kind):
            return ours_kind(*children)
    raise ArgumentTypeError(f"from_tracr has no rule for tracr's {type(node).__name__}")


def _function(f, tracr_rasp) -> ir.Fn:
    """`f`, called as it is; a tracr expression as its result (tracr's `a < b` on two s-ops makes
    a map whose function returns one) is refused with what to write instead."""

    def call(*args):
        result = f(*args)
        if isinstance(result, tracr_rasp.RASPExpr):
            raise TypeError("it returns a tracr expression, not a value; tracr's comparison operators take "
                            "a constant: compare two s-ops with a SequenceMap")
        return result

    return ir.Fn(call, getattr(f, "__name__", "<python function>"))


def _predicate(predicate, tracr_rasp) -> str | ir.Fn:
    """A tracr Comparison becomes our comparison of the same name; any other predicate is called
    as it is, on (key, query)."""
    if isinstance(predicate, tracr_rasp.Comparison):
        return ours.Comparison[predicate.name].value
    return _function(predicate, tracr_rasp)


def _labelled(new: ir.Expression, node, tracr_rasp) -> ir.Expression:
    """`new` with the tracr node's explicit name (not a default such as `map`) and encoding."""
    if isinstance(new, (ir.Tokens, ir.Indices, ir.Length)):
        return new
    if node.name != tracr_rasp.default_name(node):
        new.label = node.name
    if isinstance(node, tracr_rasp.SOp) and isinstance(new, ir.SOp) and tracr_rasp.is_numerical(node):
        new.encoding = ir.NUMERICAL
    return new
