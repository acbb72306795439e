"""Results for people and for files: one home for everything done with a session's figures.

The layers, lowest first (each imports only the ones above it):

- `rows`: what a results row of the library holds (its parameters, mean and stddev) and which
  rows are headline figures.
- `stats`: Student's t distribution and Welch's test (the significance of a difference), the
  coefficient of variation and the "noisy" flag.
- `format`: the one way a figure, a parameter set, a delta or a p-value is written as text.
- `partial`: runs that did not complete: their figures kept and listed, left out of the means
  unless asked (every surface builds its rows through `session_results`).
- `compare`: comparisons of sessions and configurations (cells, deltas and their Welch verdict,
  config diff).
- `tables`: the results table and the comparison table that every surface shows.
- `charts`: chart specs (plain data drawn by `svg`, in files and in the window alike).
- `svg`: the Qt-free SVG rendering of a chart spec.
- `documents`: HTML, Markdown, CSV and JSON files of a session or a comparison.

The CLI, the GUI pages and every export go through these modules, so the same figure reads the
same everywhere; none of them imports Qt.
"""
