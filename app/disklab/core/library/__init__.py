"""The session library: schema.py (tables and migrations), store.py (the only SQL), and
recorder.py (a run's events into batched transactions)."""

from disklab.core.library.recorder import SessionRecorder
from disklab.core.library.store import Library, SessionWriter, default_library_path

__all__ = ["Library", "SessionRecorder", "SessionWriter", "default_library_path"]
