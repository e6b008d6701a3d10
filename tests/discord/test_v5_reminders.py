"""Deadline reminders where a player holds two cards (5.0 双身份): the one private message names
each of the player's own cards that still owes a power, and what it owes; a card whose power is
used is not named, nor is anyone else's card. A one-card game's reminder names no card."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from envclock import EnvClock
from gamebot import Driver, Table, by_role, running_table

from bot.records.i18n import render
from bot.records.render import deadline_text
from engine.rulesets import rules_for

SEED = "v5-remind"  # 7 players, 14 cards: 7 号/8 号 police + doctor, 11 号/12 号 killer + 处决
PLAYERS = 7


def _reminders(t: Table, index: int) -> list[str]:
    """The reminders player `index` (0-based) received."""
    return [m.content for m in t.dms(t.players[index]) if m.content.startswith("【提醒】")]


def _owes(card: int, *powers: str) -> str:
    names = "、".join(render("zh-CN", f"power.{p}", {}) for p in powers)
    return f"牌位 {card}号：{names}"


async def reminded(t: Table, d: Driver, key: str, phase: str, **extra: object) -> str:
    """The reminder `key` of the open window (the first of its kind), as the catalog writes it;
    then the clock is taken to the reminder's time and its job run."""
    state = await t.bot.runtime.service.state(d.game_id)
    ctx = await t.bot.runtime.contexts.context(d.game_id, state)
    assert state.deadline is not None
    deadline = deadline_text(ctx, state.deadline)
    phase_name = ctx.t(phase, number=1)
    expected = ctx.t(key, game=d.game_id, phase=phase_name, deadline=deadline, **extra)
    await t.advance(30 * 60)
    await t.bot.runtime.scheduler.run_due()
    await t.env.settle()
    return expected


async def test_a_player_whose_two_cards_owe_powers_is_told_which_cards_owe_what(
    tmp_path: Path,
) -> None:
    async with running_table(tmp_path / "g.db", PLAYERS, EnvClock(), SEED, reminder="30m") as t:
        d = Driver(t, "v5")
        await d.start()  # night 1
        state = await t.bot.runtime.service.state(d.game_id)
        rules = rules_for(state)
        powers = {
            int(s.seat): tuple(p.value for p in rules.night_powers(state, s)) for s in state.seats
        }
        both = [i for i in range(PLAYERS) if powers[2 * i + 1] and powers[2 * i + 2]]
        assert len(both) >= 2, powers  # the seed deals two players a power on each card
        idle, busy = both[:2]
        used, left = 2 * busy + 1, 2 * busy + 2
        await d.power_by_command(used, powers[used][0], None)  # one card passes: done
        public = t.public()
        await t.advance(30 * 60)
        fired = await t.bot.runtime.scheduler.run_due()
        await t.env.settle()
        assert fired == [f"game:{d.game_id}:remind:night-1"]

        # both cards owe: one message naming each with its power
        (note,) = _reminders(t, idle)
        first, second = 2 * idle + 1, 2 * idle + 2
        owes = f"{_owes(first, *powers[first])}；{_owes(second, *powers[second])}"
        assert owes in note, note
        # one card owes: it alone is named
        (note,) = _reminders(t, busy)
        assert _owes(left, *powers[left]) in note and f"牌位 {used}号" not in note, note
        # every reminder names its own player's cards only; nothing is said in public
        owing = {s for s, p in powers.items() if p and s != used}
        for i in range(PLAYERS):
            for text in _reminders(t, i):
                named = {int(n) for n in re.findall(r"牌位 (\d+)号", text)}
                assert named and named <= {2 * i + 1, 2 * i + 2} & owing, (i, text)
        assert t.public() == public
        info = await t.bot.runtime.service.info(d.game_id, refresh=True)
        marked = {int(k.rsplit(":", 1)[1]) for k in info.channels if k.startswith("reminded:")}
        assert marked == owing


async def test_a_one_card_reminder_names_no_card(tmp_path: Path) -> None:
    async with running_table(tmp_path / "g.db", 8, EnvClock(), SEED, reminder="30m") as t:
        d = Driver(t, "basic")
        roles = await d.start()
        for killer in by_role(roles, "killer"):
            await d.power_by_command(killer, "kill", None)
        expected = await reminded(t, d, "remind.powers", "record.night")
        for police in by_role(roles, "police"):
            assert _reminders(t, police - 1) == [expected]


@pytest.mark.parametrize(
    ("hosting", "place"), [("text", "投票频道 <#{}> "), ("forum", "本日投票帖")]
)
async def test_a_vote_reminder_says_where_the_votes_go(
    tmp_path: Path, hosting: str, place: str
) -> None:
    """A game hosted in a forum takes its votes in each day's 投票帖, not in a vote channel:
    the reminder says so, as the day's opening post does (a channel: by a link to it)."""
    clock = EnvClock()
    async with running_table(tmp_path / "g.db", 8, clock, SEED, hosting, reminder="30m") as t:
        d = Driver(t, "basic")
        await d.start()
        await d.quiet_night()  # day 1: nobody has voted
        expected = await reminded(
            t, d, "remind.vote", "record.day", vote=place.format(t.channel.id)
        )
        for i in range(8):
            assert _reminders(t, i)[-1] == expected
