"""limits: how far the compiler searches for a smaller construction before it builds the plain one.

Each bound keeps one optimisation's search within a fraction of a second; past it the
optimisation passes and the plain construction (exact, maybe larger) is built.
"""

MAX_SPLIT_COLUMNS = 8192
"""split-keys builds a head per value of one input of the answer's table, each up to the other
input's (or the query's) value count wide: it is tried while that bound stays within this many
head columns (64 heads of 65 at max_len 64; at 100 the 100 heads would take 10,100, and over a
hundred million parameters)."""

MAX_FEATURE_VALUES = 100_000
"""A folded head feature's value set is enumerated (every combination of its variables' values);
a side whose features would have more is left unfolded (passes/head_features.py)."""

MAX_QUERY_ASSIGNMENTS = 10_000
"""interpolated-steps enumerates a reader's other side value by value up to this many combinations."""

MAX_ENUMERATED_BLOCKS = 12
"""Score covers are found by trying every subset of the side with fewer blocks, up to this many
(2^12 subsets); beyond it the whole cheaper side is the cover (still exact, maybe wider)."""

MAX_READOUT_ROWS = 4096
"""linear-readout fits a table of at most this many input combinations."""

PERCEPTRON_PASSES = 200
"""linear-readout's perceptron passes over the rows at most this often."""

CLASS_UPDATES = 5_000_000
"""passes x rows x classes at most (about 0.2 s), then linear-readout gives up: 4,096 rows of
4,096 classes x 200 passes took 20 s."""
