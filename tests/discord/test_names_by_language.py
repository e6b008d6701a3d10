"""The names the bot gives what it makes on the server (the players' role, the team threads) are in
the game's language, the game's own terms kept Chinese with an English gloss; one made by an
earlier version, which named everything in Chinese, is still found rather than made twice."""

from __future__ import annotations

import pytest
from gamebot import Driver, Table
from test_team_thread_faults import killers_thread_found_again, thread_id_of

NAMES = {
    "zh-CN": ("法官·第{g}局", "第{g}局·杀手", "第{g}局·警察"),
    "en": (
        "法官·第{g}局 (judge, game {g})",
        "第{g}局 (game {g}) · 杀手 (killers)",
        "第{g}局 (game {g}) · 警察 (police)",
    ),
}


@pytest.mark.parametrize("language", ["zh-CN", "en"])
async def test_the_players_role_and_team_threads_are_named_in_the_games_language(
    table: Table, language: str
) -> None:
    t = table
    d = Driver(t, "basic", language=language)
    await d.start()
    info = await t.bot.runtime.service.info(d.game_id, refresh=True)
    role, killers, police = (name.format(g=d.game_id) for name in NAMES[language])
    assert t.env.backend.get_role(t.guild.id, int(info.channels["players_role"])).name == role
    assert t.env.backend.get_thread(int(info.channels["thread_killers"])).name == killers
    assert t.env.backend.get_thread(int(info.channels["thread_police"])).name == police


async def test_an_english_games_chinese_named_thread_made_before_its_id_was_stored_is_found(
    table: Table,
) -> None:
    """The killers' thread of an English game carries the name an earlier version gave it
    (Chinese only); its stored id is lost and it is archived: a substitute killer is added to
    that thread, and no thread of the new name is made."""
    t = table
    d = Driver(t, "basic", language="en")
    roles = await d.start()
    await d.quiet_night()
    thread_id = await thread_id_of(t, d, "killers")
    t.env.backend.get_thread(thread_id).name = f"第{d.game_id}局·杀手"
    assert await killers_thread_found_again(t, d, roles) == thread_id
    english = NAMES["en"][1].format(g=d.game_id)
    assert not [c for c in t.env.backend.channels.values() if c.name == english]


async def test_an_english_games_chinese_named_role_made_before_its_id_was_stored_is_used(
    table: Table,
) -> None:
    """A players' role named as an earlier version named it (a start cut off after the role was
    made, then the bot upgraded): the English game's start uses it and makes no other."""
    t = table
    earlier = {g: t.guild.create_role(f"法官·第{g}局") for g in range(1, 6)}
    await t.env.settle()
    d = Driver(t, "basic", language="en")
    await d.start()
    info = await t.bot.runtime.service.info(d.game_id, refresh=True)
    assert int(info.channels["players_role"]) == earlier[d.game_id].id
    english = NAMES["en"][0].format(g=d.game_id)
    assert not [r for r in t.bot.get_guild(t.guild.id).roles if r.name == english]
    role_id = earlier[d.game_id].id
    assert all(role_id in t.env.backend.get_member(t.guild.id, p.id).role_ids for p in t.players)
