"""Races: state-changing inputs fired at once through simcord give what some sequential order of
the same inputs gives — the same stored events, the same view for every seat, the same answers to
each person, the same messages, roles and overwrites on Discord (so no effect performed twice).

Each race is run alone, in each sequential order, on fresh bots with the same setup (the
references), then `racekit.RUNS` times at once with the interleavings varied from a seeded RNG
(launch order, yields before each launch, yields at every await of the store and of the HTTP
client), on SQLite and on PostgreSQL.

Inputs that close or change the open window (a lock by the deadline job or `/mod advance`, a
deadline override, a pause) are bound to the window open when the bot takes them up (issue 12):
when two of them are taken up together, the outcome is one of them alone, and the other is refused
privately (a job: does nothing). Only an input taken up after the other's lock or override was
committed (or after the other was answered) may act on the window then open, as in sequence.
"""

from __future__ import annotations

import random
import shutil
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from racekit import (
    MORE_RUNS,
    PLAYERS,
    RULESET,
    RUNS,
    Bench,
    Databases,
    Input,
    answer_texts,
    bench,
    click_dm,
    deadline_job,
    deadline_job_after,
    deadline_jobs,
    diff,
    outcome,
    performed_twice,
    post,
    run_at_once,
    run_in_order,
    slash,
    tick,
)

from bot.records.i18n import render

Step = Callable[[Bench], Awaitable[None]]
SHM = Path("/dev/shm")


# -- setups (deterministic, through the ordinary guarded verbs) -----------------------------------


async def lobby(b: Bench, joined: int) -> None:
    """A v2 sign-up in the game channel with the first `joined` players in it."""
    t = b.table
    await t.moderator.slash(t.channel, "game new", ruleset=RULESET)
    for member in t.players[:joined]:
        await member.slash(t.channel, "game join")


async def _game_id(b: Bench) -> int:
    games = await b.bot.runtime.service.repo.list_games()
    assert games, "no game was started"
    return games[-1].id


async def started(b: Bench) -> None:
    """The game dealt: night 1 open."""
    await lobby(b, PLAYERS)
    await b.table.moderator.slash(b.table.channel, "game start")
    b.game_id = await _game_id(b)


async def to_deadline(b: Bench) -> None:
    """The clock at the open window's deadline (the deadline job is due, not run)."""
    jobs = deadline_jobs(b)
    assert len(jobs) == 1, f"the game should have one deadline job: {jobs}"
    await b.env.advance_time(max(0.0, (jobs[0].when - b.env.now()).total_seconds()))


async def night1_due(b: Bench) -> None:
    await started(b)
    await to_deadline(b)


async def day1(b: Bench) -> None:
    """Night 1 locked by its deadline job (nobody killed): day 1 open."""
    await night1_due(b)
    await deadline_job(b)
    await b.env.settle()
    state = await b.bot.runtime.service.state(b.game_id)
    assert state.window is not None and state.window.kind.value == "day"


async def day1_due(b: Bench) -> None:
    await day1(b)
    await b.env.advance_time(600)
    await to_deadline(b)


async def day1_vote_due(b: Bench) -> None:
    """Day 1 with a vote by seat 1 for seat 2 (posted ten minutes in); clock at the deadline."""
    await day1(b)
    await b.env.advance_time(600)
    vote = await b.table.player(1).send(b.table.channel, "投 2")
    b.notes["vote"] = str(vote.id)
    await to_deadline(b)


# -- inputs ----------------------------------------------------------------------------------------


def join(seat: int) -> Input:
    return Input(f"join:{seat}", lambda b: slash(b, b.player(seat), "game join"))


def start(by: str) -> Input:
    return Input(f"start:{by}", lambda b: slash(b, _mod(b, by), "game start"))


def confirm(seat: int) -> Input:
    return Input(
        f"confirm:{seat}",
        lambda b: click_dm(b, b.player(seat), "faguan:confirm:"),
    )


def advance(by: str) -> Input:
    return Input(
        f"advance:{by}",
        lambda b: slash(b, _mod(b, by), "mod advance"),
        closes=True,
        actor=lambda b: _mod(b, by),
    )


def extend(by: str) -> Input:
    return Input(
        f"extend:{by}",
        lambda b: slash(b, _mod(b, by), "mod extend", minutes=30),
        closes=True,
        actor=lambda b: _mod(b, by),
    )


def pause(by: str) -> Input:
    return Input(
        f"pause:{by}",
        lambda b: slash(b, _mod(b, by), "mod pause"),
        closes=True,
        actor=lambda b: _mod(b, by),
    )


JOB = Input("deadline job", deadline_job, closes=True)
JOB_AFTER = Input("deadline job", deadline_job_after, closes=True)
"""The job 1 ms after the deadline, for races with posts (which carry their own time)."""


def vote_post(seat: int, target: int) -> Input:
    return Input(f"post:{seat}", lambda b: post(b, b.player(seat), f"投 {target}"))


def replace(seat: int) -> Input:
    return Input(
        f"replace:{seat}",
        lambda b: slash(b, b.table.moderator, "mod replace", seat=seat, member=b.table.outside),
    )


def act(seat: int, target: int) -> Input:
    return Input(
        f"act:{seat}", lambda b: slash(b, b.player(seat), "act", power="kill", target=target)
    )


async def _void_the_vote(b: Bench) -> Any:
    post_id = b.notes["vote"]
    return await slash(b, b.table.moderator, "mod void", message_id=post_id, reason="race")


VOID = Input("void:mod", _void_the_vote)


def _mod(b: Bench, by: str) -> Any:
    return b.table.moderator if by == "mod" else b.mod2


async def pending(b: Bench) -> None:
    """Epilogue: the moderator asks who has not confirmed."""
    result = await b.table.moderator.slash(b.table.channel, "mod pending")
    b.answers["after:/mod pending"] = answer_texts(result)


async def start_after(b: Bench) -> None:
    """Epilogue: the moderator starts the game (the seats show who joined, in what order)."""
    result = await b.table.moderator.slash(b.table.channel, "game start")
    b.answers["after:/game start"] = answer_texts(result)
    games = await b.bot.runtime.service.repo.list_games()
    b.game_id = games[-1].id if games else 0


# -- the races -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Race:
    """Inputs fired at once after a setup (and an epilogue after them, if any)."""

    name: str
    setup: Step
    inputs: tuple[Input, ...]
    after: Step | None = None
    orders: tuple[tuple[Input, ...], ...] = ()
    """The sequential orders to compare with (default: the inputs as listed, and reversed)."""

    def sequential(self) -> tuple[tuple[Input, ...], ...]:
        return self.orders or (self.inputs, tuple(reversed(self.inputs)))


def _setup(step: Callable[..., Awaitable[None]], *args: Any) -> Step:
    async def run(b: Bench) -> None:
        await step(b, *args)

    return run


def _killer_and_victim(roles: dict[int, str]) -> tuple[int, int]:
    killer = min(s for s, r in roles.items() if r == "killer")
    victim = min(s for s, r in roles.items() if r == "civilian")
    return killer, victim


CONFIRMS = tuple(confirm(seat) for seat in range(1, PLAYERS + 1))
TICK = Input("", tick)
VOTE = vote_post(3, 2)

RACES = [
    Race("join/join", _setup(lobby, PLAYERS - 2), (join(PLAYERS - 1), join(PLAYERS)), start_after),
    Race("start/start", _setup(lobby, PLAYERS), (start("mod"), start("mod2"))),
    Race("confirm×8", started, CONFIRMS, pending, orders=(CONFIRMS,)),
    Race("advance/advance", night1_due, (advance("mod"), advance("mod2"))),
    Race("advance/deadline job", night1_due, (advance("mod"), JOB)),
    Race("extend/deadline job", night1_due, (extend("mod"), JOB)),
    Race(
        "vote post/lock",
        day1_due,
        (VOTE, JOB_AFTER),
        # the post made before the deadline passes, or after it and before the lock, or after
        orders=((VOTE, TICK, JOB), (TICK, VOTE, JOB), (TICK, JOB, VOTE)),
    ),
    Race("pause/lock", night1_due, (pause("mod"), JOB)),
    Race("void/lock", day1_vote_due, (VOID, JOB)),
]
"""replace/act is its own test: its seats depend on the deal, known after a setup."""

ROLES_SEEN: dict[str, dict[int, str]] = {}


async def _replace_act_inputs(databases: Databases) -> tuple[Input, ...]:
    """The killer replaced while they kill: the seats from the deal (the same in every run)."""
    if "deal" not in ROLES_SEEN:
        async with bench(databases) as b:
            await started(b)
            state = await b.bot.runtime.service.state(b.game_id)
            ROLES_SEEN["deal"] = {int(s.seat): s.role.value for s in state.seats}
    killer, victim = _killer_and_victim(ROLES_SEEN["deal"])
    return (replace(killer), act(killer, victim))


# -- running and judging ---------------------------------------------------------------------------


_REFERENCES: dict[tuple[str, str], dict[str, Any]] = {}
"""Outcomes of the sequential orders, by race and order: the same on every backend (ids and
times come from simcord's world and clock), so each is computed once, on the first backend."""


async def _reference(databases: Databases, race: Race, inputs: Sequence[Input]) -> dict[str, Any]:
    key = (race.name, " then ".join(i.label or "the clock moves" for i in inputs))
    if key not in _REFERENCES:
        async with bench(databases) as b:
            await race.setup(b)
            b.seal_setup()
            await run_in_order(b, inputs)
            if race.after is not None:
                await race.after(b)
            _REFERENCES[key] = await outcome(b)
    return _REFERENCES[key]


async def _at_once(
    databases: Databases, race: Race, rng: random.Random, run: int
) -> tuple[dict[str, Any], list[str], bool]:
    async with bench(databases) as b:
        await race.setup(b)
        b.seal_setup()
        order = await run_at_once(b, race.inputs, rng, run)
        if race.after is not None:
            await race.after(b)
        return await outcome(b), order, b.overlapped


ACCEPTED = {render(locale, "notice.accepted", {}) for locale in ("zh-CN", "en")}
TRY_AGAIN = {render(locale, "notice.try_again", {}) for locale in ("zh-CN", "en")}


def _refused(answers: list[str]) -> bool:
    """A private refusal: one private answer, neither "accepted" nor "try again"."""
    if not answers:
        return True  # the deadline job answers nobody: it did nothing
    if len(answers) != 1 or not answers[0].startswith("(private) "):
        return False
    text = answers[0].removeprefix("(private) ")
    return bool(text.strip()) and text not in ACCEPTED and text not in TRY_AGAIN


def _without(result: dict[str, Any], label: str) -> dict[str, Any]:
    return {**result, "answers": {k: v for k, v in result["answers"].items() if k != label}}


async def check_race(databases: Databases, race: Race) -> None:
    """The race's references, then `RUNS` runs at once, each judged against them (and up to
    `MORE_RUNS` more while none of a bound race's runs has overlapped)."""
    bound = all(i.closes for i in race.inputs)
    sequential = {
        " then ".join(i.label or "the clock moves" for i in order): await _reference(
            databases, race, order
        )
        for order in race.sequential()
    }
    alone = {}
    if bound:  # each input alone: the other one, arriving with it, must change nothing
        alone = {i.label: await _reference(databases, race, (i,)) for i in race.inputs}
    for name, reference in [*sequential.items(), *alone.items()]:
        assert not performed_twice(reference), (name, performed_twice(reference))
    rng = random.Random(f"{race.name}/{databases.backend}")
    overlapped_runs = 0
    for run in range(RUNS + MORE_RUNS):
        if run >= RUNS and (overlapped_runs or not bound):
            break
        result, order, overlapped = await _at_once(databases, race, rng, run)
        overlapped_runs += overlapped
        twice = performed_twice(result)
        tried: dict[str, list[str]] = {}
        if not bound or not overlapped:
            for name, reference in sequential.items():
                tried[name] = diff(result, reference)
        for label, reference in alone.items() if overlapped else ():
            (other,) = [i.label for i in race.inputs if i.label != label]
            name = f"{label} alone, {other} refused"
            tried[name] = diff(_without(result, other), reference)
            if not _refused(result["answers"].get(other, [])):
                answer = result["answers"].get(other)
                tried[name].append(f"/answers/{other}: {answer} is no private refusal")
        if any(not lines for lines in tried.values()) and not twice:
            continue
        report = "".join(f"  performed twice: {line}\n" for line in twice) + "\n".join(
            f"  against «{name}»:\n" + "\n".join(f"    {line}" for line in lines)
            for name, lines in tried.items()
        )
        pytest.fail(
            f"{race.name} on {databases.backend}, run {run + 1} (launched {order}, "
            f"{'together' if overlapped else 'one after the other'}): the outcome is no "
            f"sequential order's\n{report}",
            pytrace=False,
        )
    assert not bound or overlapped_runs > 0, (
        f"{race.name}: the inputs never overlapped in {RUNS + MORE_RUNS} runs"
    )


# -- the tests -------------------------------------------------------------------------------------


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest_asyncio.fixture
async def databases(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[Databases]:
    server = request.getfixturevalue("pg_server") if backend == "postgresql" else None
    # SQLite files in memory where the machine has a tmpfs: the bot's fsyncs only slow the
    # runs down, and the interleavings come from the awaits, not from the disk.
    folder = Path(tempfile.mkdtemp(dir=SHM)) if SHM.is_dir() else tmp_path
    made = Databases(backend, folder, server)
    try:
        yield made
    finally:
        if backend != "sqlite":
            await made.close()
        if folder != tmp_path:
            shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("race", RACES, ids=[r.name for r in RACES])
async def test_race(databases: Databases, race: Race) -> None:
    await check_race(databases, race)


async def test_race_replace_act(databases: Databases) -> None:
    race = Race("replace/act", started, await _replace_act_inputs(databases))
    await check_race(databases, race)
