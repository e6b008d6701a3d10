"""Message catalogs (zh-CN, the default, and en) and rendering of engine message keys."""

from __future__ import annotations

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
    return text.format_map(_Keep(params or {}))
