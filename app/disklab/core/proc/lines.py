"""A tool's output read as lines: split on \\r as well as \\n, timestamped, bounded in memory
(the head and the tail of each stream kept, the middle counted)."""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass

MAX_LINE = 1 << 20  # a "line" this long without an end is handed out anyway (terminator "")
MAX_PENDING = 50_000  # lines read but not yet taken by read(); older ones are dropped beyond
RECENT_LINES = 1000  # lines kept for tail()
EOL = re.compile(r"\r\n|\r|\n")

@dataclass(frozen=True)
class OutputLine:
    t: float  # time.time() when it was read
    stream: str  # "stdout" | "stderr"
    text: str
    terminator: str  # "\n" (also for "\r\n"), "\r", or "" for a line without an end


class KeptBytes:
    """One stream's bytes, bounded: the head and the tail are kept, the middle is counted."""

    def __init__(self, limit: int):
        self.head_limit = max(0, limit) // 2
        self.tail_limit = max(0, limit) - self.head_limit
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self.tail_size = 0
        self.dropped = 0  # whole chunks dropped from the front of the tail

    def add(self, data: bytes) -> None:
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if not data:
            return
        self.tail.append(data)
        self.tail_size += len(data)
        while self.tail and self.tail_size - len(self.tail[0]) >= self.tail_limit:
            gone = self.tail.popleft()
            self.tail_size -= len(gone)
            self.dropped += len(gone)

    def text(self) -> str:
        tail = b"".join(self.tail)
        cut = max(0, len(tail) - self.tail_limit)
        dropped = self.dropped + cut
        head = self.head.decode("utf-8", "replace")
        rest = tail[cut:].decode("utf-8", "replace")
        if not dropped:
            return head + rest
        sep = "" if not head or head.endswith("\n") else "\n"
        return f"{head}{sep}[... {dropped} bytes dropped ...]\n{rest}"
