"""5.0 双身份 on Discord: the killers' thread follows the killer card (docs/rulings.md, "Several
cards per player"). A substitute named by the replaced player's other card still takes the
killer card's thread, role DM and power menu, and the replaced player leaves the thread; a
player whose killer card is out while their other card plays on leaves the thread too."""

from __future__ import annotations

from pathlib import Path

import pytest
from envclock import EnvClock
from gamebot import Driver, Table, running_table
from simcord import BackendError, ChannelHandle, MemberActor

SEED = "v5-threads"
PLAYERS = 8  # 16 cards: one killer card, one mole


def _killer_and_other(t: Table, roles: dict[int, str]) -> tuple[MemberActor, int, int]:
    """The player holding the killer card with a card of no team: (them, killer, other)."""
    for i, member in enumerate(t.players):
        first, second = 2 * i + 1, 2 * i + 2
        if roles[first] == "killer" and roles[second] != "killer":
            return member, first, second
        if roles[second] == "killer" and roles[first] != "killer":
            return member, second, first
    raise AssertionError(f"no killer card dealt with another card: {roles}")


async def _killers_thread(t: Table, d: Driver) -> ChannelHandle:
    info = await t.bot.runtime.service.info(d.game_id, refresh=True)
    return next(h for h in t.channel.threads if h.id == int(info.channels["thread_killers"]))


def _members(t: Table, thread: ChannelHandle) -> set[int]:
    return set(t.env.backend.get_channel(thread.id).thread_members)


async def _cannot_post(who: MemberActor, where: ChannelHandle, text: str) -> None:
    with pytest.raises(BackendError) as refused:
        await who.send(where, text)
    assert refused.value.code in (50001, 50013)  # missing access (not in the thread)


def _custom_ids(t: Table, who: MemberActor) -> list[str]:
    return [
        str(getattr(child, "custom_id", ""))
        for message in t.dms(who)
        for row in message.components
        for child in getattr(row, "children", [])
    ]


async def test_a_substitute_named_by_the_other_card_takes_the_killers_thread(
    tmp_path: Path,
) -> None:
    async with running_table(tmp_path / "g.db", PLAYERS, EnvClock(), SEED) as t:
        d = Driver(t, "v5")
        roles = await d.start()  # night 1
        old, killer, other = _killer_and_other(t, roles)
        thread = await _killers_thread(t, d)
        assert old.user.id in _members(t, thread)

        await t.moderator.slash(t.channel, "mod replace", seat=other, member=t.outside)
        await t.env.settle()
        state = await t.bot.runtime.service.state(d.game_id)
        assert state.seat(killer).player == state.seat(other).player == str(t.outside.user.id)

        members = _members(t, thread)
        assert old.user.id not in members  # no longer reads the killers' plans
        assert t.outside.user.id in members
        await _cannot_post(old, thread, "我已经被替换了，还能看到杀手计划吗")
        await t.outside.send(thread, "我接手了")

        # a role DM for each card (each with its confirm button), and the killer card's menu
        ids = _custom_ids(t, t.outside)
        assert f"faguan:confirm:{d.game_id}:{killer}" in ids
        assert f"faguan:confirm:{d.game_id}:{other}" in ids
        menu_id = f"faguan:act:{d.game_id}:1:kill:{killer}"
        assert menu_id in ids
        menu = next(
            m
            for m in t.dms(t.outside)
            for row in m.components
            for c in getattr(row, "children", [])
            if getattr(c, "custom_id", None) == menu_id
        )
        victim = next(
            s
            for s, role in sorted(roles.items())
            if role == "civilian" and s not in (killer, other)
        )
        await t.outside.user.select(menu, [str(victim)], custom_id=menu_id)
        await t.env.settle()
        state = await t.bot.runtime.service.state(d.game_id)
        assert [(int(s.seat), s.target) for s in state.submissions] == [(killer, victim)]


async def test_a_player_whose_killer_card_is_voted_out_leaves_the_killers_thread(
    tmp_path: Path,
) -> None:
    async with running_table(tmp_path / "g.db", PLAYERS, EnvClock(), SEED) as t:
        d = Driver(t, "v5")
        roles = await d.start()
        holder, killer, other = _killer_and_other(t, roles)
        thread = await _killers_thread(t, d)
        await holder.send(thread, "今晚刀谁？")  # the killer card's holder talks at night
        await d.lock()  # a quiet night
        for i, member in enumerate(t.players):
            if member is not holder:
                await d.post_vote(2 * i + 1, f"投 {killer}", killer)
        await d.lock()  # night 2
        state = await t.bot.runtime.service.state(d.game_id)
        assert not state.seat(killer).alive and state.seat(other).alive
        assert state.result is None  # the mole plays on

        assert holder.user.id not in _members(t, thread)
        await _cannot_post(holder, thread, "我的杀手牌死了，但还在杀手子区吗")
        await holder.send(t.channel, "我的另一张牌还在")  # still in the game
