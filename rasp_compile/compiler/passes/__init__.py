"""One module per optimisation, and per analysis every compile runs; driver.py lists them in order."""
