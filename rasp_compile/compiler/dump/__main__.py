"""`python -m rasp_compile.compiler.dump PROGRAM.rasp [--after STEP]`: the command line is
cli/dump_cmd.py's (the compiler itself does not import the command line)."""

import sys

from ...cli.dump_cmd import main

sys.exit(main())
