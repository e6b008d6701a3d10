"""Ruleset options on Discord: `/game new … options:mine=killers` (the mine's side, 基础规则's
advanced roles, 匪民's knowledge, 无间道's first night, composition, self-vote), checked when the
lobby opens and tried on a dry-run deal at the start; and the DM power menus in the game's
language."""

from __future__ import annotations

from pathlib import Path

import pytest
from envclock import EnvClock
from gamebot import Driver, Table, by_role, running_table

from bot.runtime.game_options import parse_options, suggestions
from engine.errors import SetupError
from engine.record import record_of
from engine.rulesets import RULESETS

SEED = "options-seed"
pytestmark = pytest.mark.table(players=12, seed=SEED)


async def test_a_ruleset_option_reaches_the_game_and_its_record(table: Table) -> None:
    d = Driver(table, "v2_mine", options="mine=killers")
    roles = await d.start()
    assert by_role(roles, "mine")
    lobby_post = table.public()[0]
    assert "v2_mine" in lobby_post and "mine=killers" in lobby_post
    state = await table.bot.runtime.service.state(d.game_id)
    assert dict(state.options.extras) == {"mine": "killers"}
    assert record_of(state)["options"]["mine"] == "killers"


async def test_basic_with_its_advanced_roles(table: Table) -> None:
    d = Driver(table, "basic", options="sniper=yes doctor=yes police_special=sheriff")
    roles = await d.start()
    assert {"sniper", "doctor", "sheriff"} <= set(roles.values())
    state = await table.bot.runtime.service.state(d.game_id)
    assert dict(state.options.extras) == {
        "sniper": "yes",
        "doctor": "yes",
        "butterfly": "no",
        "police_special": "sheriff",
    }


async def test_bad_options_are_named_and_open_no_lobby(table: Table) -> None:
    mod = table.moderator
    cases = {
        "mine=maybe": "Option “mine” cannot be “maybe”; allowed: neutral, good, killers.",
        "bomb=yes": "Unknown game option “bomb”.",
        "mine": "“mine” is not an option: write name=value",
        "tie=revote": "Option “tie” has its own field in /game new",
        "composition=two": "Option “composition” cannot be “two”",
        # too many digits for int(), too long for a reply: quoted cut short, as text
        "composition=" + "9" * 4400: f"Option “composition” cannot be “{'9' * 40}…”",
        "x" * 5000: f"“{'x' * 40}…” is not an option",
    }
    for typed, expected in cases.items():
        r = await mod.slash(table.channel, "game new", ruleset="v2_mine", options=typed)
        assert r.ephemeral and expected in r.response.content, (typed, r.response.content)
    joined = await table.player(1).slash(table.channel, "game join")
    assert joined.ephemeral and table.bot.runtime.routes.channel_games.get(table.channel.id) is None
    assert not [p for p in table.public() if "v2_mine" in p]  # no lobby was announced


async def test_a_composition_or_player_count_no_sign_up_can_have_is_refused(table: Table) -> None:
    """A `composition` no player count of the sign-up offers (v2 has one table), and a player
    count of 0 (not "the default"), are refused before a sign-up opens; one a count offers
    opens it (basic, 8 players: two tables)."""
    mod = table.moderator
    refused = {
        ("v2", "composition=2", None): "Option “composition” cannot be “2”; allowed: 1.",
        ("basic", "composition=3", None): "Option “composition” cannot be “3”; allowed: 1, 2.",
        ("v2", None, 0): "player",
    }
    for (ruleset, options, low), expected in refused.items():
        extra: dict[str, object] = {} if low is None else {"min_players": low}
        if options is not None:
            extra["options"] = options
        r = await mod.slash(table.channel, "game new", ruleset=ruleset, **extra)
        assert r.ephemeral and expected in r.response.content, (ruleset, r.response.content)
    assert table.bot.runtime.routes.channel_games.get(table.channel.id) is None
    opened = await mod.slash(
        table.channel, "game new", ruleset="basic", options="composition=2", max_players=8
    )
    assert not opened.ephemeral


async def test_a_game_that_cannot_be_dealt_is_refused_before_anything_happens(
    tmp_path: Path,
) -> None:
    async with running_table(tmp_path / "g.db", 8, EnvClock(), SEED) as t:
        r = await t.moderator.slash(
            t.channel, "game new", ruleset="basic", options="sniper=yes doctor=yes"
        )
        assert not r.ephemeral
        for p in t.players:
            await p.slash(t.channel, "game join")
        roles_before = set(t.guild.roles)
        started = await t.moderator.slash(t.channel, "game start")
        assert (
            started.ephemeral
            and "advanced roles of basic need at least 6 civilians" in started.response.content
        )
        assert set(t.guild.roles) == roles_before  # no players' role made
        assert t.bot.runtime.routes.channel_games.get(t.channel.id) is None
        again = await t.player(1).slash(t.channel, "game leave")  # the lobby is still open
        assert not again.ephemeral and "7" in again.response.content  # 7 of the 8 still signed up


async def test_options_are_suggested_while_typing(table: Table) -> None:
    mod = table.moderator
    shown = await mod.autocomplete(
        table.channel, "game new", "options", "sniper=yes d", ruleset="basic"
    )
    assert [c["value"] for c in shown] == ["sniper=yes doctor=no", "sniper=yes doctor=yes"]
    shown = await mod.autocomplete(table.channel, "game new", "options", "", ruleset="wujiandao")
    assert "first_night=virtual" in [c["value"] for c in shown]
    assert await mod.autocomplete(table.channel, "game new", "options", "", ruleset="nope") == []


def test_options_text_reads_like_people_type_it() -> None:
    assert parse_options("sniper=yes，doctor＝yes; composition=2 self_vote=否") == {
        "sniper": "yes", "doctor": "yes", "composition": 2, "self_vote": False,
    }  # fmt: skip
    assert parse_options(None) == {} and parse_options("  ") == {}
    for bad in ("=yes", "sniper=", "sniper"):
        try:
            parse_options(bad)
        except SetupError as err:
            assert err.key == "setup.option_syntax"
        else:
            raise AssertionError(bad)
    every = suggestions(RULESETS["v2_doctor_accomplice"], "")
    assert "accomplice=knows" in every and "accomplice=checks" in every


async def test_power_menus_speak_the_games_language(table: Table) -> None:
    d = Driver(table, "v2")
    roles = await d.start()
    killer = by_role(roles, "killer")[0]
    message = next(m for m in reversed(table.dms(table.player(killer))) if m.components)
    labels = [
        o.label
        for row in message.components
        for child in row.children
        for o in getattr(child, "options", [])
    ]
    assert labels[0] == "杀人: 不行使"
    target = next(s for s in range(1, 13) if s != killer and roles[s] != "killer")
    assert f"杀人 → {target}号 玩家{target}" in labels
    assert not any("kill" in label for label in labels)
