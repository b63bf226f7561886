"""`.rasp` text for a program built in Python (rasp_compile/testing/random_programs.py), so that generated
programs can go through the whole front end: parse, lower, the project's own lambda evaluator;
its errors then carry the line and column of that text (bench/fuzz.py relies on it).

Every s-op the output needs is bound to a name (`s1`, `s2`, ...) in dependency order; selectors
are written inline, parenthesised. A lambda's text must be a BODY over the parameter names the
generator uses (x; x, y; k, q), as random_programs' `Fn.text` ("lambda: BODY") is.
"""

from __future__ import annotations

from rasp_compile import ir

BUILT_INS = {ir.Tokens: "tokens", ir.Indices: "indices", ir.Length: "length"}


def program_text(program: ir.Program) -> str:
    names: dict[ir.SOp, str] = {}
    header = [
        "vocab {" + ", ".join(_value(v) for v in program.vocab) + "}",
        f"max_len {program.max_len}",
        *(["causal"] if program.causal else []),
    ]
    lines = list(header)
    for node in program.nodes():
        if not isinstance(node, ir.SOp):
            continue
        if type(node) in BUILT_INS and node.encoding == ir.CATEGORICAL:
            names[node] = BUILT_INS[type(node)]
            continue
        names[node] = f"s{len(lines) - len(header) + 1}"
        lines.append(f"{names[node]} = {_sop(node, names)}")
    lines.append(f"output {names[program.output]}")
    return "\n".join(lines) + "\n"


def _sop(node: ir.SOp, names: dict) -> str:
    if type(node) in BUILT_INS:
        text = BUILT_INS[type(node)]
    elif isinstance(node, ir.Map):
        text = f"map({_lambda(node.fn, 'x')}, {names[node.inner]})"
    elif isinstance(node, ir.SequenceMap):
        text = f"sequence_map({_lambda(node.fn, 'x, y')}, {names[node.first]}, {names[node.second]})"
    elif isinstance(node, ir.Aggregate):
        default = "" if node.default is None else f", default={_value(node.default)}"
        text = f"aggregate({_selector(node.selector, names)}, {names[node.sop]}{default})"
    elif isinstance(node, ir.SelectorWidth):
        text = f"selector_width({_selector(node.selector, names)})"
    else:
        raise TypeError(f"no text for {type(node).__name__}")
    return f"numerical({text})" if node.encoding == ir.NUMERICAL else text


def _selector(selector: ir.Selector, names: dict) -> str:
    if isinstance(selector, ir.Select):
        predicate = selector.predicate
        written = predicate if isinstance(predicate, str) else _lambda(predicate, "k, q")
        return f"select({names[selector.keys]}, {names[selector.queries]}, {written})"
    if isinstance(selector, ir.SelectNot):
        return f"(not {_selector(selector.inner, names)})"
    if isinstance(selector, ir.SelectAnd | ir.SelectOr):
        word = "and" if isinstance(selector, ir.SelectAnd) else "or"
        return f"({_selector(selector.first, names)} {word} {_selector(selector.second, names)})"
    raise TypeError(f"no text for {type(selector).__name__}")


def _lambda(fn: ir.Fn, params: str) -> str:
    body = fn.text.removeprefix("lambda:").strip()
    return f"lambda {params}: {body}"


def _value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return repr(value)
