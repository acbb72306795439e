"""The only place that knows sizes and rates: '4096k', '256g', kB vs KiB, MB/s vs MiB/s.

Plan sizes follow iozone and dd: k/m/g/t are powers of 1024. Tool outputs that print SI units
(dd's 'MB/s') are converted with powers of 1000. Everything stored is canonical: bytes, B/s, ns.

What people read is in one units choice, the same on every surface (the window, `disklab show`,
`compare`, `history`, the exports): SI (MB/s, GB: powers of 1000, as KDiskMark and disk makers
label them, the default) or IEC (MiB/s, GiB: powers of 1024). The choice is the process's one
setting (`use_units`): the command line sets it once from --units or the session's [report]
units, the window from its preference; every figure is written through `rate_unit`,
`size_unit`, `human_rate` and `human_bytes`, so no surface can say 1662 MB/s beside 1623 MiB/s.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from fractions import Fraction

KiB = 1024
MiB = 1024**2
GiB = 1024**3
TiB = 1024**4

# The largest byte count DiskLab keeps: SQLite's INTEGER is 64-bit signed, and no disk is near.
MAX_BYTES = 2**63 - 1
_MAX_DIGITS = 24  # a number written with more digits is beyond MAX_BYTES in any unit

_BINARY = {"": 1, "b": 1, "k": KiB, "m": MiB, "g": GiB, "t": TiB, "p": 1024**5}
_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?)(?:i?b)?\s*$", re.IGNORECASE)
_DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|min|h)?\s*$", re.IGNORECASE)
_DURATION_SCALE = {"ms": 0.001, "s": 1.0, "": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}

# SI and IEC multipliers as tools print them ("kB/s" in dd is 1000, "KiB" is 1024).
_UNIT_SCALE = {
    "B": 1,
    "kB": 1000,
    "KB": 1000,
    "MB": 1000**2,
    "GB": 1000**3,
    "TB": 1000**4,
    "PB": 1000**5,
    "KiB": KiB,
    "MiB": MiB,
    "GiB": GiB,
    "TiB": TiB,
    "PiB": 1024**5,
}


def parse_size(value: str | int) -> int:
    """'4096k' -> 4194304. Integers are bytes. Raises ValueError with the accepted spellings, or
    saying the size is too large (beyond MAX_BYTES, what the library can store): exact integer
    arithmetic, so no size overflows a float on the way."""
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a size")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"{value} is negative")
        if value > MAX_BYTES:
            raise ValueError(f"{_short(str(value))} is too large (at most {MAX_BYTES} bytes)")
        return value
    if not isinstance(value, str):
        raise ValueError(f"{value!r} is not a size")
    m = _SIZE_RE.match(value)
    if not m:
        raise ValueError(
            f"{_short(repr(value))} is not a size (use a number with k, m, g or t, "
            "e.g. '4096k', '256m')"
        )
    number, suffix = m.groups()
    if len(number.split(".")[0].lstrip("0")) > _MAX_DIGITS:
        raise ValueError(f"{_short(value.strip())} is too large (at most {MAX_BYTES} bytes)")
    if len(number) > 2 * _MAX_DIGITS:
        raise ValueError(f"{_short(value.strip())} has too many digits to be a size")
    result = Fraction(number) * _BINARY[suffix.lower()]
    if result.denominator != 1:
        raise ValueError(f"{_short(repr(value))} is not a whole number of bytes")
    if result > MAX_BYTES:
        raise ValueError(f"{_short(value.strip())} is too large (at most {MAX_BYTES} bytes)")
    return int(result)


def _short(text: str, limit: int = 40) -> str:
    """A value as a message quotes it: a 400-digit number is cut, not printed whole."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def format_size(n: int) -> str:
    """Bytes in the plan's own spelling: 268435456 -> '256m', 4194304 -> '4m', 1000 -> '1000'."""
    for suffix, scale in (("t", TiB), ("g", GiB), ("m", MiB), ("k", KiB)):
        if n >= scale and n % scale == 0:
            return f"{n // scale}{suffix}"
    return str(n)


UNIT_SYSTEMS = ("si", "iec")
DEFAULT_UNITS = "si"  # KDiskMark's MB/s
UNITS_WORDS = {"si": "SI: MB/s, GB (powers of 1000)", "iec": "IEC: MiB/s, GiB (powers of 1024)"}
# (unit, scale) from the largest, per system: a size adapts its prefix, a rate never does
_SIZES = {
    "si": (("TB", 1000**4), ("GB", 1000**3), ("MB", 1000**2), ("kB", 1000)),
    "iec": (("TiB", TiB), ("GiB", GiB), ("MiB", MiB), ("KiB", KiB)),
}
_units = [DEFAULT_UNITS]  # the process's choice (use_units)


def check_units(system: object) -> str:
    """A units choice as given ('si', 'IEC'), lower-cased; ValueError naming both choices."""
    text = system.strip().lower() if isinstance(system, str) else ""
    if text not in UNIT_SYSTEMS:
        raise ValueError(
            f"{_short(repr(system))} is not a units choice (si: MB/s, GB; iec: MiB/s, GiB)"
        )
    return text


def use_units(system: str) -> None:
    """Every figure written from now on in `system` ('si' or 'iec'); ValueError otherwise."""
    _units[0] = check_units(system)


def unit_system() -> str:
    """The units choice every figure is written in: 'si' or 'iec'."""
    return _units[0]


@contextmanager
def units_used(system: str) -> Iterator[None]:
    """`system` for what runs inside, the choice before restored after (a test, one export)."""
    before = unit_system()
    use_units(system)
    try:
        yield
    finally:
        _units[0] = before


def rate_unit(system: str | None = None) -> tuple[str, float]:
    """The display unit of B/s and its divisor: ('MB/s', 1e6) or ('MiB/s', 1048576)."""
    return ("MiB/s", float(MiB)) if (system or unit_system()) == "iec" else ("MB/s", 1e6)


def size_unit(system: str | None = None) -> tuple[str, float]:
    """The display unit of a byte count in a column or on an axis: ('MB', 1e6) or ('MiB',
    1048576): one unit for every value, as a rate's."""
    return ("MiB", float(MiB)) if (system or unit_system()) == "iec" else ("MB", 1e6)


def human_bytes(n: float) -> str:
    """Bytes for people, the prefix fitting the size: 268435456 -> '268 MB' (SI) or
    '256 MiB' (IEC); a whole number of its unit stays whole ('4 GiB', '500 GB')."""
    for unit, scale in _SIZES[unit_system()]:
        if abs(n) >= scale:
            return f"{n / scale:.3g} {unit}" if n % scale else f"{int(n // scale)} {unit}"
    return f"{int(n)} B"


def number(v: float) -> str:
    """A figure with three significant digits, whole numbers kept whole, no exponent:
    11403, 255, 86.5, 2.50, 0.0123 (core.results.format writes every figure with it)."""
    if not math.isfinite(v):
        return "–"
    a = abs(v)
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    if a == 0:
        return "0"
    decimals = min(2 - math.floor(math.log10(a)), 12)
    return f"{v:.{decimals}f}"


def human_rate(bps: float) -> str:
    """B/s for people, as every table writes a rate (core.results.format.format_value): MB/s
    or MiB/s always (the units choice), three significant digits, so that the Run page, the
    terminal and every table write one rate alike (1.5e9 B/s is '1500 MB/s', or '1431 MiB/s',
    in all of them, never '1.4 GiB/s')."""
    unit, div = rate_unit()
    return f"{number(bps / div)} {unit}"


def parse_duration(value: str | int | float) -> float:
    """'30s' -> 30.0, '5m' -> 300.0, '500ms' -> 0.5; a bare number is seconds. NaN and infinity
    (TOML has both, and 400 digits are infinity as a float) are refused."""
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a duration")
    if isinstance(value, int | float):
        if isinstance(value, int) and len(str(abs(value))) > _MAX_DIGITS:
            raise ValueError(f"{_short(str(value))} is too long a duration")
        if not math.isfinite(value):
            raise ValueError(f"{value} is not a finite duration")
        if value < 0:
            raise ValueError(f"{value} is negative")
        return float(value)
    m = _DURATION_RE.match(str(value))
    if not m:
        raise ValueError(f"{_short(repr(value))} is not a duration (use e.g. '30s', '5m', '1h')")
    number, unit = m.groups()
    seconds = float(number) * _DURATION_SCALE[(unit or "").lower()]
    if not math.isfinite(seconds):
        raise ValueError(f"{_short(str(value).strip())} is too long a duration")
    return seconds


def unit_scale(unit: str) -> int:
    """Multiplier of a printed unit ('MB' -> 10**6, 'MiB' -> 2**20). KeyError if unknown."""
    return _UNIT_SCALE[unit]


def parse_quantity(number: str, unit: str) -> float:
    """A tool's printed '1.2' 'GB' (or 'GB/s') -> bytes (or B/s) with the right base."""
    return float(number) * _UNIT_SCALE[unit.removesuffix("/s")]


def kib_per_s(value: float) -> float:
    """iozone's 'kB/sec' (it means KiB) -> B/s."""
    return value * KiB
