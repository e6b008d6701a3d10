"""Answers that concern hidden information, as a person meets them: autocomplete for someone
with no game or no seat, the card a 5.0 player names, `/role game_id:` asked from a DM, the
asker's own language, and a `/vote` refused under the game's lock (the day locked first, or a
forum day's 投票帖 not open yet). Each answer reaches the asker alone, privately, in their
language; no role appears in it nor in any public channel; nothing in the game changes."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import simcord.interactions
from envclock import EnvClock
from gamebot import Driver, Table, by_role, running_table

from bot.discord.views import valid_targets
from bot.records.i18n import render
from bot.runtime.deadlines import fire_deadline
from engine.model import PhaseKind, Power, Role, Seat
from engine.view import view_for

SEED = "e2e-seed"
"""v5 with 7 players under this seed: 玩家4 holds card 7 (a secret police) and card 8 (the
killer) — see tests/discord/test_e2e_rulesets.py; the tests below look the roles up anyway."""

ROLE_NAMES = {
    locale: [render(locale, f"role.{role.value}", {}) for role in Role]
    for locale in ("zh-CN", "en")
}
"""Every role's name, in both languages (no answer to someone without a seat may hold one)."""


pytestmark = pytest.mark.table(seed=SEED)


@contextlib.contextmanager
def speaking(locales: dict[int, str]) -> Iterator[None]:
    """Interactions by these users carry their Discord client's language (simcord sends en-US
    for everyone): what Discord puts in an interaction's `locale`."""
    original = simcord.interactions.base_payload

    def payload(backend: Any, **kwargs: Any) -> Any:
        record, built = original(backend, **kwargs)
        if kwargs["user_id"] in locales:
            built["locale"] = locales[kwargs["user_id"]]
        return record, built

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(simcord.interactions, "base_payload", payload)
        yield


def private(result: Any) -> str:
    """The text of an ephemeral answer (failing if the answer was public)."""
    assert result.response is not None and result.ephemeral, result
    return str(result.response.content)


def bot_posts(t: Table, channel: Any = None) -> list[str]:
    """What the bot has posted in a channel (the game channel by default)."""
    place = t.channel if channel is None else channel
    return [m.content for m in place.history() if m.author.bot]


def no_role_named(text: str) -> None:
    for locale, names in ROLE_NAMES.items():
        assert not any(name in text for name in names), (locale, text)


# -- autocomplete ---------------------------------------------------------------------------------


async def test_autocomplete_outside_any_game_offers_nothing(table: Table) -> None:
    """Where no game is in play and the asker has no seat in any, `/vote`'s targets and the
    cards of `/act` and `/pass` are empty lists: nothing to choose, nothing learnt."""
    d = Driver(table, "basic")
    await d.start()
    lobby = table.guild.create_text_channel("闲聊")
    for member in (table.outside, table.moderator):  # no seat in any game
        assert await member.autocomplete(lobby, "vote", "target", "") == []
        assert await member.autocomplete(lobby, "act", "card", "", power="kill") == []
        assert await member.autocomplete(lobby, "pass", "card", "", power="kill") == []
    # a stranger in the game's own channel: the game is found, no seat
    assert await table.outside.autocomplete(table.channel, "act", "card", "") == []
    # a player in another channel: their only game is found (their own cards, their own list)
    mine = await table.player(2).autocomplete(lobby, "act", "card", "")
    state = await table.bot.runtime.service.state(d.game_id)
    assert [c["value"] for c in mine] == [2]
    assert mine[0]["name"].endswith(render("en", f"role.{state.seat(Seat(2)).role.value}", {}))


@pytest.mark.table(players=7)
async def test_a_5_0_players_named_card_decides_what_act_target_offers(table: Table) -> None:
    """`/act power:kill card:N target:` offers what the engine takes from card N: nothing for the
    holder's card without the power, the killer card's targets for the killer card; a card that
    is not the asker's is ignored (the holder's card with the power acts)."""
    t = table
    d = Driver(t, "v5")
    roles = await d.start()
    (killer,) = by_role(roles, "killer")
    holder = d.member(killer)
    state = await t.bot.runtime.service.state(d.game_id)
    (other,) = (c for c in state.seats_of(str(holder.id)) if c != killer)
    assert Power.KILL not in view_for(state, other).powers
    expected = [int(s) for s in valid_targets(state, Seat(killer), Power.KILL)]
    assert expected
    offered = await holder.autocomplete(t.channel, "act", "target", "", power="kill", card=killer)
    assert [c["value"] for c in offered] == expected
    lacking = await holder.autocomplete(
        t.channel, "act", "target", "", power="kill", card=int(other)
    )
    assert lacking == []
    stranger_card = next(s for s in range(1, 15) if d.member(s) is not holder)
    fallback = await holder.autocomplete(
        t.channel, "act", "target", "", power="kill", card=stranger_card
    )
    assert [c["value"] for c in fallback] == expected
    # the other players' cards stay theirs: no one else is offered a kill
    for member in t.players:
        if member is not holder:
            got = await member.autocomplete(
                t.channel, "act", "target", "", power="kill", card=killer
            )
            assert got == [], member.name


# -- /role from a DM ------------------------------------------------------------------------------


async def test_role_with_a_game_id_in_a_dm_answers_its_players_only(table: Table) -> None:
    """A player asks `/role game_id:N` in their DM with the bot: their own role. Anyone else
    asking for that game, or for a game that does not exist, gets the same "no game" answer:
    whether a game exists is not told, let alone who holds what."""
    d = Driver(table, "basic")
    roles = await d.start()
    police = by_role(roles, "police")[0]
    member = table.player(police)
    mine = await member.user.slash("role", game_id=d.game_id)
    assert render("en", "role.police", {}) in private(mine)

    public = bot_posts(table)
    no_game = render("en", "notice.no_game", {})
    for asker in (table.outside, table.moderator):  # no seat in the game
        await asker.user.send_dm("hi")  # opens the DM channel
        refused = await asker.user.slash("role", game_id=d.game_id)
        assert private(refused) == no_game
        missing = await asker.user.slash("role", game_id=d.game_id + 1000)
        assert private(missing) == no_game
        no_role_named("\n".join(m.content for m in asker.user.dm_channel.history()))
    assert bot_posts(table) == public  # nothing said in the game channel


# -- the asker's language -------------------------------------------------------------------------


async def test_answers_follow_the_askers_language_else_the_games(table: Table) -> None:
    """The same refusal to three people: a Chinese client reads it in Chinese, an English one
    in English, a French one in the game's language (zh-CN here); each privately."""
    d = Driver(table, "basic")
    await d.start()
    await d.lock()  # day 1
    zh, en, fr = table.player(1), table.player(2), table.player(3)
    before = await table.bot.runtime.service.state(d.game_id)
    with speaking({zh.id: "zh-CN", fr.id: "fr"}):
        said = {
            m.id: private(await m.slash(table.channel, "vote", target="谁呢")) for m in (zh, en, fr)
        }
        offered = await zh.autocomplete(table.channel, "vote", "target", "")
    assert said[zh.id] == render("zh-CN", "vote.unknown_target", {"raw": "谁呢"})
    assert said[en.id] == render("en", "vote.unknown_target", {"raw": "谁呢"})
    assert said[fr.id] == said[zh.id]
    assert offered[0] == {"name": render("zh-CN", "notice.abstain", {}), "value": "abstain"}
    assert await table.bot.runtime.service.state(d.game_id) == before
    assert not any("谁呢" in post for post in bot_posts(table))


# -- /vote refused under the game's lock ----------------------------------------------------------


async def test_a_vote_overtaken_by_the_lock_is_refused_privately_and_not_posted(
    table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The day's deadline job takes the game's lock between `/vote`'s first check and its post:
    under the lock the vote is judged again, on the night now open, and refused — nothing is
    posted for it, nothing recorded, and the voter alone is told why."""
    d = Driver(table, "basic")
    roles = await d.start()
    await d.lock()  # day 1
    service = table.bot.runtime.service
    state = await service.state(d.game_id)
    assert state.deadline is not None
    await table.env.advance_time(state.deadline / 1000 - table.env.now().timestamp())
    voter, target = by_role(roles, "civilian")[:2]
    runner = table.bot.runtime.deadlines
    submit_posted = service.submit_posted

    async def overtaken(game_id: int, post: Any) -> Any:
        await fire_deadline(runner.key, game_id)  # the lock comes first
        return await submit_posted(game_id, post)

    monkeypatch.setattr(service, "submit_posted", overtaken)
    posted_before = bot_posts(table)
    result = await table.player(voter).slash(table.channel, "vote", target=str(target))
    await table.env.settle()
    after = await service.state(d.game_id)
    assert after.window is not None and after.window.kind is PhaseKind.NIGHT
    assert private(result) == render("en", "vote.window_closed", {})
    assert all(p.seat != voter for p in after.posts)  # nothing recorded for it
    ctx = await table.bot.runtime.contexts.context(d.game_id)
    line = ctx.t("notice.vote_post", who=ctx.seat(Seat(voter)), target=ctx.seat(Seat(target)))
    assert line not in bot_posts(table)  # nothing posted for it
    assert any(p.startswith("【看表】") for p in bot_posts(table)[len(posted_before) :])


async def test_a_vote_while_the_forum_days_vote_post_is_not_open_asks_to_try_again(
    tmp_path: Path,
) -> None:
    """A forum game's day opened while Discord refused to make its 投票帖: `/vote` has nowhere
    to post, so it is answered "try again" privately and nothing is posted or recorded."""
    async with running_table(tmp_path / "f.db", 8, EnvClock(), SEED, "forum") as t:
        d = Driver(t, "basic")
        roles = await d.start()
        assert t.forum is not None
        t.env.inject_error("POST", f"/channels/{t.forum.id}/threads", status=500, times=None)
        await d.lock()  # day 1: its 投票帖 cannot be made
        state = await t.bot.runtime.service.state(d.game_id)
        assert state.window is not None and state.window.kind is PhaseKind.DAY
        voter, target = by_role(roles, "civilian")[:2]
        threads = len(t.forum.threads)
        result = await t.player(voter).slash(t.channel, "vote", target=str(target))
        assert private(result) == render("en", "notice.try_again", {})
        assert (await t.bot.runtime.service.state(d.game_id)).posts == ()
        assert len(t.forum.threads) == threads
        t.env.backend.faults.clear()


# -- /lastwords after the end ---------------------------------------------------------------------


async def test_lastwords_after_the_end_opens_no_box_and_says_the_game_is_over(table: Table) -> None:
    """Night 1's victim may give last words through day 1; once a moderator ends the game the
    engine takes none (docs/rulings.md, "Last words"): `/lastwords` opens no box to be refused
    afterwards, the victim's view says none are due, and nothing is posted."""
    d = Driver(table, "v2")
    roles = await d.start()
    killer, victim = by_role(roles, "killer")[0], by_role(roles, "civilian")[0]
    await d.power_by_command(killer, "kill", victim)
    await d.lock()  # day 1: the victim's last words are open
    service = table.bot.runtime.service
    assert view_for(await service.state(d.game_id), Seat(victim)).last_words_due
    await table.moderator.slash(table.channel, "mod end", winner="draw")
    await table.env.settle()
    ended = await service.state(d.game_id)
    assert ended.over and not view_for(ended, Seat(victim)).last_words_due
    public = bot_posts(table)
    result = await table.player(victim).slash(table.channel, "lastwords")
    assert result.modal is None
    assert private(result) == render("en", "phase.game_over", {})
    assert bot_posts(table) == public


# -- /choose outside the tied players -------------------------------------------------------------


async def test_a_pick_outside_the_tied_players_is_refused_in_the_choices_words(
    table: Table,
) -> None:
    """v1's tie rule: the run-off tied again, night 1's victim picks among the tied. `/choose`
    naming someone else is refused privately in the choice's own words (not the run-off's
    「本轮 PK 只能投平票者」), the tied players named as seats; no pick is taken."""
    d = Driver(table, "v2", tie="victim_choice")
    roles = await d.start()
    killer = by_role(roles, "killer")[0]
    victim, a, b, *_ = by_role(roles, "civilian")
    await d.power_by_command(killer, "kill", victim)
    await d.lock()  # day 1: `victim` is out
    voters = [s for s in range(1, 9) if s not in (victim, a, b)][:4]
    for _round in range(2):  # tied, then tied again in the run-off: the victim picks
        for voter, target in zip(voters, (a, a, b, b), strict=True):
            await d.post_vote(voter, f"投 {target}", target)
        await d.lock()
    service = table.bot.runtime.service
    state = await service.state(d.game_id)
    assert state.window is not None and state.window.chooser == victim
    public = bot_posts(table)
    result = await table.player(victim).slash(table.channel, "choose", target=voters[0])
    ctx = replace(await table.bot.runtime.contexts.context(d.game_id), locale="en")
    tied = ctx.seats(",".join(map(str, state.window.candidates)))
    assert private(result) == f"You can only choose among the tied players ({tied})."
    assert await service.state(d.game_id) == state
    assert bot_posts(table) == public
