"""A miniature shell with crash points, for the "nothing lost, nothing doubled" tests.

``play`` drives a scripted game the way the bot does (load → decide → record → perform → mark
done), through sessions whose commits pass crash points (and group commits written in one call
on the driver, which pass the same points), and a performer standing for Discord.
A ``Faults`` plan names which crash points (counted across the whole run) kill the work: the
exception abandons the session without commit, the engine is disposed, and a new one "restarts"
on the same database: recovery, then catch-up (see ``play``).

Scenarios (the game being played) are pluggable: a counter game defined here, and the real engine
in test_store_crash.py when it is importable.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from sqlalchemy import delete, event, func, select
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlalchemy.orm import Session

from bot.store.db import Database, create_engine, open_database
from bot.store.models import Base, Input, Snapshot
from bot.store.recovery import deliver, recover
from bot.store.repository import JsonDict, OutboxItem, Repository, SeatSpec, SnapshotCodec
from bot.store.writer import Group, Stage

# --- crash points -------------------------------------------------------------------------------


class Crash(BaseException):
    """The process dies here. BaseException: no ``except Exception`` in the code may absorb it."""


@dataclass
class Faults:
    """Counts crash points as the run passes them; raises ``Crash`` at the planned ones."""

    plan: frozenset[int] = frozenset()
    passed: int = 0
    trace: list[str] = field(default_factory=list)
    crashes: list[str] = field(default_factory=list)
    dead: bool = False
    """Crashed and not restarted yet: a crash in a background task (the store's writer) kills
    the whole process, so whatever the process does next dies too."""

    def point(self, where: str) -> None:
        if self.dead:
            raise Crash(f"dead: {where}")
        self.passed += 1
        self.trace.append(where)
        if self.passed in self.plan:
            self.crashes.append(where)
            self.dead = True
            raise Crash(where)


class CrashableSession(Session):
    """A session that passes a crash point just before and just after each commit."""


@event.listens_for(CrashableSession, "before_commit")
def _before_commit(session: Session) -> None:
    session.info["faults"].point("before commit")


@event.listens_for(CrashableSession, "after_commit")
def _after_commit(session: Session) -> None:
    session.info["faults"].point("after commit")


class CrashingStage(Stage):
    """A group commit's stage that passes the "before commit" crash point when its commit is
    about to be sent (SQLite: in this process, before the request goes to the writer process)."""

    def __init__(self, faults: Faults, stage: Stage) -> None:
        self._faults = faults
        self._stage = stage

    @property  # type: ignore[override]
    def committing(self) -> bool:
        return self._stage.committing

    @committing.setter
    def committing(self, value: bool) -> None:
        if value:
            self._faults.point("before commit")
        self._stage.committing = value


class CrashableRepository(Repository):
    """The repository, its group commits written in one call on the driver (no session) passing
    the same crash points as a session's commit."""

    def __init__(self, db: Database, faults: Faults) -> None:
        super().__init__(db.sessions)
        self._faults = faults

    async def _write_group_sqlite(self, group: Group, stage: Stage) -> Any:
        done = await super()._write_group_sqlite(group, CrashingStage(self._faults, stage))
        if done is not None:
            self._faults.point("after commit")
        return done

    def die(self) -> None:
        """As the process dies: its group writer stops where it is (a request already sent to
        SQLite's writer process still runs there, as it would after a real crash)."""
        task = self._group._task if self._group is not None else None
        if task is not None:
            task.cancel()

    async def _write_group_pg(self, bind: Any, group: Group, plans: Any, stage: Stage) -> Any:
        done = await super()._write_group_pg(bind, group, plans, CrashingStage(self._faults, stage))
        self._faults.point("after commit")
        return done


def open_crashable(url: str, faults: Faults) -> Database:
    """The bot's database, with every commit passing the fault plan's crash points."""
    engine = create_engine(url)
    sessions = async_sessionmaker(
        engine,
        expire_on_commit=False,
        sync_session_class=CrashableSession,
        info={"faults": faults},
    )
    return Database(engine=engine, sessions=sessions)


class World:
    """Discord, as far as effects go: it outlives crashes, and applies one effect per key.

    ``perform`` may be called more than once for a key (at least once delivery); like a Discord
    nonce, the key makes the repeat harmless. ``applied`` is what players saw, in order.
    """

    def __init__(self, faults: Faults) -> None:
        self.faults = faults
        self.applied: list[JsonDict] = []
        self.applications: Counter[str] = Counter()
        self.calls: Counter[str] = Counter()

    async def perform(self, item: OutboxItem) -> None:
        if self.faults.dead:
            raise Crash("dead: perform")
        self.calls[item.idempotency_key] += 1
        if self.applications[item.idempotency_key]:
            return
        self.applications[item.idempotency_key] += 1
        self.applied.append(item.payload)
        self.faults.point("after perform, before mark done")


# --- scenarios ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Decision:
    """What the engine made of one input."""

    events: list[JsonDict]
    effects: list[JsonDict]
    outcome: JsonDict
    finish: bool = False


class Scenario(Protocol):
    """A game to script: its setup, its inputs (Discord message id, command), its rules; with
    ``snapshots``, the shell stores a snapshot after every input and rebuilds from the newest."""

    name: str
    players: Sequence[str]
    snapshots: SnapshotCodec[Any] | None

    def start(self) -> Decision: ...

    def steps(self) -> list[tuple[int, Any]]: ...

    def fold(self, events: list[JsonDict]) -> Any: ...

    def decide(self, state: Any, command: Any) -> Decision: ...


class CounterGame:
    """A tiny game: players add positive numbers; 0 or less is rejected; "end" ends it."""

    name = "counter"
    players = ("甲", "乙", "丙")
    snapshots: SnapshotCodec[Any] | None = None

    def start(self) -> Decision:
        return Decision(
            events=[{"type": "Started", "players": list(self.players)}],
            effects=[{"type": "Announce", "key": "start"}],
            outcome={"ok": True},
        )

    def steps(self) -> list[tuple[int, Any]]:
        return [
            (1001, ("甲", 3)),
            (1002, ("乙", 0)),  # rejected: recorded with its reply, no event
            (1003, ("丙", 5)),
            (1001, ("甲", 3)),  # Discord redelivers an old message: a no-op
            (1004, ("乙", 4)),
            (1005, "end"),
        ]

    def fold(self, events: list[JsonDict]) -> Any:
        if not events or events[0]["type"] != "Started":
            raise ValueError("a game starts with Started")
        return self.resume({"total": 0, "adds": [], "over": False}, events[1:])

    def resume(self, state: Any, events: list[JsonDict]) -> Any:
        state = {"total": state["total"], "adds": list(state["adds"]), "over": state["over"]}
        for e in events:
            if state["over"]:
                raise ValueError("event after the end")
            if e["type"] == "Added":
                state["total"] += e["n"]
                state["adds"].append((e["by"], e["n"]))
            elif e["type"] == "Ended":
                state["over"] = True
            else:
                raise ValueError(f"unknown event {e['type']}")
        return state

    def decide(self, state: Any, command: Any) -> Decision:
        if command == "end":
            return Decision(
                [{"type": "Ended", "total": state["total"]}],
                [{"type": "Announce", "key": "end", "total": state["total"]}],
                {"ok": True},
                finish=True,
            )
        by, n = command
        if state["over"] or n <= 0:
            return Decision([], [{"type": "Whisper", "to": by, "key": "rejected"}], {"ok": False})
        after = state["total"] + n
        return Decision(
            [{"type": "Added", "by": by, "n": n}],
            [
                {"type": "Announce", "key": "total", "total": after},
                {"type": "Whisper", "to": by, "key": "added", "n": n},
            ],
            {"ok": True},
        )


class SnapshottedCounterGame(CounterGame):
    """The counter game, its state stored as a snapshot after every input."""

    name = "counter+snapshots"

    def __init__(self) -> None:
        self.snapshots = SnapshotCodec[Any](
            version="counter-1",
            dump=lambda state: {
                "total": state["total"],
                "adds": state["adds"],
                "over": state["over"],
            },
            load=lambda blob: {
                "total": blob["total"],
                "adds": [tuple(add) for add in blob["adds"]],
                "over": blob["over"],
            },
            resume=self.resume,
        )


# --- the miniature shell ------------------------------------------------------------------------

START_MESSAGE = 1000
GUILD = 1_180_000_000_000_000_001


async def _start(repo: Repository, scenario: Scenario, world: World) -> int:
    start = scenario.start()
    result = await repo.create_game(
        server_id=GUILD,
        ruleset=scenario.name,
        seed="s",
        commitment="c",
        seats=[SeatSpec(i + 1, name) for i, name in enumerate(scenario.players)],
        events=start.events,
        effects=start.effects,
        message_id=START_MESSAGE,
        outcome=start.outcome,
    )
    await deliver(repo, result.pending, world.perform)
    return result.game_id


async def _handle(
    repo: Repository, scenario: Scenario, world: World, game_id: int, message_id: int, command: Any
) -> None:
    codec = scenario.snapshots
    loaded = await repo.load_game(game_id, scenario.fold, snapshot=codec)
    decision = scenario.decide(loaded.state, command)
    result = await repo.record(
        game_id,
        events=decision.events,
        effects=decision.effects,
        message_id=message_id,
        outcome=decision.outcome,
        expected_seq=loaded.seq,
        finish=decision.finish,
    )
    if codec is not None and not result.duplicate and result.last_seq is not None:
        # as the service does: after the commit, with the next transaction
        state = codec.resume(loaded.state, list(decision.events))
        repo.save_snapshot_soon(game_id, result.last_seq, codec.version, codec.dump(state))
    await deliver(repo, result.pending, world.perform)


async def play(
    url: str, scenario: Scenario, faults: Faults, world: World, *, redeliver: bool
) -> int:
    """Run the whole script, restarting after every crash; returns the game id.

    After a restart, catch-up resumes after the newest recorded message (so effects of
    committed inputs are left to recovery alone) or, with ``redeliver``, also hands in again
    the input in progress and the one before (so recorded inputs arrive twice).
    """
    steps = scenario.steps()
    position = 0
    restarted = False
    while True:
        # Dead until the crashed run's store is disposed of (``die``): it sends nothing more.
        faults.dead = False
        db = open_crashable(url, faults)
        repo = CrashableRepository(db, faults)
        try:
            game_id: int | None = None
            if restarted:
                await recover(repo, scenario.fold, world.perform, snapshot=scenario.snapshots)
                games = await repo.list_games()
                game_id = games[0].id if games and not redeliver else None
            if game_id is None:
                game_id = await _start(repo, scenario, world)
            elif (last := await repo.last_message_id(game_id)) is not None:
                while position < len(steps) and steps[position][0] <= last:
                    position += 1
            while position < len(steps):
                message_id, command = steps[position]
                await _handle(repo, scenario, world, game_id, message_id, command)
                position += 1
            await repo.flush()  # the last done marks, as the bot does when it closes
            return game_id
        except Crash:
            repo.die()
            restarted = True
            if redeliver:
                position = max(position - 1, 0)
        finally:
            await db.dispose()


@dataclass
class Outcome:
    """Everything a crash must not change."""

    state: Any
    seq: int
    replayed: Any
    """The state from every event, without a snapshot."""
    snapshots: int
    """Snapshots stored for the game."""
    events: list[tuple[int, JsonDict, int | None]]
    inputs: list[tuple[int, JsonDict | None, int | None, int | None]]
    applied: list[JsonDict]
    status: str
    undone: int


async def observe(url: str, scenario: Scenario, game_id: int, world: World) -> Outcome:
    """Read the end result back through a fresh, crash-free database handle."""
    db = open_database(url)
    try:
        repo = Repository(db.sessions)
        loaded = await repo.load_game(game_id, scenario.fold, snapshot=scenario.snapshots)
        rows = await repo.event_rows(game_id)
        async with db.sessions() as s:
            inputs = [
                (i.message_id, i.outcome, i.first_seq, i.last_seq)
                for i in await s.scalars(select(Input).order_by(Input.message_id))
            ]
            snapshots = await s.scalar(select(func.count()).select_from(Snapshot)) or 0
        return Outcome(
            state=loaded.state,
            seq=loaded.seq,
            replayed=scenario.fold([row.payload for row in rows]),
            snapshots=snapshots,
            events=[(row.seq, row.payload, row.message_id) for row in rows],
            inputs=inputs,
            applied=list(world.applied),
            status=(await repo.get_game(game_id)).status.value,
            undone=len(await repo.undone_effects(include_stopped=True)),
        )
    finally:
        await db.dispose()


async def wipe(url: str) -> None:
    """Empty every table (between scenarios sharing one test database)."""
    engine = create_engine(url)
    try:
        async with engine.begin() as connection:
            for table in reversed(Base.metadata.sorted_tables):
                await connection.execute(delete(table))
    finally:
        await engine.dispose()
