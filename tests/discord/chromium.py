"""Headless Chromium for tests: screenshot a page, read its console, and tell a blank picture.

Debian's `chromium`. Without it the browser tests skip and say how to install it, except where
$FAGUAN_REQUIRE_CHROMIUM=1 (`.ci/run` installs Chromium and sets it): there a missing browser is
a failure, so CI always proves the record page renders. Console messages (errors, failed loads) are read from
Chromium's own log on stderr (`--enable-logging=stderr`), one `:CONSOLE` line per message.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import tempfile
import zlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

BROWSERS = ("chromium", "chromium-browser")
#: Set to 1 where a missing browser must fail the tests rather than skip them (CI).
REQUIRE = "FAGUAN_REQUIRE_CHROMIUM"


@dataclass(frozen=True)
class Shot:
    """What Chromium made of a page."""

    png: bytes
    console: list[str]
    """Every console message (and failed load) the page produced."""


def browser() -> str:
    """The Chromium executable; when none is installed the test skips (fails under $REQUIRE=1)."""
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    missing = (
        "headless Chromium is not installed (looked for: " + ", ".join(BROWSERS) + "); "
        "to run this test: apt-get install --no-install-recommends chromium"
    )
    if os.environ.get(REQUIRE) == "1":
        pytest.fail(f"{missing} ({REQUIRE}=1: it must run here)", pytrace=False)
    pytest.skip(missing)


def screenshot(page: Path, *, width: int = 1100, height: int = 1600) -> Shot:
    """Render `page` (a local file) and return the screenshot and its console messages."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "shot.png"
        result = subprocess.run(
            [
                browser(),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--no-first-run",
                "--hide-scrollbars",
                f"--user-data-dir={tmp}/profile",
                "--enable-logging=stderr",
                "--v=0",
                f"--screenshot={out}",
                f"--window-size={width},{height}",
                page.resolve().as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert out.exists(), (
            f"chromium made no screenshot (exit {result.returncode}):\n{result.stderr}"
        )
        console = [
            line
            for line in result.stderr.splitlines()
            if ":CONSOLE" in line or "net::ERR" in line or "Failed to load resource" in line
        ]
        return Shot(png=out.read_bytes(), console=console)


def pixels(png: bytes) -> tuple[int, int, list[tuple[int, ...]]]:
    """Decode an 8-bit RGB/RGBA, non-interlaced PNG (what Chromium writes): width, height, pixels."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", b""
    while pos < len(png):
        (length,) = struct.unpack(">I", png[pos : pos + 4])
        kind = png[pos + 4 : pos + 8]
        data = png[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = data
        elif kind == b"IDAT":
            idat += data
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour, interlace)
    bpp = 4 if colour == 6 else 3
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows: list[bytearray] = []
    prev = bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            up = prev[i]
            corner = prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                pred = left if pa <= pb and pa <= pc else (up if pb <= pc else corner)
                line[i] = (line[i] + pred) & 0xFF
        rows.append(line)
        prev = line
    found = [tuple(row[x * bpp : x * bpp + 3]) for row in rows for x in range(width)]
    return width, height, found


def ink(png: bytes) -> tuple[float, int]:
    """How much of the picture is not its background colour (0..1), and how many colours it has."""
    _, _, found = pixels(png)
    counts = Counter(found)
    background = counts.most_common(1)[0][1]
    return 1 - background / len(found), len(counts)
