"""The error types DiskLab raises; each carries enough to tell the user what to fix."""

from __future__ import annotations

from dataclasses import dataclass


class DisklabError(Exception):
    """Base of every error DiskLab raises on purpose."""


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a plan: where (TOML key and line) and what."""

    key: str
    message: str
    line: int | None = None
    severity: str = "error"  # "error" stops the plan; "warning" is reported and recorded

    def __str__(self) -> str:
        where = f"line {self.line}: " if self.line else ""
        return f"{where}{self.key}: {self.message}"


class PlanError(DisklabError):
    """A plan that cannot run; holds every problem found, not just the first."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


class ParseError(DisklabError):
    """A tool's output that does not read as that tool's format."""

    def __init__(self, tool: str, line: int | None, expected: str, got: str | None = None):
        self.tool = tool
        self.line = line
        self.expected = expected
        self.got = got
        where = f"line {line}" if line is not None else "end of output"
        msg = f"{tool} output, {where}: expected {expected}"
        if got is not None:
            msg += f", got {got[:80]!r}"
        super().__init__(msg)


class ConfigError(DisklabError):
    """A filesystem configuration that cannot be applied; `problems` holds (key, message)
    pairs, every one found (keys such as 'mkfs.journal_size' or 'mount[2]')."""

    def __init__(self, problems: list[tuple[str, str]]):
        self.problems = problems
        super().__init__("; ".join(f"{k}: {m}" for k, m in problems))


class ToolError(DisklabError):
    """A tool that is missing, failed to start, or exited with an error."""


class AdapterError(DisklabError):
    """A tool adapter module that does not implement the adapter interface: a bug in this build,
    named (adapter and member) so that it can be reported rather than surface mid-session."""


class SafetyError(DisklabError):
    """A target refused because using it could destroy data that is not DiskLab's."""


class PrivilegeError(DisklabError):
    """The privileged helper could not be started or authorised, or died."""


class RequestError(DisklabError):
    """A request the privileged helper does not accept (unknown op, missing or bad argument).
    Raised inside the helper and sent back by name, like the others it answers with."""


class LibraryError(DisklabError):
    """The session library cannot be opened, migrated or written."""


class LibraryWriteError(LibraryError):
    """A write the library refused for the machine's reasons (disk full, I/O error, locked):
    not the user's input (the CLI's exit 1, not 2)."""


class Cancelled(DisklabError):
    """The user (or a signal) cancelled the run."""


class ResumeError(DisklabError):
    """A session that cannot be resumed here and now; the message says why (its status, its
    plan, another machine or target)."""
