"""A tool's output read as lines: split on \\r as well as \\n, timestamped, bounded in memory
(the head and the tail of each stream kept, the middle counted)."""

from __future__ import annotations

import codecs
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


class OutputLines:
    """What a tool says on its two streams, apart from the process saying it: the bytes kept,
    decoded and cut into lines, queued for the reader and the last ones kept for an error
    report. The process only hands it bytes; the rules of a line live here alone."""

    def __init__(self, keep_bytes: int, pty: bool):
        self.pty = pty  # on a pty, stdout's "\r\n" goes back to "\n" in output()
        self.dropped = 0  # lines nobody took before MAX_PENDING more arrived
        self._kept = {"stdout": KeptBytes(keep_bytes), "stderr": KeptBytes(keep_bytes)}
        self._decoders = {s: codecs.getincrementaldecoder("utf-8")("replace")
                          for s in ("stdout", "stderr")}
        self._partial = {"stdout": "", "stderr": ""}
        self._skip_lf = {"stdout": False, "stderr": False}  # a chunk ended in "\r"
        self._pending: deque[OutputLine] = deque()
        self._recent: deque[OutputLine] = deque(maxlen=RECENT_LINES)

    def add(self, stream: str, data: bytes, now: float) -> None:
        """Take one read's bytes: kept whole, and their complete lines queued."""
        self._kept[stream].add(data)
        self._split(stream, self._decoders[stream].decode(data), now)

    def end(self, stream: str, now: float) -> None:
        """The stream has ended: its last line goes out even without an end."""
        self._split(stream, self._decoders[stream].decode(b"", final=True), now)
        rest, self._partial[stream] = self._partial[stream], ""
        if rest:
            self._emit(OutputLine(now, stream, rest, ""))

    def waiting(self) -> bool:
        """True while lines are queued that nobody has taken."""
        return bool(self._pending)

    def take(self) -> list[OutputLine]:
        """The queued lines, in the order they came; the queue is then empty."""
        lines = list(self._pending)
        self._pending.clear()
        return lines

    def _split(self, stream: str, text: str, now: float) -> None:
        if self._skip_lf[stream] and text:
            self._skip_lf[stream] = False
            if text.startswith("\n"):  # the "\n" of a "\r\n" cut between two reads
                text = text[1:]
        partial = self._partial[stream]
        pos = 0
        for m in EOL.finditer(text):
            line = partial + text[pos:m.start()]
            partial = ""
            pos = m.end()
            if m.group() == "\r":
                if pos == len(text):
                    self._skip_lf[stream] = True
                if not line:  # a bare carriage return before a redraw ("\rNN bytes copied")
                    continue
                self._emit(OutputLine(now, stream, line, "\r"))
            else:
                self._emit(OutputLine(now, stream, line, "\n"))
        partial += text[pos:]
        if len(partial) > MAX_LINE:  # never grow without bound: hand it out as it is
            self._emit(OutputLine(now, stream, partial, ""))
            partial = ""
        self._partial[stream] = partial

    def _emit(self, line: OutputLine) -> None:
        if len(self._pending) >= MAX_PENDING:
            self._pending.popleft()
            self.dropped += 1
        self._pending.append(line)
        self._recent.append(line)

    def output(self, stream: str) -> str:
        """Everything kept of one stream, as the tool wrote it (on a pty, with '\\r\\n' back to
        '\\n'); when it was longer than keep_bytes, its head and tail around a
        '[... N bytes dropped ...]' line."""
        text = self._kept[stream].text()
        if self.pty and stream == "stdout":
            text = text.replace("\r\n", "\n")
        return text

    def tail(self, n_lines: int = 40) -> str:
        """The last lines of both streams in the order they came, and any unfinished line
        still open, for an error report."""
        lines = [line.text for line in list(self._recent)[-n_lines:]] if n_lines > 0 else []
        lines += [rest for rest in self._partial.values() if rest]
        return "\n".join(lines[-n_lines:] if n_lines > 0 else [])
