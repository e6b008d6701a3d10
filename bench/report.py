"""The bench's one table: rows of figures, each beside the baseline measured in the same run.

A `Row` is one line of the table: what was measured, its figure, the baseline it is judged
against, their ratio (when it means something), percentiles, the target and whether it is met.
`render_table` prints the rows as fixed-width text; `as_json` gives the same data (and the
machine) for `faguan bench --json`.
"""

from __future__ import annotations

import math
import os
import platform
import sqlite3
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True, kw_only=True)
class Row:
    """One measured figure and what it is judged against."""

    section: str
    """`ingest`, `restart`, `deadlines`, `discord`, `engine`."""
    what: str
    figure: str
    """The figure, formatted with its unit (e.g. `812 posts/s`)."""
    baseline: str = ""
    """The baseline measured in the same run (e.g. `1403 rows/s raw`)."""
    ratio: float | None = None
    """figure / baseline (or time / baseline time for durations)."""
    p50_ms: float | None = None
    p99_ms: float | None = None
    target: str = ""
    met: bool | None = None
    """None: no target for this row."""
    note: str = ""
    values: dict[str, Any] = field(default_factory=dict)
    """Raw numbers for --json (rates, counts, durations in seconds)."""


def percentile(samples: Sequence[float], pct: float) -> float:
    """The `pct` percentile (0–100) by nearest rank; NaN for no samples."""
    if not samples:
        return math.nan
    ordered = sorted(samples)
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    return {
        "nproc": os.cpu_count(),
        "cpu": _cpu_model(),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "platform": platform.platform(),
    }


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _fmt(value: float | None, digits: int = 1) -> str:
    if value is None or math.isnan(value):
        return ""
    return f"{value:.{digits}f}"


HEADERS = ("section", "what", "figure", "baseline (same run)", "ratio", "p50 ms", "p99 ms",
           "target", "met")  # fmt: skip


def render_table(rows: Sequence[Row], info: dict[str, Any] | None = None) -> str:
    """The rows as a fixed-width text table (a Markdown table, so it pastes into the README)."""
    cells = [
        (
            r.section,
            r.what,
            r.figure,
            r.baseline,
            _fmt(r.ratio, 2),
            _fmt(r.p50_ms),
            _fmt(r.p99_ms),
            r.target,
            "" if r.met is None else ("yes" if r.met else "NO"),
        )
        for r in rows
    ]
    widths = [max([_width(h)] + [_width(c[i]) for c in cells]) for i, h in enumerate(HEADERS)]
    lines = [_line(HEADERS, widths), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    lines += [_line(c, widths) for c in cells]
    notes = [f"- {r.section} / {r.what}: {r.note}" for r in rows if r.note]
    out = "\n".join(lines)
    if notes:
        out += "\n\n" + "\n".join(notes)
    if info:
        out = f"{describe(info)}\n\n{out}"
    return out


def describe(info: dict[str, Any]) -> str:
    """The machine in one line."""
    return (
        f"Machine: {info['nproc']} CPU(s), {info['cpu']}; Python {info['python']}; "
        f"SQLite {info['sqlite']}; {info['platform']}"
    )


def _width(text: str) -> int:
    # CJK characters take two columns in a terminal.
    return sum(2 if ord(ch) > 0x2E80 else 1 for ch in text)


def _line(cells: Sequence[str], widths: Sequence[int]) -> str:
    padded = (c + " " * (w - _width(c)) for c, w in zip(cells, widths, strict=True))
    return "| " + " | ".join(padded) + " |"


def as_json(rows: Sequence[Row], info: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
    """The report for `--json`."""
    return {"machine": info, "options": options, "rows": [asdict(r) for r in rows]}


def in_ms(seconds: Sequence[float]) -> tuple[float, float]:
    """p50 and p99 of durations given in seconds, in milliseconds."""
    return percentile(seconds, 50) * 1000, percentile(seconds, 99) * 1000


def rate(count: int, seconds: float) -> float:
    """Events per second (0 when nothing was timed)."""
    return count / seconds if seconds > 0 else 0.0


__all__ = [
    "Row",
    "as_json",
    "describe",
    "in_ms",
    "machine",
    "percentile",
    "rate",
    "render_table",
]
