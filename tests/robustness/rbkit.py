"""Shared helpers for the robustness tests: paths, a TOML writer for generated documents, and the
checks that public text reveals no secret (roles, check results, the seed)."""

from __future__ import annotations

import datetime as dt
import functools
import math
import os
import re
import sys
import tomllib
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
BOT_TESTS = ROOT / "tests" / "discord"
for _path in (ROOT, BOT_TESTS):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from envclock import EnvClock  # noqa: E402, F401  (tests/discord's, for the robustness tests)

from bot.records.i18n import catalog  # noqa: E402
from bot.records.render import Context  # noqa: E402

LOCALES = ("zh-CN", "en")

SCALE = float(os.environ.get("FAGUAN_FUZZ_SCALE", "1"))
"""Multiplies every example count here (CI runs 1; `FAGUAN_FUZZ_SCALE=20` for a long soak)."""


def examples(n: int) -> int:
    """`n` examples, scaled."""
    return max(1, round(n * SCALE))


# -- a minimal TOML writer (enough for what hypothesis generates) ---------------------------------


def toml_string(text: str) -> str:
    """A TOML basic string."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\u{code:04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def toml_value(value: Any) -> str:
    """One TOML value (inline tables and arrays for nesting)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        items = ", ".join(f"{toml_string(str(k))} = {toml_value(v)}" for k, v in value.items())
        return "{" + items + "}"
    raise TypeError(f"no TOML for {value!r}")


def toml_document(doc: Mapping[str, Any]) -> str:
    """A TOML document whose top-level keys are `doc`'s keys."""
    text = "".join(f"{toml_string(str(k))} = {toml_value(v)}\n" for k, v in doc.items())
    tomllib.loads(text)  # the writer itself must be right
    return text


# -- secrets in text ------------------------------------------------------------------------------

SECRET_SECTIONS = ("role", "check")
"""Catalog sections whose texts name hidden facts: role names and check answers."""
UNSAFE_SECTIONS = ("role", "check", "camp", "win")
"""Sections whose words may appear in public only when the ruleset reveals (or at the end)."""


@functools.cache
def secret_words(locale: str) -> tuple[str, ...]:
    """Role names and check answers in `locale`, longest first."""
    words = {
        text
        for key, text in catalog(locale).items()
        if key.split(".", 1)[0] in SECRET_SECTIONS and text
    }
    return tuple(sorted(words, key=lambda w: (-len(w), w)))


def count_words(text: str, words: Iterable[str]) -> Counter[str]:
    """How often each word occurs in `text` (substrings, as a reader would see them)."""
    return Counter({w: text.count(w) for w in words if w in text})


_PLACEHOLDER = re.compile(r"\{[^{}]*\}")


@functools.cache
def template_fragments(locale: str) -> tuple[str, ...]:
    """Literal pieces of safe catalog texts that contain a secret word (e.g. 检查官行使否决权):
    they are part of the rules' own wording, not a fact about a seat."""
    words = secret_words(locale)
    pieces: set[str] = set()
    for key, text in catalog(locale).items():
        if key.split(".", 1)[0] in UNSAFE_SECTIONS:
            continue
        for piece in _PLACEHOLDER.split(text):
            if piece.strip() in words:
                continue  # a bare name (a team's, say) is no wording: keep counting it
            if any(w in piece for w in words):
                pieces.add(piece)
    return tuple(sorted(pieces, key=lambda p: (-len(p), p)))


def excess_secret_words(text: str, locale: str) -> Counter[str]:
    """Secret words in `text` that the catalog's own safe wording does not explain."""
    for piece in template_fragments(locale):
        text = text.replace(piece, "\x00")
    return count_words(text, secret_words(locale))


@dataclass(frozen=True, kw_only=True)
class RecordingContext(Context):
    """A rendering context that remembers every catalog key it rendered."""

    used: list[str] = field(default_factory=list)

    def t(self, key: str, **params: object) -> str:
        self.used.append(key)
        return super().t(key, **params)


def allowed_counts(keys: Iterable[str], locale: str) -> Counter[str]:
    """Secret words that the safe templates used for one text contain themselves."""
    allowed: Counter[str] = Counter()
    for key in keys:
        allowed.update(_template_words(key, locale))
    return allowed


@functools.cache
def _template_words(key: str, locale: str) -> Counter[str]:
    if key.split(".", 1)[0] in UNSAFE_SECTIONS:
        return Counter()
    text = _PLACEHOLDER.sub("\x00", catalog(locale).get(key, ""))
    return count_words(text, secret_words(locale))


def over(found: Counter[str], allowed: Counter[str]) -> dict[str, int]:
    """Words found more often than allowed."""
    return {w: n - allowed.get(w, 0) for w, n in found.items() if n > allowed.get(w, 0)}
