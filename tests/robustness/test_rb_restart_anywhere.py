"""Restart anywhere: a restart of the bot at any step of a game changes nothing anyone sees.

The bot promises to survive restarts (README, "Reliability"): a restart resumes exactly where
the game was, every accepted input is recorded before its effects are sent, effects are sent at
least once and applied at most once. This is the differential check of that promise on the real
bot (simcord, the bot's timers on its virtual clock):

- the reference: a scripted game of a ruleset, played by the non-interference kit's planner
  (`test_rb_noninterference.Planner`: votes posted and by /vote, abstentions, night powers,
  last words, the victim's choice, observers' commands, maybe a player's DMs closed) with a
  fixed plan on top (an extend, a pause across ten minutes, a tied first day for a run-off — and
  with `tie:victim_choice` a tied run-off for the victim's choice —, `/mod replace` by an
  outsider, a modkill, a void of the last vote post, a penalty, an advance), the bot reminding
  players 30 minutes before each deadline; every lock runs the scheduler's jobs in time order
  (the reminders at their own times, then the deadline), and what everyone sees is kept after
  every step;
- the same script played again on a fresh world (the same seed: the same deal), the bot
  restarted right after step k for several k spread over the game — the first step of each kind
  (the sign-up, a join, the start, a night power, a vote post, /vote, a lock, last words, the
  victim's choice, every moderator command) and of each state (during last words, a run-off, a
  victim's choice, while paused), and a later vote post, power and lock —, and at the first and
  the last deadline between the clock reaching it and its lock (the bot down when the deadline
  passes: the new bot finds it passed and locks as it starts). Each restart is a new bot
  (`make_bot`) on the same database (`Env.restart_bot`, as `tests/discord/test_e2e_longgame.py`
  restarts): a SQLite file, or for the PostgreSQL games (the store writes there in code of its
  own: `bot/store/pg_group.py`) a database of the run's own on the tests' server (`pg_server`,
  `tests/pgserver.py`), each run on a fresh one.

After every step (and right after each restart) what changed since the step before must be the
same in both runs, up to ids (`nikit.delta`, `nikit.first_difference`): every channel and thread
of the server (every message, embed, component, reaction, ping, pin, edit mark, thread member,
archived/locked state, permission overwrite), the server's roles and who holds them, every DM
channel (the players', the moderator's, the spectator's), and the answer each person gets to
each command (/act, /pass, /lastwords, /vote, /game status, /role, /mod …, autocomplete). This
compares more than any one observer sees (the bot's view of the whole world): overwrites and
roles equal make every observer's access equal. A difference is reported once, at the step that
made it, naming the step, the restarts before it and the place (channel, DM, members, answer).

Restarts come in two kinds:

- `graceful`: the old bot is closed (`FaguanBot.close`: what `faguan run` does on SIGTERM or
  Ctrl-C: the timers stop, deliveries under way finish, the last done marks are written), then
  a new bot starts on the same file;
- `crash`: the process dies without closing, after performing step k's effects but before writing
  one done mark of them (the marks dropped, as `tests/discord/test_faults.py` drops them). The new
  bot performs them again at start, and must find what was already sent. simcord cannot kill a
  process mid-call without hacks: `Env.restart_bot` first lets the old bot's work settle, then
  cancels what is left and detaches it, without calling its `close()`; its database connections
  are then closed as the death would close them (gamebot's `BotEnv`). So a death in the middle
  of a Discord call or of a commit is not played here; the store's crash tests cover those
  (`tests/store/test_store_crash.py`, `tests/discord/test_lobby_races.py`).

How fast the machine is must not show: a slow command is not deferred at 1.5 s of wall time,
which simcord would turn into 1.5 s of virtual time (`no_deferral_for_slowness`), and a new bot
may take as long to settle as any step (`patient_restarts`).

The bot posts nothing of its own on a restart. One difference is deliberate, and left out exactly
(`without_resent_confirmations`): after a crash, a power's (or a pass's, or a victim's pick's)
confirmation, which the slash command's answer carried, is sent again by DM
(`bot/discord/answering.py`). For the same reason the player whose DMs a crash game closes holds
no power at the deal (`Script.powerless_block`).

Default: six games on SQLite and two of them again on PostgreSQL (`POSTGRESQL_GAMES`): 32 s with
`-n 2` on two cores, of which the PostgreSQL games take 11-13 s of test time (their server's start
included); twice as long with the machine busy. FAGUAN_RESTART_GAMES=all plays every ruleset,
hosted in a text channel and in a forum, with restarts of both kinds, on each backend (76 games
each: about 6 minutes on SQLite, 6 to 10 on PostgreSQL; `-k postgresql` for one backend);
FAGUAN_RESTART_EVERY=1 restarts after every step of the script and at every deadline instead
(about 2.5 times as long: all SQLite games, 14 minutes).
"""

from __future__ import annotations

import functools
import os
import random
import re
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from nikit import (
    LAST_VOTE_POST,
    Play,
    Someone,
    Step,
    answer_item,
    channel_items,
    delta,
    first_difference,
    quick_settle,
    roles_and_holders,
    server,
)
from rbkit import LOCALES, EnvClock

# isort: split
from gamebot import SETTLE_SECONDS, BotEnv, make_bot
from pgserver import PgServer
from simcord import Env
from test_rb_noninterference import Planner, World, build, size

from bot.discord import interactions
from bot.discord.client import FaguanBot
from bot.records.i18n import catalog
from engine.model import PhaseKind
from engine.rulesets import RULESETS, rules_for
from engine.state import GameState
from engine.view import view_for

SEED = "restart-anywhere-5e3d"
PHASES = 6
GAME = {"reminder": "30m"}
"""The bot reminds players 30 minutes before each deadline: the reminder jobs cross restarts too."""

DEFAULT_GAMES = [
    ("v2", "text", "graceful"),
    ("v2", "forum", "crash"),
    ("v3m", "text", "crash"),
    ("v5", "forum", "graceful"),
    ("tianxia", "text", "graceful"),
    ("wujiandao", "text", "crash"),
]
"""A representative few: 2.0 (police team, killers' thread), 3.0M (秘匪: accomplices), 5.0 (two
cards a player, hosted in a forum: a 投票帖 a day), 天下无贼 (untargeted powers, counters) and
无间道 (public identities); each played with restarts of one kind, hosted one way."""

VICTIMS_CHOOSE = {"v2"}
"""Games played with `tie:victim_choice` (the others: `revote`)."""
TIES = {"v2", "v3m", "tianxia"}
"""Of the chosen games, those whose first day's vote the script ties (not 5.0's: a player's
vote weighs as many cards as they hold; not 无间道's: each faction votes apart)."""

POSTGRESQL_GAMES = [
    ("wujiandao", "text", "crash"),
    ("v5", "forum", "graceful"),
]
"""The default games also played on PostgreSQL (the store's code paths of its own), each the
script of its SQLite game: one of each hosting and kind, of two rulesets, the quickest such pair
(a game takes up to half as long again there; 3.0M's run-off would cost 3 s more)."""

_ALL = os.environ.get("FAGUAN_RESTART_GAMES", "") == "all"
_EVERY_GAME = [
    (r, h, m) for r in sorted(RULESETS) for h in ("text", "forum") for m in ("graceful", "crash")
]
GAMES = [
    (*game, backend)
    for backend, games in (
        ("sqlite", _EVERY_GAME if _ALL else DEFAULT_GAMES),
        ("postgresql", _EVERY_GAME if _ALL else POSTGRESQL_GAMES),
    )
    for game in games
]
EVERY = bool(os.environ.get("FAGUAN_RESTART_EVERY"))


# -- what everyone sees --------------------------------------------------------------------------


def everything(play: Play) -> dict[str, Any]:
    """The whole world as its people see it: every channel and thread of the server (by name:
    messages, overwrites, thread members and states), the roles and who holds them, every DM
    channel's messages."""
    env = play.env
    backend = env.backend
    seen: dict[str, Any] = {}
    for key, item in server(env, play.guild_id, play.names).values():
        while key in seen:  # two channels of one name: in creation order
            key += "'"
        seen[key] = item
    seen.update(roles_and_holders(env, play.guild_id, play.names))
    people = {"moderator": play.moderator, "spectator": play.spectator, **play.members}
    for name, member in people.items():
        dm = backend.dm_channels.get(member.id)
        if dm is not None:
            # a DM channel's "items" slot as `delta` reads a channel's: (head..., messages)
            seen[f"channel:DM {name}"] = ((), channel_items(env, play.names, dm))
    return seen


class RestartPlay(Play):
    """`Play` that also keeps the answers to powers and last words (the kit drops them)."""

    async def do(self, step: Step, answers: dict[str, list[Any]]) -> None:
        if step.kind == "power":
            args = dict(step.args)
            state = await self.state()
            member = self.holder(state, step.seat)
            card = {"card": step.seat} if args.pop("cards", 1) > 1 else {}
            name = "pass" if args.pop("passed", False) else "act"
            result = await member.slash(self.channel, name, **args, **card)
            who = next(k for k, m in self.members.items() if m.id == member.id)
            answers.setdefault(who, []).append((name, answer_item(self.names, result)))
        elif step.kind == "lastwords":
            member = self.member(step.who)
            shown = await member.slash(self.channel, "lastwords")
            got = [answer_item(self.names, shown)]
            if shown.modal is not None:
                sent = await member.submit_modal(shown, {"words": dict(step.args)["words"]})
                got.append(answer_item(self.names, sent))
            answers.setdefault(step.who, []).append(("lastwords", tuple(got)))
        elif step.kind == "lock":
            await self.until_deadline()
            await self.bot.runtime.scheduler.run_due()
            await self.env.settle()
        else:
            await super().do(step, answers)

    async def until_deadline(self) -> None:
        """The clock moved to the next deadline, each job before it (a reminder) run at its own
        time on the way (the kit's lock jumps there and runs them all at the deadline)."""
        scheduler = self.bot.runtime.scheduler
        while True:
            jobs = sorted(scheduler.jobs(), key=lambda j: j.when)
            deadlines = [j for j in jobs if j.id.endswith(":deadline")]
            assert deadlines, "no deadline scheduled"
            job = jobs[0]
            now = self.env.now()
            if job.when > now:
                await self.env.advance_time((job.when - now).total_seconds())
            if job is deadlines[0]:
                return
            await scheduler.run_due()
            await self.env.settle()


# -- the script ----------------------------------------------------------------------------------


@dataclass
class Scripted:
    step: Step
    seen: dict[str, Any]
    answers: dict[str, list[Any]]
    tags: frozenset[str]
    """What this step is, or what state it left the game in (where a restart is worth trying)."""


@dataclass
class Script(Planner):
    """The non-interference planner, with every step observed whole and tagged, and a fixed plan
    of moderator steps (pause, extend, a tie on the first day, replace, modkill, void, penalty)."""

    tie_policy: str = "revote"
    """The game's `tie` (`/game new tie:`): a tie opens a run-off."""
    powerless_block: bool = False
    """The player whose DMs are closed holds no power at the deal. For crash restarts: there a
    power's confirmation is sent again by DM (`without_resent_confirmations`), and to closed DMs
    it fails, which the moderators and the player are told (once a game) at that restart, not
    at the first DM that fails later — the same deliberate resend, seen a second way."""
    steps: list[Scripted] = field(default_factory=list)

    async def step(self, step: Step) -> None:
        answers: dict[str, list[Any]] = {}
        await self.play.do(step, answers)
        if not self.play.game_id:
            self.play.game_id = self.play.bot.runtime.routes.channel_games.get(
                self.play.channel.id, 0
            )
        state = await self.play.state() if self.play.game_id else None
        self.steps.append(Scripted(step, everything(self.play), answers, tags(step, state)))

    async def setup(self, language: str, deals: list[Any]) -> None:
        new = {
            "command": "game new",
            "ruleset": self.ruleset,
            "language": language,
            "tie": self.tie_policy,
        }
        await self.step(Step("slash", "moderator", args=tuple(new.items())))
        for name in self.order[: self.n]:
            await self.step(Step("slash", name, args=(("command", "game join"),)))
        await self.step(Step("slash", "moderator", args=(("command", "game start"),)))
        assert self.play.game_id, "the game did not start"
        state = await self.play.state()
        seated = self.seated(state)
        self.pair = (0, 0)  # no swapped seats here
        self.subs = [name for name in self.order if name not in seated]
        self.powers = ["check", "kill"]
        if self.rnd.random() < 0.5:  # a player's DMs closed: deliveries to them keep failing
            pool = seated
            if self.powerless_block:
                powers = {
                    self.name_of(int(s.player))
                    for s in state.seats
                    if view_for(state, s.seat).powers
                }
                pool = [name for name in seated if name not in powers] or seated
            await self.step(Step("block", self.rnd.choice(pool)))

    async def tie(self, state: GameState) -> bool:
        """The first day's vote split evenly between two seats (a run-off follows: the game's
        `tie` is `revote` or `victim_choice`), and with `victim_choice` its run-off too (the
        victim's choice follows). False if this window is not one of those."""
        window = state.window
        if (
            window is None
            or window.number != 1
            or window.chooser is not None
            or rules_groups(state)
        ):
            return False
        if window.revote > (self.tie_policy == "victim_choice"):
            return False
        a, b = window.candidates or tuple(state.alive())[:2]
        voters = [s for s in state.alive() if s not in (a, b) and s not in window.barred_voters]
        names = list(dict.fromkeys(self.name_of(int(state.seat(s).player)) for s in voters))
        for i, who in enumerate(names[: len(names) // 2 * 2]):
            target = a if i % 2 == 0 else b
            await self.step(Step("post", who, args=(("text", f"投 {int(target)}号"),)))
        return True

    async def run(self) -> None:
        plan = {0: "extend", 1: "pause", 2: "replace", 3: "modkill", 4: "void", 5: "penalty"}
        for phase in range(PHASES):
            state = await self.play.state()
            if state.over:
                return
            await self.observe(state)
            await self.last_words(state, ["我是好人", "last words"])
            if plan.get(phase) == "pause":
                await self.step(Step("slash", "moderator", args=(("command", "mod pause"),)))
                await self.observe(await self.play.state())
                await self.step(Step("wait", args=(("seconds", 600),)))
                await self.step(Step("slash", "moderator", args=(("command", "mod resume"),)))
            elif plan.get(phase) == "extend":
                extend = (("command", "mod extend"), ("minutes", 20))
                await self.step(Step("slash", "moderator", args=extend))
            state = await self.play.state()
            if state.over:
                return
            assert state.window is not None
            if state.window.kind is PhaseKind.NIGHT:
                await self.night(state)
            elif not await self.tie(state):
                await self.day(state)
            state = await self.play.state()
            if state.over:
                return
            await self.moderate_as_planned(plan.get(phase), state)
            if (await self.play.state()).over:
                return
            if phase == 2:
                await self.step(Step("slash", "moderator", args=(("command", "mod advance"),)))
            else:
                await self.step(Step("lock"))
                await self.step(Step("wait", args=(("seconds", 60),)))

    async def moderate_as_planned(self, kind: str | None, state: GameState) -> None:
        alive = [int(s) for s in state.alive()]
        args: tuple[tuple[str, Any], ...]
        if kind == "replace" and self.subs:
            sub = Someone(self.subs.pop(0))
            args = (("command", "mod replace"), ("seat", alive[-1]), ("member", sub))
        elif kind == "modkill" and len(alive) > 5:
            args = (("command", "mod modkill"), ("seat", alive[-1]))
        elif kind == "void":
            args = (("command", "mod void"), ("message_id", LAST_VOTE_POST), ("reason", "代投"))
        elif kind == "penalty":
            args = (("command", "mod penalty"), ("seat", alive[0]), ("reason", "诈尸"))
        else:
            return
        await self.step(Step("slash", "moderator", args=args))


def rules_groups(state: GameState) -> Any:
    """The ruleset's vote groups this day (rulesets where not everyone votes on everyone)."""
    return [g for g in rules_for(state).vote_groups(state) if g.candidates]


def tags(step: Step, state: GameState | None) -> frozenset[str]:
    """What the step was and the state it left: the places a restart is tried."""
    out: set[str] = set()
    command = dict(step.args).get("command", "")
    if step.kind == "power":
        out.add("after a night power")
    elif step.kind == "post" and step.who != "spectator":
        out.add("after a vote post")
    elif step.kind == "lock":
        out.add("after a deadline lock")
    elif step.kind == "lastwords":
        out.add("after last words")
    elif command in ("vote", "choose") or command.startswith("mod ") or command.startswith("game "):
        out.add(f"after /{command}")
    if state is not None and not state.over:
        if state.paused_remaining is not None:
            out.add("while paused")
        if state.last_words_open:
            out.add("during last words")
        window = state.window
        if window is not None and window.kind is PhaseKind.DAY and window.revote:
            out.add("during a run-off")
        if window is not None and window.chooser is not None:
            out.add("during a victim's choice")
    return frozenset(out)


COMMON = ("after a vote post", "after a night power", "after a deadline lock")


def restart_points(script: list[Scripted]) -> list[int]:
    """After which steps to restart: every step (FAGUAN_RESTART_EVERY), or the first step of each
    tag and a second one of the commonest (votes, powers, locks), spread over the game."""
    if EVERY:
        return list(range(len(script) - 1))
    chosen: set[int] = set()
    seen: dict[str, list[int]] = {}
    for i, rec in enumerate(script[:-1]):
        for tag in rec.tags:
            seen.setdefault(tag, []).append(i)
    for tag, where in seen.items():
        if tag in ("after /mod pending", "after /game status"):
            continue  # a question: it records nothing
        chosen.add(where[0])
        if tag in COMMON and len(where) > 2:
            chosen.add(where[len(where) * 2 // 3])  # and one later in the game
    return sorted(chosen)


# -- the two runs ----------------------------------------------------------------------------------


@dataclass
class Databases:
    """The fresh, empty databases of a test's runs: SQLite files, or PostgreSQL databases of
    their own on the tests' server (`pg_server`, started only if asked for), dropped after."""

    backend: str
    folder: Path
    request: pytest.FixtureRequest
    made: list[str] = field(default_factory=list)

    def server(self) -> PgServer:
        server: PgServer = self.request.getfixturevalue("pg_server")
        return server

    async def new(self, name: str) -> Path | str:
        """A new database: a file's path, or a PostgreSQL URL (what `make_bot` takes)."""
        if self.backend == "sqlite":
            return self.folder / f"{name}.db"
        server = self.server()
        database = f"faguan_restart_{name}_{uuid.uuid4().hex[:10]}"
        await server.create_database(database)
        self.made.append(database)
        return server.url(database)

    async def drop(self) -> None:
        """Every PostgreSQL database made gone (a file goes with the test's folder)."""
        for database in self.made:
            await self.server().drop_database(database)


@pytest_asyncio.fixture
async def databases(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[Databases]:
    made = Databases(backend, tmp_path, request)
    try:
        yield made
    finally:
        await made.drop()


@dataclass
class Run:
    """One simcord world and the bot on it (a new bot at each restart, on the same database)."""

    env: Env
    clock: EnvClock
    db: Path | str
    world: World

    @classmethod
    async def start(cls, db: Path | str, n: int, hosting: str) -> Run:
        clock = EnvClock()
        env = BotEnv(make_bot(db, clock, seed=SEED, **GAME), settle_timeout=SETTLE_SECONDS)
        quick_settle(env)
        patient_restarts(env)
        clock.bind(env)
        world = build(env, n, hosting)
        world.play = RestartPlay(
            env=env,
            guild_id=world.play.guild_id,
            channel=world.play.channel,
            moderator=world.play.moderator,
            members=world.play.members,
            spectator=world.play.spectator,
            forum=world.play.forum,
        )
        await env.start()
        return cls(env=env, clock=clock, db=db, world=world)

    async def restart(self, kind: str) -> None:
        old = self.env.bot
        assert isinstance(old, FaguanBot)
        if kind == "graceful":
            await old.close()
        new = make_bot(self.db, self.clock, seed=SEED, **GAME)
        await self.env.restart_bot(new)  # a crashed bot's connections closed (`BotEnv`)
        await self.env.settle()

    def lose_marks(self) -> None:
        """The process dies before writing any done mark from here on (until the restart)."""
        repo = self.world.play.bot.runtime.service.repo
        repo.mark_done_soon = lambda outbox_id: None  # type: ignore[method-assign]

    async def stop(self) -> None:
        await self.env.shutdown()


def patient_restarts(env: Env) -> None:
    """A new bot settles within `SETTLE_SECONDS` as every step does, not simcord's fixed 5 s
    (`_attach_bot`). On a starved machine (two workers and their PostgreSQL servers on one
    core) a crash restart's recovery and catch-up, 0.1-0.4 s otherwise, outlasted those 5 s:
    the game failed on the machine's speed, not on anything anyone saw."""
    settle = env._settle_internal

    def settling(*, timeout: float | None = None, **options: Any) -> Any:
        return settle(timeout=max(timeout or 0.0, env.settle_timeout), **options)

    env._settle_internal = settling  # type: ignore[method-assign]


@pytest.fixture
def no_deferral_for_slowness(monkeypatch: pytest.MonkeyPatch) -> None:
    """A command's answer is deferred after `SETTLE_SECONDS` of wall time, not 1.5 s
    (`interactions.DEFER_AFTER`): simcord fires a timer that the bot's wait outlives in real
    time by moving its virtual clock to it, so on a starved machine one slow command moved every
    later instant of the run by 1.5 s (a paused day's "59 min left" read 58). Deferring is
    `tests/discord/test_slow_answers.py`'s to test."""
    monkeypatch.setattr(interactions, "DEFER_AFTER", SETTLE_SECONDS)


CONFIRMATION_TEXTS = (
    "power.accepted",
    "power.passed",
    "power.used",
    "choice_msg.accepted",
    "lastact.passed",
)
"""The catalog texts of a player's confirmation (`bot.discord.answering.CONFIRMATIONS`, as
`bot.records.render` words them)."""


@functools.cache
def confirmation() -> re.Pattern[str]:
    """A confirmation's text in any language, whatever its power and seat."""
    texts = [catalog(locale)[key] for locale in LOCALES for key in CONFIRMATION_TEXTS]
    parts = [
        "".join(re.escape(p) if i % 2 == 0 else ".+" for i, p in enumerate(PLACEHOLDER.split(t)))
        for t in texts
    ]
    return re.compile("|".join(f"(?:{p})" for p in parts))


PLACEHOLDER = re.compile(r"\{[^{}]*\}")


def without_resent_confirmations(
    changes: dict[str, Any], step: Step, answers: dict[str, list[Any]]
) -> dict[str, Any]:
    """`changes` less the one deliberate difference of a crash: the confirmation of a power, a
    pass or a victim's choice made by a slash command is carried by the command's answer and
    not sent by DM; performed again after a crash before its done mark was written, it goes by
    DM (`bot/discord/answering.py`: "a confirmation performed later (a retry, recovery after a
    crash) goes by DM as before" — at least once: the answer may never have reached the player).
    So exactly this is left out: after a power or a choice, in the DM of the member who made it,
    new messages that are a confirmation's text."""
    if step.kind != "power" and dict(step.args).get("command") != "choose":
        return changes
    out = dict(changes)
    for who in answers:
        key = f"channel:DM {who}"
        change = out.get(key)
        if not isinstance(change, dict) or change["head"] or change["changed"]:
            continue
        new = tuple(item for item in change["new"] if not confirmation().fullmatch(item[2]))
        if new:
            out[key] = {**change, "new": new}
        else:
            del out[key]
    return out


@dataclass
class Differences:
    found: list[str] = field(default_factory=list)
    kinds: set[str] = field(default_factory=set)
    compared: int = 0

    def add(self, kind: str, text: str) -> None:
        if kind not in self.kinds:
            self.kinds.add(kind)
            self.found.append(text)


def place_of(found: str) -> str:
    """The channel, DM or answer a difference is in (its path's first part)."""
    return re.split(r"/|: only in|:\n", found.lstrip("/"), maxsplit=1)[0]


async def replay(
    run: Run,
    script: list[Scripted],
    points: list[int],
    at_deadline: list[int],
    kind: str,
    out: Differences,
) -> None:
    """Play the script again, restarting after each step of `points` and, at each lock of
    `at_deadline`, between the clock reaching the deadline and the lock (the new bot finds the
    deadline passed and locks as it starts; the step's own lock then finds nothing due). Every
    step and every restart is compared with the reference."""
    play = run.world.play
    before_ref: dict[str, Any] | None = None
    before: dict[str, Any] | None = None
    restarts: list[int] = []
    for i, rec in enumerate(script):
        answers: dict[str, list[Any]] = {}
        if kind == "crash" and i in points:
            run.lose_marks()
        if i in at_deadline:  # down when the deadline passes: the new bot locks as it starts
            assert isinstance(play, RestartPlay) and rec.step.kind == "lock"
            await play.until_deadline()
            window = (await play.state()).window_index
            await run.restart(kind)
            restarts.append(i)
            locked = await play.state()
            assert locked.window_index > window or locked.over, "no lock at the restart"
            await play.bot.runtime.scheduler.run_due()  # the step's lock: nothing left due
            await run.env.settle()
        else:
            await play.do(rec.step, answers)
        if not play.game_id:
            play.game_id = play.bot.runtime.routes.channel_games.get(play.channel.id, 0)
        seen = everything(play)
        found = first_difference(delta(before_ref, rec.seen), delta(before, seen))
        found = found or first_difference({"answers": rec.answers}, {"answers": answers})
        out.compared += 1
        if found:
            after = f" (restarted after steps {restarts})" if restarts else ""
            out.add(
                f"{place_of(found)} at {rec.step.kind}",
                f"step {i} ({rec.step}){after}: {found}",
            )
        before_ref, before = rec.seen, seen
        if i in points:
            await run.restart(kind)
            restarts.append(i)
            seen = everything(play)
            changes = delta(before, seen)
            if kind == "crash":
                changes = without_resent_confirmations(changes, rec.step, rec.answers)
            found = first_difference({}, changes)
            if found:
                out.add(
                    f"{place_of(found)} at a restart",
                    f"the {kind} restart after step {i} ({rec.step}, {sorted(rec.tags)}): "
                    f"the restart itself shows {found}",
                )
            before = seen
    assert not list(run.env.errors), run.env.errors


@pytest.mark.parametrize(("ruleset", "hosting", "kind", "backend"), GAMES)
@pytest.mark.usefixtures("no_deferral_for_slowness")
async def test_a_restart_at_any_step_changes_nothing_anyone_sees(
    ruleset: str, hosting: str, kind: str, backend: str, databases: Databases
) -> None:
    rnd = random.Random(f"{SEED}-{ruleset}-{hosting}")
    n = size(ruleset)
    language = rnd.choice(["zh-CN", "en"])
    run = await Run.start(await databases.new("reference"), n, hosting)
    try:
        script = Script(run.world.play, run.world.order, ruleset, n, rnd)
        script.tie_policy = "victim_choice" if ruleset in VICTIMS_CHOOSE else "revote"
        script.powerless_block = kind == "crash"
        await script.setup(language, [])
        await script.run()
        assert not list(run.env.errors), run.env.errors
    finally:
        await run.stop()
    steps = script.steps
    points = restart_points(steps)
    locks = [i for i, rec in enumerate(steps) if rec.step.kind == "lock"]
    deadlines = locks if EVERY else sorted({locks[0], locks[-1]})
    out = Differences()
    run = await Run.start(await databases.new("restarted"), n, hosting)
    try:
        await replay(run, steps, points, deadlines, kind, out)
    finally:
        await run.stop()
    covered = sorted({t for i in points for t in steps[i].tags})
    print(
        f"{ruleset} ({hosting}, {kind}, {backend}): {len(steps)} steps, {len(points)} restarts "
        f"(after {points}; at the deadline of {deadlines}): {covered}"
    )
    if out.found:
        pytest.fail(
            f"{ruleset} ({hosting}, {backend}): a {kind} restart changed what people see:\n  "
            + "\n  ".join(out.found)
        )
    assert points and out.compared == len(steps)
    if (ruleset, hosting, kind) in DEFAULT_GAMES:  # the chosen games go the whole way
        places = [
            "after a vote post",
            "after a deadline lock",
            "while paused",
            "after /mod replace",
        ]
        if ruleset in TIES:
            places.append("during a run-off")
        if ruleset in VICTIMS_CHOOSE:
            places.append("during a victim's choice")
        for place in places:
            assert place in covered, (place, covered)


def test_a_restart_difference_is_named_by_step_and_place() -> None:
    """The checker itself: one message more after a restart is found, at that restart, in that
    channel."""
    post = ("user:TestBot", 0, "看表", "[]", "[]", (), None, False, False, (), (), (), False)
    before = {"channel:game": (0, (), (), (post,))}
    after = {"channel:game": (0, (), (), (post, post))}
    found = first_difference({}, delta(before, after))
    assert found is not None and place_of(found) == "channel:game"


def test_only_a_resent_confirmation_is_left_out() -> None:
    """The one excused difference is exactly that: after a power, a confirmation in the DM of who
    made it; not another DM text, not another person's DM, not after another step."""

    def dm(text: str) -> Any:
        return ("user:TestBot", 0, text, "[]", "[]", (), None, False, False, (), (), (), False)

    confirmed = dm("已收到：杀人 → 4号 管理玩家。截止前可重新提交，以最后一次为准。")
    checked = dm("Check (验人) result: #5 玩家5 is **good**.")
    power = Step("power", seat=1, args=(("power", "kill"), ("target", 4)))
    answers: dict[str, list[Any]] = {"玩家1": [("act", ("answer", True, False))]}

    def change(*items: Any) -> dict[str, Any]:
        return {"head": None, "new": items, "changed": []}

    assert (
        without_resent_confirmations({"channel:DM 玩家1": change(confirmed)}, power, answers) == {}
    )
    kept = {"channel:DM 玩家1": change(checked)}
    assert without_resent_confirmations(kept, power, answers) == kept
    other = {"channel:DM 玩家2": change(confirmed)}
    assert without_resent_confirmations(other, power, answers) == other
    vote = Step("post", "玩家1", args=(("text", "投 4号"),))
    mine = {"channel:DM 玩家1": change(confirmed)}
    assert without_resent_confirmations(mine, vote, answers) == mine
