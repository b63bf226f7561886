"""What the tests and the benchmarks share to check the compiler differentially.

- `random_programs`: random well-formed programs, from a seeded `random.Random` or (with hypothesis,
  a test dependency) as a shrinkable strategy;
- `program_text`: a generated program written as `.rasp` text, so that it can go through the whole
  front end and its errors carry a line and a column;
- `differential`: the comparison of a compiled model with the reference interpreter, and the inputs
  it is made on.

Nothing in the compiler imports this package; it lives here, beside the code it checks, so that
`tests/` and `bench/` scripts import it by name from any directory once the project is installed.
"""
