"""`rasp-run WEIGHTS INPUT --flops`: the FLOPs of this prediction per component (flops.py), for
the whole sequence and for the last position alone, beside the direct rule's operations
(direct_cost.py) on the same input, and the ratio model / direct rule.
"""

from __future__ import annotations

from rich.table import Table

from ..tools.direct_cost import direct_rule_cost
from ..tools.flops import CONVENTIONS, count_flops
from ..runtime.prediction import encode
from ..runtime.model import Model
from ..safe_text import markup_safe
from .common import check_one_pass, program_errors
from .reference import Reference
from .tokens import join_tokens

DIRECT_FIELDS = ("lookups", "predicate_tests", "additions", "comparisons", "divisions", "total")


def measure(model: Model, reference: Reference, tokens: list) -> dict:
    """Model FLOPs and direct-rule counts (None without meta.source), whole and last position."""
    check_one_pass(model, tokens, "--flops")
    n_positions = len(encode(model, tokens))
    model_flops = {"whole": count_flops(model, n_positions), "last": count_flops(model, n_positions, last_only=True)}
    program = reference.program()
    direct = None
    if program is not None:
        with program_errors(program.filename, program.source):  # the program may fail on this input
            direct = direct_rule_cost(program, tokens)
    ratio = None if direct is None else {
        part: model_flops[part]["total"] / direct[part]["total"] if direct[part]["total"] else None
        for part in ("whole", "last")}
    return {"input": join_tokens(model, tokens), "n_positions": n_positions,
            "bos": model.meta["bos_id"] is not None, "model": model_flops, "direct_rule": direct,
            "ratio": ratio, "conventions": CONVENTIONS}


def render(report: dict, console) -> None:
    model = report["model"]
    bos = " incl. BOS" if report["bos"] else ""
    table = Table("component", "whole sequence", "last position",
                  title=f"model FLOPs on {markup_safe(report['input'])} ({report['n_positions']} positions{bos})",
                  title_justify="left")
    for component in model["whole"]:
        table.add_row(component, f"{model['whole'][component]:,}", f"{model['last'][component]:,}",
                      end_section=component == list(model["whole"])[-2], style="bold" if component == "total" else "")
    console.print(table)
    console.print(report["conventions"], markup=False, soft_wrap=True)
    direct = report["direct_rule"]
    if direct is None:
        console.print("direct rule: this file holds no program source (meta.source); "
                      "counting the direct rule needs the program.")
        return
    rule = Table("direct rule (interpreter)", "whole sequence", "last position",
                 title="direct rule: the program evaluated directly", title_justify="left")
    for name in DIRECT_FIELDS:
        rule.add_row(name.replace("_", " "), f"{direct['whole'][name]:,}", f"{direct['last'][name]:,}",
                     end_section=name == DIRECT_FIELDS[-2], style="bold" if name == "total" else "")
    ratio = report["ratio"]
    rule.add_row("ratio model / direct", _ratio(ratio["whole"]), _ratio(ratio["last"]), style="bold")
    console.print(rule)
    console.print("last position (direct rule): the count on the input minus the count on the input "
                  "without its last token.")


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f}×"
