"""One module per weight construction: heads and MLP slices over the labelled residual."""
