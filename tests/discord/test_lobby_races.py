"""Sign-ups, starts, confirmations and channels that race (issue 12), on simcord, on SQLite and
PostgreSQL: inputs fired together are each recorded once against what is stored, never a
read-modify-write of a JSON value.

- two `/game start` at once deal one game (one role DM per player); the second press is told;
- a `/game start` and a `/game leave` at once: the leaver is dealt if and only if told the game
  had started;
- a post while the start's role DMs go out waits for them (the game's lock): none is sent twice;
- N `/game join` at once seat N players, each told their real seat and count;
- eight confirm buttons at once store eight confirmations (`/mod pending`: nobody unconfirmed);
- `/game new` naming a running game's channel is refused naming the game, by the database;
- a start that fails half-way (its Discord work is outbox effects), or a bot that dies between
  its effects, is finished by a restart: one players' role, one role DM each.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import re
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from envclock import EnvClock
from gamebot import BotEnv, Table, build_table
from pgserver import PgServer
from simcord import ChannelHandle, MemberActor
from test_lock_races import held_together

from bot.config import load
from bot.discord.client import FaguanBot, create_bot
from bot.discord.start_effects import role_name
from bot.records.i18n import render
from bot.runtime.timing import DeadlineScheduler

SEED = "lobby-races"
PLAYERS = 12


def _bot(url: str, clock: EnvClock) -> FaguanBot:
    settings = load(
        {
            "discord": {"token": "t", "moderator_role": "主持人"},
            "database": {"url": url},
            "game": {"schedule": {"power": "1h", "vote": "1h"}, "reminder": "off"},
        },
        env={},
    )
    return create_bot(
        settings, clock=clock, scheduler=DeadlineScheduler(clock), seed_source=lambda: SEED
    )


@pytest_asyncio.fixture(params=["sqlite", "postgresql"])
async def table(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Table]:
    pg: PgServer | None = None
    name = ""
    if request.param == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path / 'lobbies.db'}"
    else:
        pg = request.getfixturevalue("pg_server")
        name = f"faguan_lobby_{uuid.uuid4().hex[:10]}"
        await pg.create_database(name)
        url = pg.url(name)
    clock = EnvClock()
    env = BotEnv(_bot(url, clock))
    clock.bind(env)
    t = build_table(env, PLAYERS)
    t.url = url  # type: ignore[attr-defined]
    t.clock = clock  # type: ignore[attr-defined]
    await env.start()
    try:
        yield t
    finally:
        await env.shutdown()
        if pg is not None:
            await pg.drop_connections(name)
            await pg.drop_database(name)


async def at_once(who: MemberActor, channel: ChannelHandle, name: str, **options: Any) -> Any:
    """A slash command that may overlap others (simcord's guarded verb refuses overlaps)."""
    return await inspect.unwrap(MemberActor.slash)(who, channel, name, **options)


def answers(result: Any) -> list[str]:
    texts = [m.content for m in result.followups]
    if result.response is not None:
        texts.insert(0, result.response.content)
    return texts


def holders(t: Table, role_id: int) -> list[int]:
    """Who has the role on (simcord's) Discord: not the bot's cache, which a restart empties."""
    everyone = [t.moderator, t.outside, *t.players]
    backend = t.env.backend
    return sorted(
        m.id for m in everyone if role_id in backend.get_member(t.guild.id, m.id).role_ids
    )


def role_dms(t: Table, member: MemberActor) -> list[Any]:
    return [m for m in t.dms(member) if m.embeds]


async def open_and_join(t: Table, players: int) -> None:
    r = await t.moderator.slash(t.channel, "game new", ruleset="v2")
    assert r.response is not None and not r.ephemeral
    for p in t.players[:players]:
        await p.slash(t.channel, "game join")


def second_moderator(t: Table) -> MemberActor:
    return t.guild.add_member(t.env.create_user("mod2"), roles=[t.mod_role])


async def test_two_starts_at_once_deal_one_game(table: Table) -> None:
    t = table
    await open_and_join(t, 8)
    first, second = await asyncio.gather(
        at_once(t.moderator, t.channel, "game start"),
        at_once(second_moderator(t), t.channel, "game start"),
    )
    await t.env.settle()
    games = await t.bot.runtime.service.repo.list_games()
    assert len(games) == 1, [g.id for g in games]
    game_id = games[0].id
    assert t.bot.runtime.routes.channel_games[t.channel.id] == game_id
    for p in t.players[:8]:
        assert len(role_dms(t, p)) == 1, p.user.name  # one deal, one role DM
    said = sorted([answers(first)[-1], answers(second)[-1]])
    started = render("en", "notice.lobby_started", {"game": game_id})
    dealt = render("en", "notice.started", {"game": game_id})  # privately, in the asker's
    assert sorted([started, dealt]) == said, said
    refused = first if answers(first)[-1] == started else second
    assert refused.ephemeral and not refused.followups  # told privately, as a later press is
    # one players' role, every player in it
    roles = [r for r in t.bot.get_guild(t.guild.id).roles if r.name == role_name(game_id, "zh-CN")]
    assert len(roles) == 1
    assert int(games[0].channels["players_role"]) == roles[0].id
    assert holders(t, roles[0].id) == sorted(p.user.id for p in t.players[:8])
    # a late join or start is told which game the sign-up became
    late = await t.players[9].slash(t.channel, "game join")
    assert late.ephemeral and late.response.content == started


@pytest.mark.parametrize("joining", [4, 12])
async def test_joins_at_once_seat_everyone(table: Table, joining: int) -> None:
    t = table
    await t.moderator.slash(t.channel, "game new", ruleset="v2", max_players=16)
    results = await asyncio.gather(
        *(at_once(p, t.channel, "game join") for p in t.players[:joining])
    )
    await t.env.settle()
    told: dict[int, tuple[int, int]] = {}
    for p, result in zip(t.players, results, strict=False):
        (text,) = answers(result)
        found = re.fullmatch(r"(\d+)号 (\S+) 报名成功（(\d+)/16）。", text)
        assert found is not None and found[2] == p.user.name, text
        told[p.user.id] = (int(found[1]), int(found[3]))
    assert sorted(seat for seat, _ in told.values()) == list(range(1, joining + 1))
    assert all(seat == count for seat, count in told.values())  # the count as of their join
    lobby = await t.bot.runtime.service.repo.lobbies.newest(t.channel.id)
    assert lobby is not None
    assert [told[p.user_id][0] for p in lobby.players] == list(range(1, joining + 1))


async def test_eight_confirms_at_once_are_all_stored(table: Table) -> None:
    t = table
    await open_and_join(t, 8)
    await t.moderator.slash(t.channel, "game start")
    game_id = t.bot.runtime.routes.channel_games[t.channel.id]
    state = await t.bot.runtime.service.state(game_id)
    clicks = []
    for seat in state.seats:
        member = next(p for p in t.players if str(p.user.id) == seat.player)
        (dm,) = role_dms(t, member)
        click = inspect.unwrap(type(member.user).click)
        clicks.append(click(member.user, dm, custom_id=f"faguan:confirm:{game_id}:{seat.seat}"))
    results = await asyncio.gather(*clicks)
    await t.env.settle()
    confirmed = render("en", "notice.confirmed", {})
    assert [answers(r) for r in results] == [[confirmed]] * 8
    pending = await t.moderator.slash(t.channel, "mod pending")
    nobody = render("en", "pending.unconfirmed", {"seats": render("en", "pending.nobody", {})})
    assert nobody in pending.response.content, pending.response.content
    assert await t.bot.runtime.service.repo.lobbies.confirmed_seats(game_id) == set(range(1, 9))


async def test_a_running_games_channel_cannot_be_taken(table: Table) -> None:
    t = table
    await open_and_join(t, 8)
    await t.moderator.slash(t.channel, "game start")
    game_id = t.bot.runtime.routes.channel_games[t.channel.id]
    elsewhere = t.guild.create_text_channel("game-2")
    r = await t.moderator.slash(elsewhere, "game new", ruleset="v2", vote_channel=t.channel)
    held = render("en", "notice.channel_held", {"channel": f"<#{t.channel.id}>", "game": game_id})
    assert r.ephemeral and r.response.content == held
    assert await t.bot.runtime.service.repo.lobbies.newest(elsewhere.id) is None
    # game 1's channel still routes to game 1
    assert t.bot.runtime.routes.channel_games[t.channel.id] == game_id
    status = await t.players[0].slash(t.channel, "game status")
    assert f"Game {game_id}" in status.response.content, status.response.content
    # two sign-ups at once naming one free vote channel: one holds it, the other is told
    vote = t.guild.create_text_channel("vote-3")
    third = t.guild.create_text_channel("game-3")
    results = await asyncio.gather(
        at_once(t.moderator, elsewhere, "game new", ruleset="v2", vote_channel=vote),
        at_once(second_moderator(t), third, "game new", ruleset="v2", vote_channel=vote),
    )
    public = [r for r in results if not r.ephemeral]
    refused = [r for r in results if r.ephemeral]
    assert len(public) == 1 and len(refused) == 1
    winner = elsewhere if public[0] is results[0] else third
    assert refused[0].response.content == render(
        "en",
        "notice.channel_held_lobby",
        {"channel": f"<#{vote.id}>", "lobby": f"<#{winner.id}>"},
    )


async def test_a_start_cut_off_half_way_is_finished_once_after_a_restart(table: Table) -> None:
    """The players' role is made, then remembering its id fails (as a crash there would leave
    it): the role DMs wait in the outbox. After a restart, recovery finds the role by its name
    (no second role), adds the players, and sends each role DM once."""
    t = table
    await open_and_join(t, 8)
    service = t.bot.runtime.service
    original = service.set_channels
    failed: list[dict[str, Any]] = []

    async def cut_off(game_id: int, channels: dict[str, Any]) -> None:
        if "players_role" in channels and not failed:
            failed.append(channels)
            raise ConnectionError("the database went away")
        await original(game_id, channels)

    service.set_channels = cut_off  # type: ignore[method-assign]
    await t.moderator.slash(t.channel, "game start")
    await t.env.settle()
    assert failed
    t.env._errors_acknowledged = len(t.env.errors)
    game_id = t.bot.runtime.routes.channel_games[t.channel.id]
    assert all(not role_dms(t, p) for p in t.players[:8])  # the DMs wait behind the role
    assert await service.repo.undone_effects(game_id)

    new = _bot(t.url, t.clock)  # type: ignore[attr-defined]
    await t.env.restart_bot(new)
    await t.env.settle()
    assert not await new.runtime.service.repo.undone_effects(game_id)
    roles = [r for r in new.get_guild(t.guild.id).roles if r.name == role_name(game_id, "zh-CN")]
    assert len(roles) == 1
    info = await new.runtime.service.info(game_id, refresh=True)
    assert int(info.channels["players_role"]) == roles[0].id
    assert holders(t, roles[0].id) == sorted(p.user.id for p in t.players[:8])
    for p in t.players[:8]:
        assert len(role_dms(t, p)) == 1, p.user.name
    creates = [c for c in t.env.http_requests if c.method == "POST" and c.path.endswith("/roles")]
    assert len(creates) == 1


class Crash(BaseException):
    """The process dies here: no `except Exception` in the bot absorbs it."""


@pytest.mark.parametrize("dies_before", ["members", "Whisper"])
async def test_a_crash_between_the_starts_effects_is_recovered_once(
    table: Table, dies_before: str
) -> None:
    """The bot dies between two of the start's recorded effects (before the players are added
    to the role, or before the first role DM): nothing after it is done. A new bot on the same
    database performs the rest: one players' role with every player in it, one role DM each."""
    t = table
    await open_and_join(t, 8)
    performer = t.bot.effects

    async def dying(item: Any) -> None:
        kind = item.payload.get("step") or item.payload.get("type")
        if kind == dies_before:
            raise Crash(kind)
        await performer(item)

    t.bot.runtime.service.set_performer(dying)
    with contextlib.suppress(Crash, Exception):
        await t.moderator.slash(t.channel, "game start")
    t.env._errors_acknowledged = len(t.env.errors)
    (game,) = await t.bot.runtime.service.repo.list_games()
    assert all(not role_dms(t, p) for p in t.players[:8])  # it died before any role DM
    role_id = int(game.channels["players_role"])  # the role step was done before it died
    added = holders(t, role_id)
    assert added == ([] if dies_before == "members" else sorted(p.id for p in t.players[:8]))
    await t.bot.close()  # what the dead process leaves: its last writes may be lost or not

    new = _bot(t.url, t.clock)  # type: ignore[attr-defined]
    await t.env.restart_bot(new)
    await t.env.settle()
    assert not await new.runtime.service.repo.undone_effects(game.id)
    roles = [r for r in new.get_guild(t.guild.id).roles if r.name == role_name(game.id, "zh-CN")]
    assert len(roles) == 1
    assert holders(t, roles[0].id) == sorted(p.user.id for p in t.players[:8])
    for p in t.players[:8]:
        assert len(role_dms(t, p)) == 1, p.user.name
    creates = [c for c in t.env.http_requests if c.method == "POST" and c.path.endswith("/roles")]
    assert len(creates) == 1


@pytest.mark.parametrize("yields", [(0, 0), (0, 3), (3, 0), (0, 12), (12, 0)])
async def test_a_start_and_a_leave_at_once_deal_the_leaver_only_if_they_are_told_so(
    table: Table, yields: tuple[int, int]
) -> None:
    """Whichever the database takes first: a player whose leave was taken is not dealt; one
    told the game had started is dealt, their role DM sent."""
    t = table
    await open_and_join(t, 9)
    leaver = t.players[4]
    # both asked for while the sign-up is open, then taken in either order
    held_together(t.bot.runtime.service.repo.lobbies, ("start", "leave"), yields)
    started, left = await asyncio.gather(
        at_once(t.moderator, t.channel, "game start"), at_once(leaver, t.channel, "game leave")
    )
    await t.env.settle()
    (game,) = await t.bot.runtime.service.repo.list_games()
    state = await t.bot.runtime.service.state(game.id)
    dealt = {seat.player for seat in state.seats}
    assert answers(started)[-1] == render("en", "notice.started", {"game": game.id})
    if left.ephemeral:  # refused: told which game the sign-up became
        assert answers(left) == [render("en", "notice.lobby_started", {"game": game.id})]
        assert str(leaver.id) in dealt and len(role_dms(t, leaver)) == 1
    else:
        assert str(leaver.id) not in dealt and not role_dms(t, leaver)
        assert len(dealt) == 8
    for p in t.players[:9]:
        if p is not leaver:
            assert str(p.id) in dealt and len(role_dms(t, p)) == 1, p.user.name


async def test_a_post_during_the_starts_role_dms_sends_none_of_them_twice(table: Table) -> None:
    """The start's effects go out under the game's lock, as an input's: a vote posted at night
    while the role DMs are still going out is answered after them, and none is sent twice."""
    t = table
    await open_and_join(t, 8)
    performer = t.bot.effects
    whispers: list[Any] = []
    inside, go = asyncio.Event(), asyncio.Event()

    async def slow(item: Any) -> None:
        if item.payload.get("type") == "Whisper":
            whispers.append(item)
            if len(whispers) == 3:  # the third role DM in flight
                inside.set()
                await go.wait()
        await performer(item)

    t.bot.runtime.service.set_performer(slow)
    starting = asyncio.create_task(at_once(t.moderator, t.channel, "game start"))
    await asyncio.wait_for(inside.wait(), timeout=30)
    post = inspect.unwrap(MemberActor.send)
    posting = asyncio.create_task(post(t.players[0], t.channel, "投 2号"))
    await asyncio.wait({posting}, timeout=0.5)
    go.set()
    await asyncio.gather(starting, posting)
    await t.env.settle()
    (game,) = await t.bot.runtime.service.repo.list_games()
    assert not await t.bot.runtime.service.repo.undone_effects(game.id)
    for p in t.players[:8]:
        assert len(role_dms(t, p)) == 1, p.user.name
