"""The name and version every JSON document DiskLab writes carries at its top level.

A script that reads `disklab show --json`, an exported session or a comparison can check
`format` and `version` instead of guessing from the keys, and DiskLab can change a document's
shape by raising its version. The version counts changes that break a reader (a key removed,
renamed or retyped); added keys keep it. One table, so every writer stamps the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

VERSIONS: dict[str, int] = {
    "disklab.session": 2,      # export --format json: a whole session (2: limited_by)
    "disklab.results": 2,      # show --json: facts and results (2: each result's limited_by)
    "disklab.comparison": 3,   # compare --format json (2: ci_* -> mean_ci_* and delta_ci_*;
    # 3: each cell's limited_by)
    "disklab.event": 1,        # run --json: one event per line
    "disklab.sessions": 1,     # sessions --json
    "disklab.tools": 1,        # tools --json
    "disklab.devices": 1,      # devices --json
    "disklab.import": 1,       # import --json
    "disklab.history": 1,      # history --json: a plan's series, points and changes
    "disklab.presets": 1,      # presets --json
    "disklab.plan-check": 1,   # plan validate --json
    "disklab.plan": 1,         # plan show --json: the cases and their argv
    "disklab.pivot": 3,        # compare --rows/--columns --format json: a pivot table
    # (2: ci_* -> mean_ci_*, cells are values unless a baseline is named, compared_with;
    # 3: each cell's limited_by)
}


def versioned(name: str, body: Mapping[str, Any]) -> dict[str, Any]:
    """`body` with {"format": name, "version": N} first. KeyError for a name not in VERSIONS,
    so a new document cannot be written without a version."""
    return {"format": name, "version": VERSIONS[name], **body}
