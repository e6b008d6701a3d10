"""Which SQLite groups are small enough to be written in the bot's own process
(``sqlite_here.small_payloads``): the JSON values of every event, effect and outcome are
counted, however deep, and a group one value over the limit goes to the writer process."""

from __future__ import annotations

from typing import Any

from bot.store.sqlite_group import PlannedAppend
from bot.store.sqlite_here import small_payloads


def append(
    events: list[dict[str, Any]], effects: list[dict[str, Any]], outcome: dict[str, Any] | None
) -> PlannedAppend:
    return PlannedAppend(1, None, False, 7, outcome, events, ["E"] * len(events), effects)


def test_every_value_counts_wherever_it_is() -> None:
    event = {"type": "E", "post": {"seat": 5, "params": [1, [2, 3]], "pair": (4, {"k": 5})}}
    effect = {"type": "Reply", "params": []}
    outcome = {"error": "late"}
    # values: event 2 + post 3 + params 2 + [2, 3] 2 + pair 2 + {"k"} 1; effect 2; outcome 1
    group = [append([event], [effect], outcome)]
    assert small_payloads(group, most=15)
    assert not small_payloads(group, most=14)
    assert small_payloads(group * 2, most=30)
    assert not small_payloads(group * 2, most=29)  # the group's payloads together


def test_a_long_record_is_not_small() -> None:
    record = {"type": "Locked", "record": {"posts": [{"seat": n, "at": n} for n in range(1000)]}}
    assert small_payloads([append([{"type": "Voted"}], [], None)])
    assert not small_payloads([append([record], [], None)])
