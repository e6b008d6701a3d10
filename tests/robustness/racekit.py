"""The race kit: fire several state-changing inputs at the bot at once through simcord, and tell
whether what came out is what some sequential order of the same inputs gives.

A *bench* is a fresh bot on a fresh database (SQLite file or PostgreSQL database) with a table of
players, arranged by a deterministic setup. An *outcome* is everything the inputs can change, read
back after the bot has settled: every game's stored events and outbox, every seat's view
(`engine.view.view_for`), the scheduler's jobs, every message in every channel and DM (with its
reactions), the guild's roles and channel overwrites, the HTTP calls that create things, the errors
the bot swallowed, and each input's answers (ephemeral or not). Snowflakes made after the setup
differ between runs for no fault of the bot, so they are renamed by order of first appearance.

simcord refuses overlapping actor operations from different tasks (its operation guard), so the
race launches the *unguarded* actor verbs (`inspect.unwrap`) in tasks of their own; each one emits
its gateway event and then waits, like the guarded verb, for the bot to settle. Interleavings are
varied, from a seeded RNG: which input is launched first; when the others arrive (after
`asyncio.sleep(0)` × k, or once the inputs already in flight have made k awaits of the store or
the HTTP client); and `asyncio.sleep(0)` × k at every await of the store and of the HTTP client.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import enum
import inspect
import json
import os
import random
import re
import shutil
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import rbkit  # noqa: F401  (puts the project and tests/discord on sys.path)
from gamebot import BotEnv, Table, build_table
from rbkit import EnvClock
from simcord import Env, InteractionResult, MemberActor, UserHandle

from bot.config import load
from bot.discord.client import FaguanBot, create_bot
from bot.runtime.deadlines import fire_deadline
from bot.runtime.timing import DeadlineScheduler
from bot.store import open_database, upgrade
from engine.view import view_for

SEED = "race-seed"
RULESET = "v2"
PLAYERS = 8

RUNS = max(1, int(os.environ.get("FAGUAN_RACE_RUNS", "3")))
"""Concurrent runs per race and backend (CI: 3; `FAGUAN_RACE_RUNS=40` for a long hunt)."""
MORE_RUNS = 6
"""Runs added to a race whose inputs all close something while none of its runs has overlapped:
on a loaded machine one input can reach its end before the other starts (seen once, on
PostgreSQL, in a full parallel suite), and the overlap is what such a race is run for."""
MAX_DELAY = 6
"""At most this many `sleep(0)` before an input is launched (few: the inputs must overlap)."""
MAX_JITTER = 3
"""At most this many `sleep(0)` before each await of the store and of Discord's HTTP client."""
MAX_DEPTH = 24
"""An input may wait for the others to reach up to their this-many-th such await."""
IDLE_YIELDS = 200
"""…but no longer than this many yields in a row without one (they may be waiting on it)."""

SNOWFLAKE_MIN = 10**15
_DIGITS = re.compile(r"\d{15,21}")


# -- databases ------------------------------------------------------------------------------------


class Databases:
    """Fresh migrated databases of one backend, each a copy of a template migrated once."""

    def __init__(self, backend: str, tmp: Path, server: Any = None) -> None:
        self.backend = backend
        self.tmp = tmp
        self.server = server
        self._template: str | None = None
        self._made: list[str] = []

    async def new(self) -> str:
        """The URL of a new database at the latest schema."""
        if self.backend == "sqlite":
            template = self.tmp / "template.db"
            if self._template is None:
                await upgrade(f"sqlite+aiosqlite:///{template}")
                self._template = str(template)
            path = self.tmp / f"race-{uuid.uuid4().hex[:8]}.db"
            shutil.copyfile(template, path)
            return f"sqlite+aiosqlite:///{path}"
        if self._template is None:
            name = f"faguan_race_tpl_{uuid.uuid4().hex[:10]}"
            await self.server.create_database(name)
            self._made.append(name)
            await upgrade(self.server.url(name))
            self._template = name
        name = f"faguan_race_{uuid.uuid4().hex[:12]}"
        await self.server.create_database(name, template=self._template)
        self._made.append(name)
        return str(self.server.url(name))

    async def drop(self, url: str) -> None:
        """The database gone (a file stays in the test's temporary folder)."""
        if self.backend != "sqlite":
            name = url.rsplit("/", 1)[1]
            await self.server.drop_database(name)
            self._made.remove(name)

    async def close(self) -> None:
        """Every database this made gone."""
        for name in list(reversed(self._made)):
            await self.server.drop_database(name)
        self._made.clear()


# -- a bench: one bot, one database, one table ------------------------------------------------------


@dataclass
class Bench:
    """A fresh bot on a fresh database, with a table: 8 players, two moderators, one outsider."""

    env: Env
    table: Table
    mod2: MemberActor
    url: str
    database: Any
    answers: dict[str, list[str]] = field(default_factory=dict)
    boundary: int = 0
    """The first snowflake after the setup: ids from here on are renamed in outcomes."""
    overlapped: bool = True
    """Whether every input was launched before any other had been answered, and every closing
    input was taken up by the bot while the window open at the start still was."""
    game_id: int = 0
    notes: dict[str, str] = field(default_factory=dict)
    """What a setup leaves for the inputs (a vote post's id)."""

    @property
    def bot(self) -> FaguanBot:
        bot = self.env.bot
        assert isinstance(bot, FaguanBot)
        return bot

    @property
    def channel(self) -> Any:
        return self.table.channel

    def player(self, seat: int) -> MemberActor:
        return self.table.players[seat - 1]

    def seal_setup(self) -> None:
        """Everything from here on is the race: note where new snowflakes begin."""
        self.boundary = self.env.backend.snowflake()
        self.env.errors  # noqa: B018 (reading acknowledges what the setup left)


def _settings(url: str) -> Any:
    return load(
        {
            "discord": {"token": "race-token", "moderator_role": "主持人"},
            "database": {"url": url},
            "game": {"schedule": {"power": "1h", "vote": "1h"}, "reminder": "off"},
        },
        env={},
    )


@contextlib.asynccontextmanager
async def bench(databases: Databases) -> AsyncIterator[Bench]:
    """A started bot on a new database with the table; everything shut down and dropped after."""
    url = await databases.new()
    database = open_database(url)
    clock = EnvClock()
    bot = create_bot(
        _settings(url),
        clock=clock,
        scheduler=DeadlineScheduler(clock),
        database=database,
        seed_source=lambda: SEED,
    )
    env = BotEnv(bot, check_errors=False)
    clock.bind(env)
    table = build_table(env, PLAYERS)
    mod2 = table.guild.add_member(env.create_user("mod2"), roles=[table.mod_role])
    try:
        await env.start()
        try:
            yield Bench(env=env, table=table, mod2=mod2, url=url, database=database)
        finally:
            await env.shutdown()
    finally:
        await database.dispose()
        await databases.drop(url)


# -- inputs ----------------------------------------------------------------------------------------

Run = Callable[[Bench], Awaitable[Any]]


@dataclass(frozen=True)
class Input:
    """One state-changing input: a label (whose answers it names) and how to make it."""

    label: str
    run: Run
    closes: bool = False
    actor: Callable[[Bench], MemberActor] | None = None
    """Whose interaction it is (None: the deadline job, which the bot enters at once)."""
    """It closes or changes the open window (a lock, a deadline override): it is bound to the
    window open when the bot takes it up, so taken up while another input closes that window it
    must be refused (or be a no-op), never act on the window opened after."""


def _unguarded(method: Any) -> Any:
    return inspect.unwrap(method)


async def slash(b: Bench, who: MemberActor, name: str, **options: Any) -> InteractionResult:
    """A slash command in the game channel (the unguarded verb: it may overlap others)."""
    result: InteractionResult = await _unguarded(MemberActor.slash)(who, b.channel, name, **options)
    return result


async def post(b: Bench, who: MemberActor, content: str) -> Any:
    """A post in the game channel (the vote channel of these games), stamped when it is made and
    delivered as a post made a moment earlier would be: whatever the channel's overwrites say by
    the time it arrives (a lock closing the channel races with it on Discord too)."""
    env = b.env
    message = env.backend.create_message(b.channel.id, who.id, content)
    env._mark_mutation()
    await env._settle_internal(dispatch="MEMBER.send")
    return message


async def click_dm(b: Bench, who: MemberActor, prefix: str) -> InteractionResult:
    """A click on the newest button in `who`'s DMs whose custom id starts with `prefix`."""
    for message in reversed(b.table.dms(who)):
        for row in message.components:
            for child in getattr(row, "children", []):
                custom_id = str(getattr(child, "custom_id", ""))
                if custom_id.startswith(prefix):
                    result: InteractionResult = await _unguarded(UserHandle.click)(
                        who.user, message, custom_id=custom_id
                    )
                    return result
    raise AssertionError(f"{who.name} has no DM with a button {prefix}…")


def deadline_jobs(b: Bench) -> list[Any]:
    """The game's waiting deadline jobs: `bot.app.fire_deadline` for this game."""
    return [
        job
        for job in b.bot.runtime.scheduler.jobs()
        if job.func is fire_deadline and b.game_id in job.args
    ]


async def deadline_job(b: Bench) -> None:
    """The game's deadline job, if one is waiting and due: taken off the scheduler and run, as
    `run_due` does (a job cancelled or moved later does not fire)."""
    now = b.bot.runtime.clock.now()
    due = [job for job in deadline_jobs(b) if job.when <= now]
    if not due:
        return
    job = due[0]
    b.bot.runtime.scheduler.cancel(job.id)
    await job.func(*job.args)


def window_of(b: Bench) -> Any:
    """The game's open window as the bot's service holds it (updated as a commit returns)."""
    state = b.bot.runtime.service.cached_state(b.game_id) if b.game_id else None
    return plain(state.window) if state is not None else None


async def tick(b: Bench) -> None:
    """The clock moves on by a millisecond (the deadline passes): simcord's clock otherwise
    stands still while the inputs race, and a post made after the deadline job started would
    be stamped with the deadline itself, which no post made after it can be on Discord."""
    b.env.backend.advance_clock(0.001)


async def deadline_job_after(b: Bench) -> None:
    """The deadline job as it really runs: a moment after the deadline."""
    await tick(b)
    await deadline_job(b)


def answer_texts(result: Any) -> list[str]:
    """What an input's person was told: the response and follow-ups, marked when private."""
    if not isinstance(result, InteractionResult):
        return []
    out: list[str] = []
    messages = ([result.response] if result.response is not None else []) + list(result.followups)
    for message in messages:
        shown = message.content + "".join(
            f"\n[embed] {e.title or ''} {e.description or ''}" for e in message.embeds
        )
        out.append(("(private) " if message.ephemeral else "(public) ") + shown)
    if result.modal is not None:
        out.append(f"(modal) {result.modal.get('custom_id', '')}")
    return out


# -- firing ----------------------------------------------------------------------------------------


async def run_in_order(b: Bench, inputs: Sequence[Input]) -> None:
    """Each input alone, one after the other, each settled before the next arrives."""
    for item in inputs:
        answer = answer_texts(await item.run(b))
        await b.env.settle()
        if item.label:
            b.answers[item.label] = answer


async def run_at_once(
    b: Bench, inputs: Sequence[Input], rng: random.Random, run: int = 2
) -> list[str]:
    """The inputs launched together, with random yields at every await of the store and of the
    HTTP client; returns the launch order: as listed in run 0, reversed in run 1 (so that each
    input goes first on every backend), random after that. The first is launched at once; each
    other one after a few random yields, or once the inputs already launched have reached their
    k-th await of the store or HTTP client (so that it arrives deep into their work, too)."""
    order = list(range(len(inputs)))
    if run == 1:
        order.reverse()
    elif run > 1:
        rng.shuffle(order)
    waits = {
        i: ("yields", 0)
        if n == 0
        else rng.choice([("yields", rng.randint(0, MAX_DELAY)), ("io", rng.randint(1, MAX_DEPTH))])
        for n, i in enumerate(order)
    }
    tasks: dict[int, asyncio.Task[Any]] = {}
    arrived_late: list[bool] = []
    shaker = Jitter(b.bot, rng)
    opened = window_of(b)
    taken_up: dict[int, Any] = {}
    """The open window when the bot took each closing input up (its command handler began)."""
    actors = {i: inputs[i].actor(b).id for i in order if inputs[i].actor is not None}
    tree = b.bot.tree
    handle = tree._call

    async def call(interaction: Any) -> None:
        for i, user in actors.items():
            if user == interaction.user.id and i not in taken_up:
                taken_up[i] = window_of(b)
        await handle(interaction)

    def others_done(i: int) -> bool:
        return all(t.done() for j, t in tasks.items() if j != i)

    async def launch(i: int) -> Any:
        kind, k = waits[i]
        if kind == "yields":
            for _ in range(k):
                await asyncio.sleep(0)
        else:  # until k awaits, the others are done, or nothing has moved for a while
            seen, still = shaker.awaits, 0
            while shaker.awaits < k and not others_done(i) and still < IDLE_YIELDS:
                await asyncio.sleep(0)
                still = still + 1 if shaker.awaits == seen else 0
                seen = shaker.awaits
        arrived_late.append(any(t.done() for j, t in tasks.items() if j != i))
        if inputs[i].actor is None:
            taken_up[i] = window_of(b)
        return await inputs[i].run(b)

    tree._call = call  # type: ignore[method-assign]
    try:
        with shaker:
            for i in order:
                tasks[i] = asyncio.create_task(launch(i))
            results = await asyncio.gather(*(tasks[i] for i in order), return_exceptions=True)
            await b.env.settle()
    finally:
        del tree._call
    for i, result in zip(order, results, strict=True):
        if isinstance(result, BaseException):
            raise result
        b.answers[inputs[i].label] = answer_texts(result)
    closing = [i for i in order if inputs[i].closes]
    b.overlapped = not any(arrived_late) and all(taken_up.get(i) == opened for i in closing)
    return [f"{inputs[i].label} ({waits[i][0]} {waits[i][1]})" for i in order]


class Jitter:
    """While entered: `sleep(0)` × random k before every await of the bot's store objects and of
    its HTTP client, and a count of those awaits (how deep into their work the inputs are)."""

    def __init__(self, bot: FaguanBot, rng: random.Random) -> None:
        self.bot = bot
        self.rng = rng
        self.awaits = 0
        self._patched: list[tuple[Any, str]] = []

    def _wrap(self, owner: Any, name: str) -> None:
        original = getattr(owner, name)

        async def yielding(*args: Any, **kwargs: Any) -> Any:
            self.awaits += 1
            for _ in range(self.rng.randint(0, MAX_JITTER)):
                await asyncio.sleep(0)
            return await original(*args, **kwargs)

        try:
            setattr(owner, name, yielding)
        except (AttributeError, dataclasses.FrozenInstanceError):
            return  # a frozen value (the Database pair): nothing of the bot's own to wait on
        self._patched.append((owner, name))

    def __enter__(self) -> Jitter:
        for owner in _store_objects(self.bot):
            for name, member in inspect.getmembers(type(owner)):
                if not name.startswith("__") and inspect.iscoroutinefunction(member):
                    self._wrap(owner, name)
        self._wrap(self.bot.http, "request")
        return self

    def __exit__(self, *exc: object) -> None:
        for owner, name in self._patched:
            with contextlib.suppress(AttributeError):
                delattr(owner, name)
        self._patched.clear()


def _store_objects(bot: FaguanBot) -> list[Any]:
    """The objects of `bot.store` the bot and its service hold (the repository, and whatever
    store object another part adds)."""
    found: dict[int, Any] = {}
    for holder in (bot, bot.runtime.service):
        for value in vars(holder).values():
            if type(value).__module__.startswith("bot.store"):
                found[id(value)] = value
    return list(found.values())


# -- outcomes --------------------------------------------------------------------------------------


def plain(value: Any) -> Any:
    """JSON-able data from dataclasses, enums, tuples, sets, mappings."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted((plain(v) for v in value), key=repr)
    return value


async def outcome(b: Bench) -> dict[str, Any]:
    """Everything the race may have changed, with new snowflakes renamed."""
    bot = b.bot
    await bot.runtime.service.flush()
    repo = bot.runtime.service.repo
    games: list[dict[str, Any]] = []
    for info in await repo.list_games():
        state = await bot.runtime.service.state(info.id)
        outbox = await _outbox(b, info.id)
        games.append(
            {
                "id": info.id,
                "status": str(info.status),
                "channels": plain(info.channels),
                "events": await repo.load_events(info.id),
                "views": {
                    "public": plain(view_for(state, None)),
                    **{str(int(s.seat)): plain(view_for(state, s.seat)) for s in state.seats},
                },
                "outbox": outbox,
            }
        )
    guild = b.table.guild
    places: dict[str, Any] = {}
    for name, handle in sorted(guild.channels.items()):
        places[f"#{name}"] = _place(bot, handle.history())
        for thread in handle.threads:
            places[f"#{name}/{thread.name}"] = _place(bot, thread.history())
    for member in [b.table.moderator, b.mod2, *b.table.players, b.table.outside]:
        places[f"@{member.name}"] = _place(bot, b.table.dms(member))
    roles = _roles(b)
    made = [
        f"{e.method} {e.path}"
        for e in b.env.http_requests
        if e.method in ("POST", "PUT") and ("/roles" in e.path or "/threads" in e.path)
    ]
    raw = {
        "answers": {k: b.answers[k] for k in sorted(b.answers)},
        "errors": sorted(f"{type(e).__name__}: {e}" for e in b.env.errors),
        "games": games,
        "scheduler": sorted((j.id, j.when.isoformat()) for j in bot.runtime.scheduler.jobs()),
        "discord": places,
        "roles": roles,
        "overwrites": _overwrites(b),
        "created": sorted(_DIGITS.sub("<id>", m) for m in made),
    }
    return rename(raw, b.boundary)


async def _outbox(b: Bench, game_id: int) -> list[Any]:
    from sqlalchemy import select

    from bot.store.models import Outbox

    async with b.database.sessions() as s:
        rows = (
            await s.scalars(select(Outbox).where(Outbox.game_id == game_id).order_by(Outbox.id))
        ).all()
        return [{"effect": row.payload, "done": row.done_at is not None} for row in rows]


def _place(bot: FaguanBot, messages: list[Any]) -> dict[str, Any]:
    """A channel's messages: the bot's in their order; the people's as a set (where a person's
    post falls among the bot's depends on when they pressed Enter, not on the bot)."""
    me = bot.user.id if bot.user else 0
    people = [_message(m) for m in messages if m.author.id != me]
    return {
        "bot": [_message(m) for m in messages if m.author.id == me],
        "people": sorted(people, key=lambda m: json.dumps(m, ensure_ascii=False, default=str)),
    }


def _message(message: Any) -> dict[str, Any]:
    return {
        "by": message.author.name,
        "content": message.content,
        "embeds": [e.to_dict() for e in message.embeds],
        "reply_to": message.reference.message_id if message.reference else None,
        "reactions": sorted((str(r.emoji), r.count) for r in message.reactions),
        "components": [
            str(getattr(c, "custom_id", ""))
            for row in message.components
            for c in getattr(row, "children", [])
        ],
    }


def _roles(b: Bench) -> list[tuple[str, list[str]]]:
    """The guild's roles (name, members), two of the same name kept apart."""
    guild = b.bot.get_guild(b.table.guild.id)
    assert guild is not None
    return sorted((role.name, sorted(m.name for m in role.members)) for role in guild.roles)


def _overwrites(b: Bench) -> dict[str, Any]:
    guild = b.bot.get_guild(b.table.guild.id)
    assert guild is not None
    out: dict[str, Any] = {}
    for channel in sorted(guild.text_channels, key=lambda c: c.name):
        out[channel.name] = {
            getattr(target, "name", str(target)): sorted(
                (k, v) for k, v in overwrite if v is not None
            )
            for target, overwrite in sorted(
                channel.overwrites.items(), key=lambda kv: getattr(kv[0], "name", "")
            )
        }
    return out


def performed_twice(result: dict[str, Any]) -> list[str]:
    """Effects performed twice, seen without any reference: a bot message repeated in the same
    place (same text, embeds and reply), an outbox item left undone, the same thing created
    twice on Discord."""
    found: list[str] = []
    for place, messages in result["discord"].items():
        seen: set[str] = set()
        for message in messages["bot"]:
            key = json.dumps(
                [message["content"], message["embeds"], message["reply_to"]], ensure_ascii=False
            )
            if key in seen:
                found.append(f"{place}: posted twice: {_short(message['content'])}")
            seen.add(key)
    for game in result["games"]:
        undone = [item["effect"] for item in game["outbox"] if not item["done"]]
        if undone:
            found.append(f"game {game['id']}: effects left undone: {_short(undone)}")
    roles = [name for name, _members in result["roles"] if name.startswith("法官")]
    if len(roles) != len(set(roles)):
        found.append(f"players' roles created twice: {roles}")
    return found


def rename(data: Any, boundary: int) -> Any:
    """`data` with every snowflake made after the setup replaced by `<new k>`, k counting them in
    order of first appearance (so equal outcomes stay equal, different ones different)."""
    names: dict[int, str] = {}

    def label(number: int) -> str:
        return names.setdefault(number, f"<new {len(names) + 1}>")

    def walk(value: Any) -> Any:
        if isinstance(value, bool):
            return value
        if isinstance(value, int):
            return label(value) if value >= boundary and value >= SNOWFLAKE_MIN else value
        if isinstance(value, str):
            return _DIGITS.sub(
                lambda m: label(int(m.group())) if int(m.group()) >= boundary else m.group(),
                value,
            )
        if isinstance(value, dict):
            return {walk(k) if isinstance(k, str) else k: walk(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [walk(v) for v in value]
        return value

    return walk(data)


def diff(mine: Any, theirs: Any, path: str = "", limit: int = 8) -> list[str]:
    """Where two outcomes differ (the first few places, deepest first), for a failure message."""
    out: list[str] = []
    if isinstance(mine, dict) and isinstance(theirs, dict):
        for key in list(dict.fromkeys([*mine, *theirs])):
            if key not in mine or key not in theirs:
                out.append(
                    f"{path}/{key}: only in {'the race' if key in mine else 'the reference'}"
                )
            else:
                out += diff(mine[key], theirs[key], f"{path}/{key}", limit)
            if len(out) >= limit:
                break
        return out[:limit]
    if isinstance(mine, list) and isinstance(theirs, list):
        if len(mine) != len(theirs):
            out.append(f"{path}: {len(mine)} items in the race, {len(theirs)} in the reference")
        for i, (a, c) in enumerate(zip(mine, theirs, strict=False)):
            out += diff(a, c, f"{path}[{i}]", limit)
            if len(out) >= limit:
                break
        if len(mine) != len(theirs) and len(out) < limit:
            n = min(len(mine), len(theirs))
            extra = mine[n:] if len(mine) > n else theirs[n:]
            side = "the race" if len(mine) > n else "the reference"
            out.append(f"{path}[{n}:] only in {side}: {_short(extra)}")
        return out[:limit]
    if mine != theirs:
        return [f"{path}: race {_short(mine)} ≠ reference {_short(theirs)}"]
    return []


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) < 240 else text[:240] + "…"
