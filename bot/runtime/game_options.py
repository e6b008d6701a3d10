"""A game's options as a moderator types them in `/game new` (`mine=killers sniper=yes`): read
into the mapping the engine checks, suggested while typing, and tried on a dry-run deal so that a
game which cannot be dealt is refused before anything is done on Discord."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from engine.errors import SetupError
from engine.rulesets.base import Ruleset
from engine.setup import new_game, option_names, read_options

SEPARATORS = re.compile(r"[\s,，;；]+")
TRUE, FALSE = ("true", "yes", "on", "是"), ("false", "no", "off", "否")
DRY_RUN_SEED = "faguan-dry-run"
"""The deal is tried with this seed: whether roles fit never depends on the seed."""
ECHO_LIMIT = 40
"""What a refusal quotes of a typed word: no option's name or value is longer, and a reply holds
2,000 characters."""


def clipped(text: str) -> str:
    """`text` as a refusal quotes it: cut to ECHO_LIMIT, with … where it was cut."""
    return text if len(text) <= ECHO_LIMIT else f"{text[:ECHO_LIMIT]}…"


def parse_options(text: str | None) -> dict[str, object]:
    """`sniper=yes, police_special=sheriff composition=2` → a mapping (values checked later by
    the engine). A token without `=` is refused with `setup.option_syntax`."""
    options: dict[str, object] = {}
    for token in SEPARATORS.split((text or "").replace("＝", "=").strip()):
        if not token:
            continue
        name, sep, value = (clipped(part) for part in token.partition("="))
        if not sep or not name or not value:
            raise SetupError("setup.option_syntax", token=clipped(token))
        options[name.lower()] = _value(name.lower(), value)
    return options


def _value(name: str, value: str) -> object:
    """Booleans and numbers where the engine wants them; text everywhere else (a clipped number
    too, refused by the engine as it is quoted: int() refuses thousands of digits)."""
    if name == "self_vote" and value.lower() in TRUE + FALSE:
        return value.lower() in TRUE
    if name in ("composition", "warmup") and value.isdecimal():
        return int(value)
    return value


def check_options(rules: Ruleset, tie: str, options: Mapping[str, object]) -> None:
    """Raise the engine's `SetupError` for an unknown option or a value it does not allow; the
    tie policy has its own command option, so it may not be given twice."""
    if "tie" in options:
        raise SetupError("setup.option_twice", option="tie")
    read_options({"tie": tie, **options}, rules)


def check_composition(rules: Ruleset, options: Mapping[str, object], low: int, high: int) -> None:
    """Raise the engine's `SetupError` for a `composition` no player count of the sign-up
    (`low`..`high`) offers: else the sign-up opens, everyone joins, and only the start refuses."""
    wanted = options.get("composition")
    if not isinstance(wanted, int) or isinstance(wanted, bool):
        return  # not given, or refused by `check_options` already
    most = max(len(rules.compositions(n)) for n in range(low, high + 1))
    if wanted > most:
        allowed = ", ".join(str(i) for i in range(1, most + 1))
        raise SetupError("setup.bad_option", option="composition", value=str(wanted),
                         allowed=allowed)  # fmt: skip


def engine_options(lobby: Mapping[str, Any]) -> dict[str, object]:
    """The options a lobby starts its game with."""
    return {"tie": lobby["tie"], **lobby.get("options", {})}


def check_deal(lobby: Mapping[str, Any]) -> None:
    """Raise the engine's `SetupError` if the signed-up players cannot be dealt this game
    (e.g. the advanced roles of 基础规则 with too few civilians)."""
    new_game(
        ruleset=str(lobby["ruleset"]),
        players=[str(user_id) for user_id, _ in lobby["players"]],
        seed=DRY_RUN_SEED,
        options=engine_options(lobby),
    )


def suggestions(rules: Ruleset, current: str) -> list[str]:
    """Completions of what has been typed so far: the options already set, then each
    `name=value` not yet set that fits the last, unfinished word."""
    text = current.replace("＝", "=")
    done, _, partial = text.rpartition(" ") if not text.endswith(" ") else (text, "", "")
    done = done.strip()
    try:
        taken = set(parse_options(done))
    except SetupError:
        return []
    pairs = [
        f"{name}={value}"
        for name, values in sorted(rules.option_choices.items())
        for value in values
    ]
    pairs += ["composition=1", "composition=2", "self_vote=false", "self_vote=true", "warmup=60"]
    prefix = f"{done} " if done else ""
    return [
        f"{prefix}{pair}"[:100]
        for pair in pairs
        if pair.partition("=")[0] not in taken
        and pair.startswith(partial)
        and pair.partition("=")[0] in option_names(rules)
    ][:25]
