"""Message catalogs (zh-CN, the default, and en) and rendering of engine message keys."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from functools import cache
from importlib import resources

LOCALES = ("zh-CN", "en")
DEFAULT_LOCALE = "zh-CN"


class _Keep(dict[str, object]):
    """Leaves unknown placeholders visible instead of failing (a missing parameter is a bug,
    but a user should still get the rest of the message)."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


PLURAL = re.compile(r"\{(\w+):([^{}|]*)\|([^{}|]*)\}")
"""A count with its noun, as English writes it: `{count:vote|votes}` is "1 vote", "2 votes"
(the noun after `:` for exactly one, after `|` for any other number). Chinese needs none."""


def _counted(text: str, params: Mapping[str, object]) -> str:
    """`text` with each `{name:one|other}` written out as the number and its noun; one whose
    parameter is missing is left `{name}` (as `_Keep` leaves it), one that is no number is
    filled in as given, with no noun."""

    def written(match: re.Match[str]) -> str:
        name, one, other = match.groups()
        value = params.get(name)
        try:
            number = int(str(value))
        except ValueError:
            return "{" + name + "}"
        return f"{value} {one if abs(number) == 1 else other}"

    return PLURAL.sub(written, text)


@cache
def catalog(locale: str) -> Mapping[str, str]:
    """The flat `section.key → text` catalog of a locale."""
    if locale not in LOCALES:
        raise ValueError(f"unknown locale {locale!r}; known: {', '.join(LOCALES)}")
    source = resources.files("bot.records.locale").joinpath(f"{locale}.toml")
    raw = tomllib.loads(source.read_text("utf-8"))
    flat: dict[str, str] = {}
    for section, entries in raw.items():
        for key, text in entries.items():
            flat[f"{section}.{key}"] = text
    return flat


def render(locale: str, key: str, params: Mapping[str, object] | None = None) -> str:
    """The text for a message key in a locale, with its parameters filled in."""
    text = catalog(locale).get(key) or catalog("en").get(key)
    if text is None:
        return key
    given = params or {}
    return _counted(text, given).format_map(_Keep(given))
