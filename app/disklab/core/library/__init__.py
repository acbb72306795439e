"""The session library: schema.py (tables and migrations), store.py (opening, reading, edits),
summary.py (a session's stored results summary), writer.py (the SQL of a run being recorded)
and recorder.py (a run's events into batched transactions). Imports go store -> recorder ->
writer, never back."""

from disklab.core.library.recorder import SessionRecorder
from disklab.core.library.store import Library
from disklab.core.library.writer import SessionWriter

__all__ = ["Library", "SessionRecorder", "SessionWriter"]
