"""The runtime on its own: no Discord, no simcord — a fake port, a fake clock, a SQLite file.

What the Discord layer relies on the runtime for: posts become votes by their own time and
only once; a catch-up reads what the port holds; a lock closes the window it names and no other;
start-up resumes exactly the games of the servers this process serves; reminders reach pending
players privately, once per window.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import gc
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from fakes import FakePort, Wired, runtime_on, settings

from bot.config import WindowLength
from bot.records.render import deadline_text
from bot.runtime.collector import YOUNG_THRESHOLD
from bot.runtime.port import DISCORD_EPOCH_MS, ChannelPost
from bot.runtime.runtime import Runtime
from bot.runtime.schedule import GameSchedule, to_ms
from bot.runtime.service import GameService, PlayerSpec
from bot.runtime.timing import DeadlineScheduler
from bot.store import OutboxItem, Repository
from engine.commands import ExtendDeadline, Lock
from engine.model import PhaseKind, Seat
from engine.pending import window_key
from engine.state import Window

PLAYERS = 8
VOTE_CHANNEL = 500
GAME_CHANNEL = 400


def snowflake(when: dt.datetime, n: int = 0) -> int:
    """A message id made at `when` (as Discord makes them), `n` telling apart ids of one ms."""
    return ((to_ms(when) - DISCORD_EPOCH_MS) << 22) + n


async def new_game(w: Wired, server_id: int = 1, seed: str = "runtime") -> int:
    schedule = GameSchedule(
        power=WindowLength(dt.timedelta(hours=1)),
        vote=WindowLength(dt.timedelta(hours=1)),
        timezone=ZoneInfo("UTC"),
    )
    players = [PlayerSpec(user_id=1000 + i, name=f"p{i}") for i in range(1, PLAYERS + 1)]
    channels = {"game": str(GAME_CHANNEL + server_id), "vote": str(VOTE_CHANNEL + server_id)}
    game_id = await w.runtime.service.create_game(
        server_id=server_id,
        ruleset="v2",
        players=players,
        seed=seed,
        options={"tie": "lots"},
        channels=channels,
        schedule=schedule,
    )
    w.runtime.routes.register(game_id, channels)
    return game_id


async def to_day(w: Wired, game_id: int) -> int:
    """Lock night 1 (nobody used a power) by its deadline: day 1 opens. Returns its window."""
    state = await w.runtime.service.state(game_id)
    assert state.deadline is not None
    w.clock.set(dt.datetime.fromtimestamp(state.deadline / 1000, dt.UTC))
    outcome = await w.runtime.deadlines.lock_due(game_id)
    assert outcome is not None and outcome.ok
    state = await w.runtime.service.state(game_id)
    assert state.window is not None and state.window.kind is PhaseKind.DAY
    return state.window_index


def post(w: Wired, author: int, text: str, n: int = 0, server_id: int = 1) -> ChannelPost:
    made = ChannelPost(
        id=snowflake(w.clock.now(), n), author_id=author, content=text, created_at=w.clock.now()
    )
    w.port.posts.setdefault(VOTE_CHANNEL + server_id, []).append(made)
    return made


@pytest.fixture
async def wired(tmp_path: Path) -> Wired:
    w = await runtime_on(tmp_path)
    yield w  # type: ignore[misc]
    w.runtime.close()
    await w.database.dispose()


async def test_a_vote_post_counts_once_by_its_own_time_and_chat_is_no_vote(wired: Wired) -> None:
    w = wired
    game_id = await new_game(w)
    await to_day(w, game_id)
    w.clock.advance(60)
    vote = post(w, 1001, "投 3号", n=1)
    chat = post(w, 1002, "我觉得3号很可疑", n=2)
    w.clock.advance(600)  # read ten minutes later: the post's own time counts
    first = await w.runtime.votes.ingest(game_id, vote)
    again = await w.runtime.votes.ingest(game_id, vote)  # Discord redelivers it
    assert first is not None and first.ok
    assert again is not None and again.duplicate
    assert await w.runtime.votes.ingest(game_id, chat) is None
    state = await w.runtime.service.state(game_id)
    assert [(p.author, p.target, p.at) for p in state.posts] == [
        ("1001", Seat(3), to_ms(vote.created_at))
    ]


async def test_catch_up_reads_the_posts_the_port_holds_after_the_window_opened(
    wired: Wired,
) -> None:
    w = wired
    game_id = await new_game(w)
    await to_day(w, game_id)
    w.clock.advance(30)
    post(w, 1001, "投 4号", n=1)
    post(w, 1002, "投 4号", n=2)
    post(w, 1001, "投 5号", n=3)  # a change of vote (改票): a new post
    await w.runtime.votes.catch_up(game_id)
    await w.runtime.votes.catch_up(game_id)  # twice: nothing more
    state = await w.runtime.service.state(game_id)
    assert len(state.posts) == 3
    assert state.window is not None
    assert [(p.author, p.target) for p in state.posts] == [
        ("1001", Seat(4)),
        ("1002", Seat(4)),
        ("1001", Seat(5)),
    ]


async def test_a_lock_closes_the_window_it_names_and_never_the_next(wired: Wired) -> None:
    w = wired
    game_id = await new_game(w)
    night = (await w.runtime.service.state(game_id)).window_index
    day = await to_day(w, game_id)
    assert day != night
    # a second lock of night 1 (a moderator's advance, a retried job) arriving now
    late = await w.runtime.deadlines.lock_due(game_id, forced=True, by="9", window=night)
    assert late is not None and late.error is not None
    assert late.error.key == "phase.window_locked"
    state = await w.runtime.service.state(game_id)
    assert state.window is not None and state.window_index == day  # day 1 is still open
    lock = w.runtime.service.lock_command(
        state, await w.runtime.service.info(game_id), window=night
    )
    assert isinstance(lock, Lock) and lock.window == night


async def test_a_lock_takes_the_next_deadline_from_the_schedule_of_the_window_it_opens(
    wired: Wired,
) -> None:
    """The kind of window a lock opens next is the engine's (`engine.windows.following`): a
    night's lock gets the vote schedule, a day's and the warm-up's the power schedule; a run-off
    always the vote schedule."""
    w = wired
    power, vote, ms = dt.timedelta(hours=1), dt.timedelta(hours=3), dt.timedelta(milliseconds=1)
    schedule = GameSchedule(
        power=WindowLength(power), vote=WindowLength(vote), timezone=ZoneInfo("UTC")
    )
    players = [PlayerSpec(user_id=1000 + i, name=f"p{i}") for i in range(1, PLAYERS + 1)]
    channels = {"game": str(GAME_CHANNEL + 1), "vote": str(VOTE_CHANNEL + 1)}
    game_id = await w.runtime.service.create_game(
        server_id=1, ruleset="v2", players=players, seed="kinds",
        options={"tie": "revote", "warmup": 30}, channels=channels, schedule=schedule,
    )  # fmt: skip
    w.runtime.routes.register(game_id, channels)
    service = w.runtime.service
    info = await service.info(game_id)
    kinds = []
    for _ in range(3):  # the warm-up, night 1, day 1
        state = await service.state(game_id)
        assert state.window is not None
        lock = service.lock_command(state, info, forced=True)
        assert lock.at is not None and lock.next_deadline is not None
        assert lock.runoff_deadline == lock.at + vote // ms
        kinds.append((state.window.kind, lock.next_deadline - lock.at))
        outcome = await service.submit(game_id, lock)
        assert outcome.ok
    assert kinds == [
        (PhaseKind.WARMUP, power // ms),
        (PhaseKind.NIGHT, vote // ms),
        (PhaseKind.DAY, power // ms),
    ]


async def test_start_up_resumes_only_the_games_of_the_servers_it_serves(tmp_path: Path) -> None:
    w = await runtime_on(tmp_path, FakePort(servers={1, 2}))
    try:
        mine = await new_game(w, server_id=1, seed="a")
        theirs = await new_game(w, server_id=2, seed="b")
        other = await w.restart(FakePort(servers={1}))  # another process holds server 2
        await other.runtime.resume_games()
        await other.runtime.caught_up()
        assert other.port.recovering_seen == [True, False]
        assert other.port.reconciled == [mine]
        routed = set(other.runtime.routes.channel_games.values())
        assert mine in routed and theirs not in routed
        jobs = [job.id for job in other.runtime.scheduler.jobs()]
        assert jobs == [f"game:{mine}:deadline"]
        other.runtime.close()
    finally:
        await w.database.dispose()


async def test_start_up_routes_the_games_before_recovery_performs_their_effects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The outbox the recovery performs may hold an ended game's release: the channels the next
    game holds must be routed to it by then (`bot.discord.permissions.release` leaves them)."""
    w = await runtime_on(tmp_path)
    try:
        game_id = await new_game(w)
        other = await w.restart()
        recover = other.runtime.service.recover
        routed: list[dict[int, int]] = []

        async def seen_routed(shards: object = None) -> dict[int, str]:
            routed.append(dict(other.runtime.routes.channel_games))
            return await recover(shards)  # type: ignore[arg-type]

        monkeypatch.setattr(other.runtime.service, "recover", seen_routed)
        await other.runtime.resume_games()
        assert routed == [{GAME_CHANNEL + 1: game_id, VOTE_CHANNEL + 1: game_id}]
        other.runtime.close()
    finally:
        await w.database.dispose()


async def test_reminders_reach_pending_players_privately_once_per_window(tmp_path: Path) -> None:
    w = await runtime_on(tmp_path, reminder="30m")
    try:
        game_id = await new_game(w)
        window = await to_day(w, game_id)
        post(w, 1001, "投 2号", n=1)
        await w.runtime.votes.catch_up(game_id)
        w.port.closed_dms.add(1002)  # closed DMs: skipped, never retried, nothing else changes
        state = await w.runtime.service.state(game_id)
        key = window_key(state)
        assert key is not None and window == state.window_index
        first, second = await asyncio.gather(  # two jobs at once (a restart's and the old one)
            w.runtime.reminders.send(game_id, key), w.runtime.reminders.send(game_id, key)
        )
        reminded = sorted(set(first) | set(second))
        again = await w.runtime.reminders.send(game_id, key)  # every mark kept: nobody again
        voters = {int(state.seat(Seat(s)).player) for s in reminded}
        assert voters and 1001 not in voters  # voted: nothing to remind
        assert again == []
        assert sorted(user for user, _text in w.port.sent) == sorted(voters - {1002})  # once
        assert all(str(game_id) in text for _user, text in w.port.sent)
    finally:
        w.runtime.close()
        await w.database.dispose()


async def test_a_deadline_moved_during_reminders_is_the_one_the_rest_are_told(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A moderator extends the deadline while the reminders go out: the batch stops there, and
    the seats left are reminded by the next send (the new deadline's job) with the new time;
    every pending seat once."""
    w = await runtime_on(tmp_path, reminder="30m")
    try:
        game_id = await new_game(w)
        await to_day(w, game_id)
        service = w.runtime.service
        state = await service.state(game_id)
        key = window_key(state)
        assert key is not None and state.deadline is not None
        send = w.port.send_private
        extended: list[int] = []

        async def then_extended(user_id: int, text: str) -> bool:
            sent = await send(user_id, text)
            if not extended:  # after the first reminder: /mod extend, 2 hours
                extended.append(user_id)
                outcome = await service.submit(game_id, ExtendDeadline(delta_ms=7_200_000))
                assert outcome.error is None
            return sent

        monkeypatch.setattr(w.port, "send_private", then_extended)
        first = await w.runtime.reminders.send(game_id, key)
        rest = await w.runtime.reminders.send(game_id, key)
        assert len(first) == 1 and rest
        users = [user for user, _text in w.port.sent]
        assert len(users) == len(set(users)) == len(first) + len(rest)
        after = await service.state(game_id)
        assert after.deadline == state.deadline + 7_200_000
        ctx = await w.runtime.contexts.context(game_id, after)
        old, new = deadline_text(ctx, state.deadline), deadline_text(ctx, after.deadline)
        assert old in w.port.sent[0][1]
        assert all(new in text and old not in text for _user, text in w.port.sent[1:])
    finally:
        w.runtime.close()
        await w.database.dispose()


async def test_a_shard_process_resumes_only_the_games_of_its_shards(tmp_path: Path) -> None:
    """Servers on shard 0 and 1 of 2 ((id >> 22) % 2), both on this client: a process running
    shard 1 routes, reconciles and schedules the shard-1 game only."""
    zero, one = 1000 << 22, 1001 << 22
    w = await runtime_on(tmp_path, FakePort(servers={zero, one}))
    try:
        theirs = await new_game(w, server_id=zero, seed="a")
        mine = await new_game(w, server_id=one, seed="b")
        config = settings(tmp_path / "runtime.db", {"shard_count": 2, "shard_ids": [1]})
        shard = await w.restart(config=config)
        await shard.runtime.resume_games()
        await shard.runtime.caught_up()
        assert shard.port.reconciled == [mine]
        routed = set(shard.runtime.routes.channel_games.values())
        assert routed == {mine}, (theirs, routed)
        assert [job.id for job in shard.runtime.scheduler.jobs()] == [f"game:{mine}:deadline"]
        assert shard.runtime.service.cached_state(theirs) is None  # not even rebuilt
        shard.runtime.close()
    finally:
        await w.database.dispose()


async def test_a_started_bot_freezes_what_its_resume_made_before_collections_resume(
    tmp_path: Path,
) -> None:
    """With the real scheduler, `resume_games` moves what it made (the rebuilt games, their
    jobs) out of the cyclic GC before collections resume: no collection walks it (the first one
    after a thousand games took 45–100 ms and found nothing to free). From then on the youngest
    generation is collected every `YOUNG_THRESHOLD` new objects, not CPython's 700."""
    w = await runtime_on(tmp_path)
    scheduler = DeadlineScheduler(w.clock, manual=False)
    runtime = Runtime(w.runtime.settings, port=w.port, clock=w.clock, scheduler=scheduler)
    collections: list[int] = []
    thresholds = gc.get_threshold()

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    async def performed(item: OutboxItem) -> None:
        """The platform took it."""

    try:
        await to_day(w, await new_game(w))
        service = GameService(Repository(w.database.sessions), w.clock)
        service.set_performer(performed)
        runtime.start(service)
        scheduler.start()
        frozen = gc.get_freeze_count()
        assert thresholds[0] < YOUNG_THRESHOLD
        gc.callbacks.append(seen)
        try:
            await runtime.resume_games()
        finally:
            gc.callbacks.remove(seen)
        assert collections == []
        assert gc.get_freeze_count() > frozen
        assert gc.get_threshold() == (YOUNG_THRESHOLD, *thresholds[1:])
        assert [job.id for job in scheduler.jobs()] == ["game:1:deadline"]
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()
        scheduler.shutdown()
        runtime.close()
        w.runtime.close()
        await w.database.dispose()


async def test_a_restart_is_ready_before_its_catch_ups_and_locks_overdue_games_after_them(
    tmp_path: Path,
) -> None:
    """`resume_games` returns with every future deadline scheduled and nothing read from the
    platform yet; the queued work reads each vote channel, sets permissions and locks an overdue
    window only after its posts are in (they count by their own time)."""
    w = await runtime_on(tmp_path, FakePort(servers={1, 2}))
    try:
        overdue = await new_game(w, server_id=1, seed="a")
        w.clock.advance(1800)
        waiting = await new_game(w, server_id=2, seed="b")
        await to_day(w, overdue)
        await to_day(w, waiting)  # half an hour later
        day_ends = (await w.runtime.service.state(overdue)).deadline
        assert day_ends is not None
        w.clock.advance(60)
        post(w, 1002, "投 3号", n=1, server_id=1)  # made while the bot was down
        later = await w.runtime.service.state(waiting)
        assert later.deadline is not None and later.deadline > day_ends
        w.clock.set(dt.datetime.fromtimestamp((day_ends + later.deadline) / 2000, dt.UTC))
        other = await w.restart()
        await other.runtime.resume_games()
        jobs = {job.id for job in other.runtime.scheduler.jobs()}
        assert jobs == {f"game:{waiting}:deadline"}  # the overdue one waits for its catch-up
        assert other.port.reconciled == [] and other.runtime.catch_ups.pending == 2
        await other.runtime.caught_up()
        assert sorted(other.port.reconciled) == sorted([overdue, waiting])
        state = await other.runtime.service.state(overdue)
        assert state.window is not None and state.window.kind is PhaseKind.NIGHT
        day = state.history[-1]
        assert [(v.author, v.target) for v in day.posts] == [("1002", Seat(3))]  # type: ignore[union-attr]
        other.runtime.close()
    finally:
        await w.database.dispose()


@pytest.mark.parametrize(
    ("window", "hinted"),
    [
        (Window(kind=PhaseKind.DAY, number=1, revote=2, candidates=(Seat(2), Seat(5))), True),
        (Window(kind=PhaseKind.DAY, number=1, revote=2, chooser=Seat(3)), False),
        (Window(kind=PhaseKind.DAY, number=1, last_act=True), False),
    ],
    ids=["run-off", "victim's choice", "last act"],
)
async def test_only_a_vote_window_earns_the_hint(
    wired: Wired, monkeypatch: pytest.MonkeyPatch, window: Window, hinted: bool
) -> None:
    """A run-off is a vote window; a victim's choice (one player picks) and a last-act window
    (no vote) are not: a vote-like line there is talk, and nothing is marked."""
    w = wired
    game_id = await new_game(w)
    await to_day(w, game_id)
    state = dataclasses.replace(await w.runtime.service.state(game_id), window=window)

    async def in_window(_: int) -> object:
        return state

    monkeypatch.setattr(w.runtime.service, "state", in_window)
    assert await w.runtime.hints.due(game_id, post(w, 1001, "投 3号", 1)) is hinted
    marks = {k for k in (await w.runtime.service.info(game_id)).channels if "hint" in k}
    assert marks == ({"vote_hint:1001"} if hinted else set())


async def test_a_vote_in_the_discussion_earns_one_hint_per_author_per_day(wired: Wired) -> None:
    w = wired
    game_id = await new_game(w)
    await to_day(w, game_id)
    twice = [post(w, 1001, "投 3号", n) for n in (1, 2)]
    # two posts handled at once: exactly one of them earns the hint
    answers = await asyncio.gather(*(w.runtime.hints.due(game_id, p) for p in twice))
    assert sorted(answers) == [False, True]
    assert await w.runtime.hints.due(game_id, post(w, 1002, "弃权", 3))
    assert not await w.runtime.hints.due(game_id, post(w, 1001, "投 4号", 4))
    # the next day: the same author is hinted again, and only that day's claims are kept
    for _ in range(2):  # day 1 locks, then night 2
        state = await w.runtime.service.state(game_id)
        assert state.deadline is not None
        w.clock.set(dt.datetime.fromtimestamp(state.deadline / 1000, dt.UTC))
        assert (await w.runtime.deadlines.lock_due(game_id)) is not None
    state = await w.runtime.service.state(game_id)
    assert state.window is not None and state.window.kind is PhaseKind.DAY
    assert await w.runtime.hints.due(game_id, post(w, 1001, "投 3号", 5))
    assert w.runtime.hints._claimed[game_id] == (state.window.number, {1001})


async def test_a_game_whose_channel_was_deleted_is_stopped_on_start_once(tmp_path: Path) -> None:
    """A game whose channel the platform says is deleted is stopped at start-up, before its
    catch-up, lock or permissions: no job of it is left, it takes no more input, the port is
    asked to tell it once however often it is found (a deletion and a refused effect at once);
    the other game goes on."""
    w = await runtime_on(tmp_path, FakePort(servers={1, 2}))
    try:
        lost = await new_game(w, seed="a")
        kept = await new_game(w, server_id=2, seed="b")
        port = FakePort(servers={1, 2}, lost={lost: "vote"})
        other = await w.restart(port)
        await other.runtime.resume_games()
        await other.runtime.caught_up()
        info = await other.runtime.service.info(lost)
        assert info.status.value == "stopped_error" and info.status_error == "channel deleted: vote"
        assert port.told_stopped == [(lost, "vote")]
        assert port.reconciled == [kept]
        jobs = [job.id for job in other.runtime.scheduler.jobs()]
        assert jobs == [f"game:{kept}:deadline"]
        twice = (other.runtime.stop_game(lost, "game"), other.runtime.stop_game(lost, "vote"))
        await asyncio.gather(*twice)
        assert port.told_stopped == [(lost, "vote")]
        state = await other.runtime.service.state(lost)
        assert state.deadline is not None
        other.clock.set(dt.datetime.fromtimestamp(state.deadline / 1000, dt.UTC))
        assert await other.runtime.deadlines.lock_due(lost) is None
        other.runtime.close()
    finally:
        await w.database.dispose()
