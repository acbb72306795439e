"""One module per figure of bench/README.md; each `run(...)` returns rows for the table."""
