"""The compiler: a checked program -> a `Model` in the docs/format.md format.

driver.py runs it, one listed step after another; docs/compiler.md follows the same list.

    lowering/     the plain construction of every s-op (lower.py), with the helpers it shares
    passes/       one module per optimisation (and the analyses every compile runs)
    primitives/   one module per weight construction: heads and MLP slices over named dimensions
    dump/         the graph as text after any step (python -m rasp_compile.compiler.dump)
    ops.py, variables.py, selector_terms.py   the graph's data: ops, residual variables, scores
    schedule.py, layout.py, assemble.py       sub-layers, residual dimensions, arrays
    precision.py, budget.py                   what a model must meet to be built
    tolerances.py, limits.py                  every margin with its derivation; search bounds
"""

from .driver import OPTIMIZATIONS, build_graph, compile_program

__all__ = ["OPTIMIZATIONS", "build_graph", "compile_program"]
