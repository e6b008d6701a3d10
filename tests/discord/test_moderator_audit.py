"""The moderator commands audited through a game's life, on simcord: each test is a defect the
audit found (it failed before its fix), with what the command now does.

- Who: a moderator of *this* server's game — the right-click menus no longer reach another
  server's game through the member's seat there, and /mod acts on the game of the channel it is
  used in, never on the asker's own game found elsewhere.
- Twice at once or twice in a row: a repeat is a no-op that says so. /mod replace and /mod
  modkill name the seat's holder as the command arrived (as the forms always did); /mod extend,
  shorten and set-deadline the deadline then; a penalty or a deadline given again is refused.
- Who may substitute: not a player replaced out of the game earlier, not a moderator (who could
  read /mod pending), and a substitute who can read the team threads is named to the moderator.
- What is said: a seat penalty on one power names that power; a member is named, not given as a
  bare id; a reason is at most what can be announced; /mod pending after the end, while paused,
  in the warm-up; the override log keeps a replacement's and a removal's reason; a log channel
  the bot cannot post in is said at once.
- The menus say before the form what would refuse it; set-deadline reads full-width digits,
  /mod void a message link; a penalty offers no day power.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import inspect
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import discord
import pytest
import simcord.interactions
from envclock import EnvClock
from gamebot import Driver, Table, by_role, invite_permissions, running_table
from simcord import MemberActor, OptionError

from bot.records.i18n import render
from bot.records.render import error_text
from engine.model import Seat
from engine.state import OverrideRecord

SEED = "forms-seed"
pytestmark = pytest.mark.table(seed=SEED)


def en(key: str, **params: object) -> str:
    return render("en", key, params)


def private(result: Any) -> str:
    """The private answer to an interaction, whether sent at once or after a deferral."""
    assert result.ephemeral or not result.response, result
    texts = [m.content for m in result.followups if m.ephemeral]
    if result.response is not None:
        texts.insert(0, result.response.content)
    assert texts, "no answer"
    return str(texts[0])


def announced(t: Table) -> list[str]:
    """The bot's 【管理】 announcements in the game channel (a zh-CN game)."""
    return [m.content for m in t.channel.history() if m.content.startswith("【管理】")]


async def state_of(t: Table, d: Driver) -> Any:
    return await t.bot.runtime.service.state(d.game_id)


def overrides(state: Any, command: str) -> list[OverrideRecord]:
    return [r for r in state.history if isinstance(r, OverrideRecord) and r.command == command]


def moderator(t: Table, name: str) -> MemberActor:
    """Another member with the moderator role."""
    return t.guild.add_member(t.env.create_user(name), roles=[t.mod_role])


@contextlib.contextmanager
def speaking(locales: dict[int, str]) -> Iterator[None]:
    """Interactions by these users carry their Discord client's language (simcord sends en-US)."""
    original = simcord.interactions.base_payload

    def payload(backend: Any, **kwargs: Any) -> Any:
        record, built = original(backend, **kwargs)
        if kwargs["user_id"] in locales:
            built["locale"] = locales[kwargs["user_id"]]
        return record, built

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(simcord.interactions, "base_payload", payload)
        yield


def submits_held_together(t: Table, count: int, yields: tuple[int, ...]) -> None:
    """Hold every `service.submit` until `count` have arrived — so each command was taken up
    while the game was as it was before any of them, as when moderators send them at the same
    moment — then let the k-th go on after yields[k] turns of the event loop."""
    service = t.bot.runtime.service
    original = service.submit
    arrived: list[int] = []
    everyone = asyncio.Event()

    async def held(*args: Any, **kwargs: Any) -> Any:
        mine = len(arrived)
        if mine >= count:  # a later command, after the race
            return await original(*args, **kwargs)
        arrived.append(mine)
        if len(arrived) == count:
            everyone.set()
        await asyncio.wait_for(everyone.wait(), timeout=30)
        for _ in range(yields[mine]):
            await asyncio.sleep(0)
        return await original(*args, **kwargs)

    service.submit = held  # type: ignore[method-assign]


async def at_once(*calls: tuple[MemberActor, str, dict[str, Any]], t: Table) -> list[Any]:
    """Slash commands sent together (simcord's guarded verb refuses overlapping ones)."""
    slash = inspect.unwrap(MemberActor.slash)
    results = await asyncio.gather(*(slash(who, t.channel, name, **o) for who, name, o in calls))
    await t.env.settle()
    return list(results)


# -- who ------------------------------------------------------------------------------------------


async def test_a_moderator_of_another_server_cannot_reach_this_servers_game_by_a_menu(
    table: Table,
) -> None:
    """A player of this server's game is also a member of another server. That server's
    moderator right-clicks them there (no game in that channel): the menu used to fall back on
    the member's only game — this server's — and opened the Modkill form on it. Now only this
    server's games are found: there is none, and nothing opens."""
    t = table
    d = Driver(t, "v2")
    await d.start()
    other = t.env.create_guild("另一个服务器")
    invite_permissions(t.env, other)
    there = other.create_text_channel("闲聊")
    their_mod = other.add_member(t.env.create_user("乙服管理"), roles=[other.create_role("主持人")])
    player_there = other.add_member(t.player(3).user)
    await t.env.settle()
    for menu in ("Modkill", "Replace"):
        shown = await their_mod.context_menu(there, menu, player_there)
        assert shown.modal is None
        assert private(shown) == en("notice.no_game")
    # on this server the same menu in a channel without a game still finds the member's game
    here = t.guild.create_text_channel("闲聊")
    await t.env.settle()
    shown = await t.moderator.context_menu(here, "Modkill", t.player(3))
    assert shown.modal is not None
    assert all(seat.alive for seat in (await state_of(t, d)).seats)


async def test_mod_acts_on_the_game_of_its_channel_only(table: Table) -> None:
    """A moderator who plays in a game used /mod in a channel without one: the command found
    their own game and answered "you play in this game". /mod acts on the game of the channel
    it is used in (docs/commands.md): there is none there."""
    t = table
    d = Driver(t, "v2")
    await d.start()
    t.env.backend.add_member_role(t.guild.id, t.player(1).id, t.mod_role.id)  # a player mod
    here = t.guild.create_text_channel("闲聊")
    await t.env.settle()
    deadline = (await state_of(t, d)).deadline
    for name, options in [("mod extend", {"minutes": 30}), ("mod pending", {})]:
        r = await t.player(1).slash(here, name, **options)
        assert private(r) == en("notice.no_game")
    # in the game's own channel they are the player they are
    r = await t.player(1).slash(t.channel, "mod extend", minutes=30)
    assert private(r) == en("notice.mod_plays_here")
    assert (await state_of(t, d)).deadline == deadline


# -- twice at once, twice in a row ----------------------------------------------------------------


@pytest.mark.parametrize("yields", [(0, 3), (3, 0)])
async def test_two_replacements_of_one_seat_at_once_replace_it_once(
    table: Table, yields: tuple[int, int]
) -> None:
    """Two moderators replace the same idle player at the same moment, each with their own
    substitute: the seat went to the first, then from the first substitute to the second (who
    was sent the role twice over). /mod replace names the holder it was sent about, as the
    Replace form does: the second is told the seat changed hands."""
    t = table
    d = Driver(t, "v2")
    roles = await d.start()
    idle = by_role(roles, "civilian")[0]
    second = moderator(t, "管理乙")
    other = t.guild.add_member(t.env.create_user("路人乙"))
    await t.env.settle()
    submits_held_together(t, 2, yields)
    said = await at_once(
        (t.moderator, "mod replace", {"seat": idle, "member": t.outside}),
        (second, "mod replace", {"seat": idle, "member": other}),
        t=t,
    )
    state = await state_of(t, d)
    assert len(overrides(state, "replace")) == 1
    answers = sorted(private(r) for r in said)
    assert answers == sorted([en("notice.accepted"), en("mod.seat_changed", seat=idle)])
    held = state.seat(Seat(idle)).player
    loser = other if held == str(t.outside.id) else t.outside
    assert t.dms(loser) == []  # never sent the seat's role
    assert len(announced(t)) == 1


@pytest.mark.parametrize("yields", [(0, 3), (3, 0)])
async def test_a_replacement_and_a_removal_of_one_seat_at_once_do_one_of_them(
    table: Table, yields: tuple[int, int]
) -> None:
    """One moderator replaces an idle player while another removes that same player: the
    substitute, just sent the seat's role, was removed in their place. Whichever comes second
    now does nothing and says why (the seat changed hands, or it is out of the game)."""
    t = table
    d = Driver(t, "v2")
    roles = await d.start()
    idle = by_role(roles, "civilian")[0]
    second = moderator(t, "管理乙")
    await t.env.settle()
    submits_held_together(t, 2, yields)
    replaced, removed = await at_once(
        (t.moderator, "mod replace", {"seat": idle, "member": t.outside}),
        (second, "mod modkill", {"seat": idle}),
        t=t,
    )
    state = await state_of(t, d)
    did = len(overrides(state, "replace")) + len(overrides(state, "modkill"))
    assert did == 1
    if overrides(state, "replace"):
        assert private(removed) == en("mod.seat_changed", seat=idle)
        assert state.seat(Seat(idle)).alive
    else:
        assert private(replaced) == en("mod.seat_out_of_game", seat=idle)
        assert state.seat(Seat(idle)).player != str(t.outside.id)


@pytest.mark.parametrize("yields", [(0, 3), (3, 0)])
async def test_two_extends_at_once_move_the_deadline_once(
    table: Table, yields: tuple[int, int]
) -> None:
    """Two moderators extend the night by 30 minutes at the same moment: it moved by an hour.
    Each names the deadline it saw; the second is told it was moved meanwhile, and to what."""
    t = table
    d = Driver(t, "v2")
    await d.start()
    before = (await state_of(t, d)).deadline
    assert before is not None
    second = moderator(t, "管理乙")
    await t.env.settle()
    submits_held_together(t, 2, yields)
    said = await at_once(
        (t.moderator, "mod extend", {"minutes": 30}), (second, "mod extend", {"minutes": 30}), t=t
    )
    state = await state_of(t, d)
    assert state.deadline == before + 30 * 60_000
    assert len(overrides(state, "extend")) == 1
    ctx = await t.bot.runtime.contexts.context(d.game_id, locale="en")
    moved = error_text(ctx, "mod.deadline_moved", {"deadline": state.deadline})
    assert sorted(private(r) for r in said) == sorted([en("notice.accepted"), moved])
    assert len(announced(t)) == 1
    # given again now, from the deadline as it is, it moves it: a new command
    again = await second.slash(t.channel, "mod shorten", minutes=10)
    assert private(again) == en("notice.accepted")
    assert (await state_of(t, d)).deadline == before + 20 * 60_000


async def test_the_same_deadline_set_twice_is_set_once(table: Table) -> None:
    """`/mod set-deadline` to the deadline already in force was announced and logged again. It
    is now refused, saying the deadline is already that."""
    t = table
    d = Driver(t, "v2")
    await d.start()
    first = await t.moderator.slash(t.channel, "mod set-deadline", time="2026-01-01 10:00")
    assert private(first) == en("notice.accepted")
    again = await t.moderator.slash(t.channel, "mod set-deadline", time="2026-01-01 10:00")
    state = await state_of(t, d)
    ctx = await t.bot.runtime.contexts.context(d.game_id, locale="en")
    assert private(again) == error_text(ctx, "mod.deadline_unchanged", {"deadline": state.deadline})
    assert len(overrides(state, "set_deadline")) == 1
    assert len(announced(t)) == 1


async def test_a_penalty_given_twice_is_given_once(table: Table) -> None:
    """The same penalty sent twice (or one an earlier penalty of the same team or seat already
    covers) was announced twice and suspended twice. It is now refused, naming the night."""
    t = table
    d = Driver(t, "v2")
    await d.start()
    given = await t.moderator.slash(t.channel, "mod penalty", team="killers", reason="诈尸")
    assert private(given) == en("notice.accepted")
    for options in ({"team": "killers"}, {"team": "killers", "power": "kill"}):
        again = await t.moderator.slash(t.channel, "mod penalty", reason="诈尸", **options)
        assert private(again) == en("mod.penalty_already", night=2)
    seat = await t.moderator.slash(t.channel, "mod penalty", seat=3, power="check", reason="x")
    assert private(seat) == en("notice.accepted")
    wider = await t.moderator.slash(t.channel, "mod penalty", seat=3, reason="x")  # every power
    assert private(wider) == en("notice.accepted")
    state = await state_of(t, d)
    assert len(state.suspensions) == 3
    assert len(announced(t)) == 3


# -- what is said ---------------------------------------------------------------------------------


async def test_a_seat_penalty_on_one_power_names_that_power(table: Table) -> None:
    """A seat penalty limited to one power was announced as "cannot use any night power": it
    now names the power the moderator gave (their input: the same whatever the seat's role)."""
    t = table
    d = Driver(t, "v2")
    await d.start()
    await t.moderator.slash(t.channel, "mod penalty", seat=3, power="check", reason="诈尸")
    await t.moderator.slash(t.channel, "mod penalty", seat=4, reason="诈尸")
    state = await state_of(t, d)
    name = {n: f"{n}号 {t.names[n - 1]}" for n in (3, 4)}
    check = render("zh-CN", "power.check", {})
    assert announced(t) == [
        render(
            "zh-CN",
            "override.penalty_seat",
            {"reason": "诈尸", "seat": name[3], "night": 2, "power": check},
        ),
        render(
            "zh-CN",
            "override.penalty_seat",
            {
                "reason": "诈尸",
                "seat": name[4],
                "night": 2,
                "power": render("zh-CN", "log.any_power", {}),
            },
        ),
    ]
    assert check in announced(t)[0] and check not in announced(t)[1]
    assert len(state.suspensions) == 2


async def test_a_member_already_playing_is_named_not_given_by_id(table: Table) -> None:
    """Replacing a seat with someone who plays in the game answered with their bare Discord id
    ("1456… is already playing"): they are named by a mention (a private answer pings no one)."""
    t = table
    d = Driver(t, "v2")
    await d.start()
    busy = t.player(3)
    r = await t.moderator.slash(t.channel, "mod replace", seat=2, member=busy)
    assert private(r) == en("mod.already_playing", player=f"<@{busy.id}>")
    assert (await state_of(t, d)).seat(Seat(2)).player == str(t.player(2).id)


async def test_a_reason_is_never_longer_than_an_announcement_can_carry(table: Table) -> None:
    """A /mod reason had no limit: a modkill with a 3,000-character reason was taken, and its
    announcement (over Discord's 2,000 characters) was never posted. The reasons now take at
    most what the forms take (200 characters), and are announced in full."""
    t = table
    d = Driver(t, "v2")
    roles = await d.start()
    civilian = by_role(roles, "civilian")[0]
    long = "长" * 201
    for name, options in [
        ("mod modkill", {"seat": civilian, "reason": long}),
        ("mod replace", {"seat": civilian, "member": t.outside, "reason": long}),
        ("mod void", {"message_id": "1", "reason": long}),
        ("mod penalty", {"team": "killers", "reason": long}),
    ]:
        with pytest.raises(OptionError):
            await t.moderator.slash(t.channel, name, **options)
    assert all(seat.alive for seat in (await state_of(t, d)).seats)
    reason = "长" * 200
    r = await t.moderator.slash(t.channel, "mod modkill", seat=civilian, reason=reason)
    assert private(r) == en("notice.accepted")
    await t.env.settle()
    assert any(reason in text for text in announced(t))


async def test_the_override_log_keeps_a_replacements_and_a_removals_reason(table: Table) -> None:
    """The 【管理】 announcement of a replacement or a removal gives its reason; the override log
    line said only which seat. It now says what the announcement says, reason included."""
    t = table
    d = Driver(t, "v2")
    roles = await d.start()
    log = t.guild.create_text_channel("mod-log")
    await t.env.settle()
    await t.moderator.slash(t.channel, "mod log-channel", channel=log)
    civ = by_role(roles, "civilian")
    await t.moderator.slash(t.channel, "mod replace", seat=civ[0], member=t.outside, reason="掉线")
    await t.moderator.slash(t.channel, "mod modkill", seat=civ[1], reason="挂机")
    await t.moderator.slash(t.channel, "mod modkill", seat=civ[2])
    await t.env.settle()
    lines = [m.content for m in log.history()]
    assert len(lines) == 3
    assert lines[0].endswith(
        render("zh-CN", "log.replace", {"seat": f"{civ[0]}号 路人"})
        + render("zh-CN", "log.reason", {"reason": "掉线"})
    )
    seat1 = f"{civ[1]}号 {t.names[civ[1] - 1]}"
    assert lines[1].endswith(
        render("zh-CN", "log.modkill", {"seat": seat1})
        + render("zh-CN", "log.reason", {"reason": "挂机"})
    )
    seat2 = f"{civ[2]}号 {t.names[civ[2] - 1]}"
    assert lines[2].endswith("：" + render("zh-CN", "log.modkill", {"seat": seat2}))


# -- who may substitute ---------------------------------------------------------------------------


async def test_a_player_replaced_out_cannot_take_another_seat(table: Table) -> None:
    """A player replaced out of the game (who knows their seat's role and team) could be put
    into another seat as a substitute, carrying what they knew. Refused, naming them; their own
    seat they may take back."""
    t = table
    d = Driver(t, "v2")
    roles = await d.start()
    first, other = by_role(roles, "civilian")[:2]
    gone = t.player(first)
    await t.moderator.slash(t.channel, "mod replace", seat=first, member=t.outside)
    r = await t.moderator.slash(t.channel, "mod replace", seat=other, member=gone)
    assert private(r) == en("mod.played_before", player=f"<@{gone.id}>")
    form = await t.moderator.context_menu(t.channel, "Replace", t.player(other))
    by_form = await t.moderator.submit_modal(form, {"substitute": [gone], "reason": "掉线"})
    assert private(by_form) == en("mod.played_before", player=f"<@{gone.id}>")
    state = await state_of(t, d)
    assert state.seat(Seat(other)).player == str(t.player(other).id)
    assert len(overrides(state, "replace")) == 1
    # back to their own seat, they know nothing more than they did: taken
    r = await t.moderator.slash(t.channel, "mod replace", seat=first, member=gone)
    assert private(r) == en("notice.accepted")
    assert (await state_of(t, d)).seat(Seat(first)).player == str(gone.id)


async def test_a_moderator_is_no_substitute(table: Table) -> None:
    """A moderator could put themselves (or another moderator) into a seat mid-game, after
    reading /mod pending — which lists, at night, exactly the players who hold a power. Refused
    by /mod replace and by the Replace form, before anything is submitted."""
    t = table
    d = Driver(t, "v2")
    roles = await d.start()
    idle = by_role(roles, "civilian")[0]
    second = moderator(t, "管理乙")
    await t.env.settle()
    r = await t.moderator.slash(t.channel, "mod replace", seat=idle, member=t.moderator)
    assert private(r) == en("mod.substitute_is_moderator", name="mod")
    form = await t.moderator.context_menu(t.channel, "Replace", t.player(idle))
    by_form = await t.moderator.submit_modal(form, {"substitute": [second], "reason": "掉线"})
    assert private(by_form) == en("mod.substitute_is_moderator", name="管理乙")
    state = await state_of(t, d)
    assert state.seat(Seat(idle)).player == str(t.player(idle).id)
    assert overrides(state, "replace") == []
    assert t.dms(second) == [] and t.dms(t.moderator) == []
    # the moderator may still moderate: they hold no seat
    r = await t.moderator.slash(t.channel, "mod extend", minutes=5)
    assert private(r) == en("notice.accepted")


async def test_a_substitute_who_can_read_the_team_threads_is_named_to_the_moderator(
    table: Table,
) -> None:
    """Players with Manage Threads in the team threads' channel are named at /game start; a
    substitute with it was not. The moderator who replaces is now told, privately, as at the
    start — by the permission alone."""
    t = table
    d = Driver(t, "v2")
    roles = await d.start()
    civ = by_role(roles, "civilian")
    helper = t.guild.create_role("助理", permissions=discord.Permissions(manage_threads=True))
    reader = t.guild.add_member(t.env.create_user("助理甲"), roles=[helper])
    await t.env.settle()
    r = await t.moderator.slash(t.channel, "mod replace", seat=civ[0], member=reader)
    warning = en(
        "notice.players_see_private_threads",
        channel=f"<#{t.channel.id}>",
        players=f"<@{reader.id}>",
    )
    assert [m.content for m in r.followups if m.ephemeral] == [warning]
    assert (await state_of(t, d)).seat(Seat(civ[0])).player == str(reader.id)
    # one without it: no warning
    r = await t.moderator.slash(t.channel, "mod replace", seat=civ[1], member=t.outside)
    assert private(r) == en("notice.accepted") and r.followups == []
    assert not any("Manage Threads" in m for m in t.public())


# -- /mod pending, the menus, what a moderator types ----------------------------------------------


async def test_pending_after_the_end_while_paused_and_in_the_warm_up(tmp_path: Path) -> None:
    """/mod pending listed every player as "role not confirmed" after the end, showed "no
    deadline" while the clock was paused (its "min left" text was never used), and "not voted
    yet: nobody" in the warm-up, where no one votes. Now: the game is over; the time kept by
    the pause; nothing owed in the warm-up."""
    async with running_table(tmp_path / "g.db", 8, EnvClock(), SEED) as t:
        d = Driver(t, "v2", options="warmup=60")
        await d.start()
        shown = private(await t.moderator.slash(t.channel, "mod pending"))
        assert en("pending.votes", seats=en("pending.nobody")) not in shown
        assert en("pending.unconfirmed", seats="").split(":")[0] in shown
        await t.advance(15 * 60)
        await t.moderator.slash(t.channel, "mod pause")
        shown = private(await t.moderator.slash(t.channel, "mod pending"))
        kept = en("notice.paused") + " " + en("pending.paused_left", minutes=45)
        assert en("pending.deadline", deadline=kept) in shown.splitlines()
        await t.moderator.slash(t.channel, "mod end", winner="draw")
        shown = private(await t.moderator.slash(t.channel, "mod pending"))
        assert shown == en("phase.game_over")


async def test_the_menus_say_before_the_form_what_would_refuse_it(table: Table) -> None:
    """After the end, Modkill and Replace opened their forms (refused only once filled in), and
    "Void this vote" opened its form on any post, a chat line or a post already void included.
    Now each says first what the form would be refused for."""
    t = table
    d = Driver(t, "v2")
    roles = await d.start()
    await d.quiet_night()
    civ = by_role(roles, "civilian")
    chat = await t.player(civ[0]).send(t.channel, "大家好")
    vote = await d.post_vote(civ[1], f"投 {civ[2]}", civ[2])
    await t.env.settle()
    shown = await t.moderator.context_menu(t.channel, "Void this vote", chat)
    assert shown.modal is None and private(shown) == en("mod.unknown_post", post=chat.id)
    shown = await t.moderator.context_menu(t.channel, "Void this vote", vote)
    assert shown.modal is not None
    await t.moderator.submit_modal(shown, {"reason": "代投"})
    shown = await t.moderator.context_menu(t.channel, "Void this vote", vote)
    assert shown.modal is None and private(shown) == en("mod.post_already_void", post=vote.id)
    await t.moderator.slash(t.channel, "mod end", winner="draw")
    await t.env.settle()
    for menu in ("Modkill", "Replace"):
        shown = await t.moderator.context_menu(t.channel, menu, t.player(civ[3]))
        assert shown.modal is None and private(shown) == en("phase.game_over")
    shown = await t.moderator.context_menu(t.channel, "Void this vote", vote)
    assert shown.modal is None and private(shown) == en("phase.game_over")


async def test_a_deadline_typed_full_width_and_a_post_given_by_its_link(table: Table) -> None:
    """A Chinese keyboard types ２２：００ (full-width): set-deadline could not read it. And
    /mod void took a message link (what Copy Message Link gives) as an unknown post id."""
    t = table
    d = Driver(t, "v2")
    roles = await d.start()
    r = await t.moderator.slash(t.channel, "mod set-deadline", time="２０２６-０１-０１ １０：００")
    assert private(r) == en("notice.accepted")
    ctx = await t.bot.runtime.contexts.context(d.game_id)
    expected = int(dt.datetime(2026, 1, 1, 10, 0, tzinfo=ctx.timezone).timestamp() * 1000)
    assert (await state_of(t, d)).deadline == expected
    await d.quiet_night()
    civ = by_role(roles, "civilian")
    vote = await d.post_vote(civ[0], f"投 {civ[1]}", civ[1])
    link = f"https://discord.com/channels/{t.guild.id}/{t.channel.id}/{vote.id}"
    r = await t.moderator.slash(t.channel, "mod void", message_id=link, reason="代投")
    assert private(r) == en("notice.accepted")
    state = await state_of(t, d)
    assert [p.void_reason for p in state.posts] == ["vote.voided_by_moderator"]


async def test_the_penalty_offers_no_day_power(table: Table) -> None:
    """A penalty stops a night power; its choices offered `confess` and `veto`, day powers in
    every ruleset: a penalty on them would stop nothing. They are no longer offered."""
    mod = next(c for c in table.bot.tree.get_commands() if c.name == "mod")
    assert isinstance(mod, discord.app_commands.Group)
    penalty = next(c for c in mod.commands if c.name == "penalty")
    assert isinstance(penalty, discord.app_commands.Command)
    power = next(p for p in penalty.parameters if p.name == "power")
    offered = {c.value for c in power.choices}
    assert "confess" not in offered and "veto" not in offered
    assert {"kill", "check", "save", "rob", "guard"} <= offered


async def test_new_refusals_answer_in_the_moderators_language(table: Table) -> None:
    """The audit's new answers are in the asker's language: zh-CN for a zh-CN client."""
    t = table
    d = Driver(t, "v2")
    await d.start()
    with speaking({t.moderator.id: "zh-CN"}):
        await t.moderator.slash(t.channel, "mod penalty", team="killers", reason="诈尸")
        again = await t.moderator.slash(t.channel, "mod penalty", team="killers", reason="诈尸")
        assert private(again) == render("zh-CN", "mod.penalty_already", {"night": 2})
        r = await t.moderator.slash(t.channel, "mod replace", seat=1, member=t.moderator)
        assert private(r) == render("zh-CN", "mod.substitute_is_moderator", {"name": "mod"})


async def test_a_log_channel_the_judge_cannot_post_in_is_said_at_once(table: Table) -> None:
    """`/mod log-channel` on a channel the bot may not post in was taken as set; every line
    was then dropped, with a warning in the bot's own log only. The moderator is told now."""
    t = table
    bot_role = t.guild.roles[t.env.backend.bot_user.name]
    closed = t.guild.create_text_channel(
        "closed-log", overwrites={bot_role: discord.PermissionOverwrite(send_messages=False)}
    )
    open_log = t.guild.create_text_channel("mod-log")
    await t.env.settle()
    r = await t.moderator.slash(t.channel, "mod log-channel", channel=closed)
    mention = f"<#{closed.id}>"
    assert private(r) == "\n".join(
        [
            en("log.channel_set", channel=mention),
            en("log.channel_unwritable", channel=mention),
        ]
    )
    r = await t.moderator.slash(t.channel, "mod log-channel", channel=open_log)
    assert private(r) == en("log.channel_set", channel=f"<#{open_log.id}>")


async def test_a_removal_in_5_0_names_every_card_that_leaves(tmp_path: Path) -> None:
    """In 5.0 (two cards a player) a removal takes the player out with both cards, but the
    announcement and the override log named only the card given. They now name both (which
    cards a player holds is public from the start)."""
    async with running_table(tmp_path / "g.db", 7, EnvClock(), "e2e-seed") as t:
        d = Driver(t, "v5")
        await d.start()
        log = t.guild.create_text_channel("mod-log")
        await t.env.settle()
        await t.moderator.slash(t.channel, "mod log-channel", channel=log)
        r = await t.moderator.slash(t.channel, "mod modkill", seat=3, reason="挂机")
        assert private(r) == en("notice.accepted")
        await t.env.settle()
        state = await state_of(t, d)
        assert not state.seat(Seat(3)).alive and not state.seat(Seat(4)).alive
        both = "3号 玩家2、4号 玩家2"
        removal = render("zh-CN", "override.modkill", {"seat": both})
        assert any(text.startswith(removal) for text in announced(t)), announced(t)
        (line,) = [m.content for m in log.history()]
        assert line.endswith(render("zh-CN", "log.modkill", {"seat": both}) + "（理由：挂机）")


async def test_results_and_teams_offered_are_this_games_by_name(table: Table) -> None:
    """/mod end offered every result of every ruleset (天下无贼's thieves in a v2 game) and
    /mod penalty every team, by their ids; now each offers what this game's rules have, by name
    in the moderator's language. A result or team typed instead of picked is refused, saying
    so, and nothing changes."""
    t = table
    d = Driver(t, "v2")
    await d.start()
    winners = await t.moderator.autocomplete(t.channel, "mod end", "winner", "")
    assert [(c["name"], c["value"]) for c in winners] == [
        (en("camp.good"), "good"),
        (en("camp.killers"), "killers"),
        (en("camp.draw"), "draw"),
    ]
    assert [c["value"] for c in await t.moderator.autocomplete(
        t.channel, "mod end", "winner", "kill"
    )] == ["killers"]  # fmt: skip
    teams = await t.moderator.autocomplete(t.channel, "mod penalty", "team", "")
    assert [(c["name"], c["value"]) for c in teams] == [
        (en("team_name.killers"), "killers"),
        (en("team_name.police"), "police"),
    ]
    r = await t.moderator.slash(t.channel, "mod end", winner="thieves")
    assert private(r) == en("mod.no_such_winner", winner="thieves", allowed="draw, good, killers")
    r = await t.moderator.slash(t.channel, "mod penalty", team="mafia", reason="x")
    assert private(r) == en("mod.no_such_team", team="mafia")
    state = await state_of(t, d)
    assert not state.over and overrides(state, "penalty") == []
    r = await t.moderator.slash(t.channel, "mod end", winner="good_thieves")  # no side here
    assert private(r) == en(
        "mod.no_such_winner", winner="good_thieves", allowed="draw, good, killers"
    )
    assert not (await state_of(t, d)).over
