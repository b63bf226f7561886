"""The command line of docs/cli.md, built with rich.

    rasp-compile PROGRAM.rasp [--emit OUT.npz]     compile_cmd.py: summary, weights file
    rasp-run WEIGHTS.npz INPUT                     run_cmd.py: completion or per-position outputs
             --accuracy / --score / --flops / --trace   accuracy.py, score.py, flops_report.py,
                                                         trace_report.py

Shared pieces: common.py (argument parsing, the one error edge, loading programs and models),
tokens.py (how INPUT text becomes tokens and tokens become text). Every report is computed as a
JSON-ready dict first, so `--json` and the rich rendering show the same numbers.
"""
