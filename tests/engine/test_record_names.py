"""The record names players by who holds each seat, never by their display name: two players
may share one (Discord does not make them unique), and substitutes are named too."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from bot.cli import main
from bot.records.record_html import record_page, with_links
from bot.records.replay import replay_file, run
from engine.record import record_of, unique_names
from engine.verify import verify_record

GAMES = Path(__file__).resolve().parents[1] / "games"
EXAMPLE = GAMES / "v2" / "example_whole_game.toml"
IDS = [str(1000 + i) for i in range(8)]


def test_a_name_an_earlier_player_has_is_numbered_and_never_takes_another_players() -> None:
    names = {"a": "Alice", "b": "Alice", "c": "Alice (2)", "d": "Bo"}
    assert unique_names(["a", "b", "c", "d", "e"], names) == {
        "a": "Alice",
        "b": "Alice (3)",
        "c": "Alice (2)",
        "d": "Bo",
        "e": "e",
    }


def test_two_players_sharing_a_display_name_keep_their_own_seats(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before: `players` had 7 names for 8 seats, seats 1 and 2 were "Alice#1"/"Alice#2" (cards
    # of one player), and `faguan verify` said the record was altered.
    replay = replay_file(EXAMPLE)
    state = replay.state
    shown = {s.player: f"P{int(s.seat)}" for s in state.seats}
    shown[state.seats[0].player] = shown[state.seats[1].player] = "Alice"
    record = record_of(state, player_names=shown)

    assert record["players"] == ["Alice", "Alice (2)", *(f"P{i}" for i in range(3, 9))]
    assert list(record["roles"]) == record["players"]
    assert list(record["result"]["scores"]) == record["players"]
    assert list(record["roles"].values()) == list(replay.record["roles"].values())
    for mine, theirs in zip(record["phases"], replay.record["phases"], strict=True):
        assert len(mine.get("votes", {})) == len(theirs.get("votes", {}))  # every arrow
    assert all(f.ok for f in verify_record(record))
    path = tmp_path / "record.json"
    path.write_text(json.dumps(record, ensure_ascii=False), "utf-8")
    assert main(["verify", str(path)]) == 0, capsys.readouterr().out

    page = record_page(with_links(record, 1, 2), "en")
    rows = re.findall(r"<tr><td>(\d+)</td><td>(.*?)</td><td>(.*?)</td>", page)
    assert [(int(n), who) for n, who, _ in rows] == list(enumerate(record["players"], 1))
    assert all(role != "—" for _, _, role in rows)


def test_cards_are_grouped_by_their_holder_not_by_their_name() -> None:
    replay = replay_file(GAMES / "v5" / "v5_03_lots_tie.toml")
    state = replay.state
    holders = list(dict.fromkeys(s.player for s in state.seats))
    record = record_of(state, player_names={who: "Same" for who in holders})

    assert record["players"] == ["Same", *(f"Same ({k})" for k in range(2, len(holders) + 1))]
    assert list(record["roles"])[:4] == ["Same#1", "Same#2", "Same (2)#1", "Same (2)#2"]
    assert all(f.ok for f in verify_record(record))


def _replaced(*steps: dict[str, Any]) -> dict[str, Any]:
    return {
        "ruleset": "v2",
        "seed": "s",
        "players": IDS,
        "roles": {IDS[0]: "killer", IDS[1]: "killer", IDS[2]: "police", IDS[3]: "police"},
        "steps": [*steps, {"do": "mod", "command": "end", "winner": "draw"}],
    }


def test_substitutes_are_named_under_the_original_players_name() -> None:
    # Before: the bot named seat 5 by its present holder, `{"Sub": ["2000"]}`, and "Name4"
    # (who was dealt the seat) appeared nowhere.
    replace = {"do": "mod", "command": "replace", "target": IDS[4], "player": "2000"}
    again = {"do": "mod", "command": "replace", "target": "2000", "player": "2001"}
    kill = {"do": "mod", "command": "modkill", "target": IDS[6]}
    replay = run(_replaced(replace, again, kill))
    shown = {who: f"Name{n}" for n, who in enumerate(IDS)} | {"2000": "Sub", "2001": "Sub2"}
    record = record_of(replay.state, player_names=shown)

    assert record["players"] == [f"Name{n}" for n in range(8)]
    assert record["substitutes"] == {"Name4": ["Sub", "Sub2"]}
    first, second, modkill, _end = record["overrides"]
    assert (first["seat"], first["target"], first["player"]) == ("5", "Name4", "Sub")
    assert (second["seat"], second["target"], second["player"]) == ("5", "Sub", "Sub2")
    assert (modkill["seat"], modkill["target"]) == ("7", "Name6")
    # a replay's record is as it was: ids, its own overrides (the steps as given)
    assert replay.record["substitutes"] == {IDS[4]: ["2000", "2001"]}
    assert [o["step"] for o in replay.record["overrides"]] == [1, 2, 3, 4]


def test_a_bot_record_names_override_targets_as_the_replay_does() -> None:
    replay = run(
        _replaced(
            {"do": "mod", "command": "modkill", "target": IDS[6]},
            {"do": "mod", "command": "replace", "target": IDS[4], "player": "2000"},
        )
    )
    bot = record_of(replay.state)  # the bot's overrides come from the game's log
    for mine, theirs in zip(bot["overrides"], replay.record["overrides"], strict=True):
        shared = {k: v for k, v in theirs.items() if k != "step"}
        assert {k: mine.get(k) for k in shared} == shared
