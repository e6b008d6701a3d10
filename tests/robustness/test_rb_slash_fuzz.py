"""Every slash command with hostile option values, on simcord, by moderators, players, a dead player
and a stranger, across the phases of a game (a seeded random walk, a few hundred interactions).

Values have the right type (discord.py and simcord refuse the wrong ones themselves) but hostile
content: huge and negative ints, seat 0 and 99, unknown game ids, empty and long strings, unknown
rulesets and powers, deadlines like 25:99, emoji, mentions, digits that are not ASCII. Every
interaction must be answered (ephemerally, except the few public commands), the bot must raise
nothing (`env.errors` stays empty), and a refused command changes neither a game nor a sign-up.

Then the permission rules: only a moderator can override; the actor of /act, /pass, /vote and
/role is always the person invoking (no option names another player)."""

from __future__ import annotations

import dataclasses
import logging
import random
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from rbkit import EnvClock  # first: it puts tests/discord on sys.path

# isort: split
from gamebot import SETTLE_SECONDS, BotEnv, Driver, Table, build_table, make_bot
from simcord import ChannelHandle, Env, InteractionResult, MemberActor, OptionError

from bot.discord.cogs.play import describe_view
from bot.records.i18n import render
from engine.rulesets import RULESETS
from engine.state import GameState

SEED = "slash-fuzz"
ACCEPTED = {render("zh-CN", "notice.accepted"), render("en", "notice.accepted")}
MODS_ONLY = {render("zh-CN", "notice.moderators_only"), render("en", "notice.moderators_only")}
NOT_PLAYER = {render("zh-CN", "actor.not_player"), render("en", "actor.not_player")}
TRY_AGAIN = {render("zh-CN", "notice.try_again"), render("en", "notice.try_again")}
"""The answer to an unexpected failure: never right here, where nothing is failing."""
PUBLIC = {"game new", "game join", "game leave", "game start", "game record"}
"""Commands whose success is a public post (their refusals are still ephemeral)."""

INTS = [0, -1, 1, 2, 3, 5, 8, 9, 12, 16, 17, 99, 2**31, 2**53 - 1, -(2**53 - 1)]
STRINGS = [
    "", " ", "x" * 1000, "投" * 300, "🔪🔪🔪", "@everyone", "@here", "<@1>", "<@&1>", "<#1>",
    "25:99", "24:00", "2026-01-01 25:99", "9999-12-31 23:59", "0001-01-01 00:00",
    "2026-01-01 12:00", "2025-12-31 23:59", "²", "١٢", "５", "0", "-1", "99", "9" * 40,
    "abstain", "弃权", "kill", "KILL", "check", "save", "confess", "veto", "shoot", "pass",
    "v2", "mifei", "nope", "99999999999d", "0m", "1h", "30d", "12:00", "\u200b", "**b**",
    "'; DROP TABLE games;--", "{seat}", "%s", "\n\n", "zh-CN", "en", "fr", "\x00",
]  # fmt: skip


def answer(result: InteractionResult) -> str:
    """The text of the bot's answer (the original response, or the last followup)."""
    message = result.response
    if message is None and result.followups:
        message = result.followups[-1]
    return message.content if message is not None else ""


@dataclass
class Fuzz:
    """The world under fuzzing, and what happened."""

    t: Table
    d: Driver
    lobby: ChannelHandle
    rnd: random.Random
    caplog: pytest.LogCaptureFixture
    seen: Counter[str] = field(default_factory=Counter)

    def no_errors(self, *what: object) -> None:
        """Nothing went wrong inside the bot: no swallowed exception, no ERROR log line."""
        assert not list(self.env.errors), what
        bad = [r for r in self.caplog.records if r.levelno >= logging.ERROR]
        assert not bad, (*what, [r.getMessage() for r in bad])

    @property
    def env(self) -> Env:
        return self.t.env

    async def states(self) -> dict[int, GameState]:
        bot = self.t.bot
        return {
            gid: await bot.runtime.service.state(gid)
            for gid in sorted(set(bot.runtime.routes.channel_games.values()))
        }

    async def lobbies(self) -> dict[str, Any]:
        """Everything a sign-up is made of: the server's settings and the channel's newest
        sign-up (its status and players), which a refused command must leave as they were."""
        repo = self.t.bot.runtime.service.repo
        return {
            "settings": await repo.get_settings(self.t.guild.id),
            "lobby": await repo.lobbies.newest(self.t.channel.id),
        }

    def integer(self) -> int:
        if self.rnd.random() < 0.5:
            return self.rnd.randint(1, len(self.t.players))
        return self.rnd.choice(INTS)

    def power(self) -> str:
        if self.rnd.random() < 0.5:
            return self.rnd.choice(["kill", "check", "kill", "check", "save", "confess"])
        return self.string()

    def string(self) -> str:
        return self.rnd.choice(STRINGS)

    def game_id(self) -> int:
        return self.rnd.choice([self.d.game_id, self.d.game_id + 1, 0, -1, 2**53 - 1])

    def maybe(self, options: dict[str, Any], name: str, value: Any) -> None:
        if self.rnd.random() < 0.3:
            options[name] = value

    def command(self, ended: bool) -> tuple[str, dict[str, Any]]:
        """A command and hostile options for it."""
        rnd = self.rnd
        names = [
            "game new", "game join", "game leave", "game start", "game status", "game record",
            "role", "act", "pass", "vote", "lastwords", "choose", "mod extend", "mod shorten",
            "mod set-deadline", "mod advance", "mod pause", "mod resume", "mod replace",
            "mod modkill", "mod void",
        ]  # fmt: skip
        if ended:
            names.append("mod end")
        name = rnd.choice(names)
        opts: dict[str, Any] = {}
        match name:
            case "game new":
                opts["ruleset"] = rnd.choice([*RULESETS, self.string()])
                self.maybe(opts, "min_players", self.integer())
                self.maybe(opts, "max_players", self.integer())
                self.maybe(opts, "tie", rnd.choice(["lots", "revote", "none", "victim_choice"]))
                self.maybe(opts, "power_deadline", self.string())
                self.maybe(opts, "vote_deadline", self.string())
                self.maybe(opts, "language", self.string())
                self.maybe(opts, "vote_channel", rnd.choice([self.t.channel, self.lobby]))
            case "game status" | "game record" | "role" | "lastwords":
                self.maybe(opts, "game_id", self.game_id())
            case "act":
                opts["power"] = self.power()
                opts["target"] = self.integer()
                self.maybe(opts, "game_id", self.game_id())
            case "pass":
                opts["power"] = self.power()
                self.maybe(opts, "game_id", self.game_id())
            case "vote":
                opts["target"] = rnd.choice([self.string(), str(self.integer()), "abstain"])
            case "choose":
                opts["target"] = self.integer()
                self.maybe(opts, "game_id", self.game_id())
            case "mod extend" | "mod shorten":
                opts["minutes"] = rnd.choice([1, 5, 60, 1440, 100000, 0, -5, 100001])
            case "mod set-deadline":
                opts["time"] = self.string()
            case "mod replace":
                opts["seat"] = self.integer()
                opts["member"] = rnd.choice([*self.t.players, self.t.outside, self.t.moderator])
            case "mod modkill":
                opts["seat"] = self.integer()
            case "mod void":
                opts["message_id"] = rnd.choice([self.string(), str(self.integer())])
                opts["reason"] = self.string()
            case "mod end":
                opts["winner"] = rnd.choice(["good", "killers", "draw"])
        return name, opts

    async def one(self, ended: bool = False) -> None:
        """One random interaction, checked."""
        rnd = self.rnd
        t = self.t
        name, opts = self.command(ended)
        if rnd.random() < 0.6:  # mostly someone who may use the command, often someone else
            actor = (
                t.moderator
                if name.startswith(("mod", "game new", "game start"))
                else rnd.choice(t.players)
            )
        else:
            actor = rnd.choice([t.moderator, t.outside, *t.players])  # players include the dead
        channel = self.lobby if name.startswith("game") and rnd.random() < 0.5 else t.channel
        in_dm = not name.startswith(("game", "mod")) and rnd.random() < 0.15
        states, lobbies = await self.states(), await self.lobbies()
        try:
            if in_dm:
                result = await actor.user.slash(name, **opts)
            else:
                result = await actor.slash(channel, name, **opts)
        except OptionError:
            self.seen["refused by simcord"] += 1
            return
        self.seen[name] += 1
        self.no_errors(name, opts)
        assert result.acknowledged, (name, opts, "not answered")
        if result.modal is not None:  # /lastwords: fill the box with something hostile
            states = await self.states()
            result = await actor.submit_modal(result, {"words": self.string()[:1500] or "…"})
            self.no_errors(name, "modal")
            assert result.acknowledged
            name = "lastwords (modal)"
        text = answer(result)
        assert text, (name, opts, "an empty answer")
        assert text not in TRY_AGAIN, (name, opts, "answered 'try again'")
        public = not result.ephemeral
        if public:
            assert name in PUBLIC, (name, opts, "answered publicly", text)
        await self.check_unchanged(name, text, public, states, lobbies, actor)

    async def check_unchanged(
        self,
        name: str,
        text: str,
        public: bool,
        states: dict[int, GameState],
        lobbies: dict[str, Any],
        actor: MemberActor,
    ) -> None:
        """A refused command changed nothing; an accepted one changed only what it may."""
        after, lobbies_after = await self.states(), await self.lobbies()
        if not public or name not in ("game new", "game join", "game leave", "game start"):
            assert lobbies_after == lobbies, (name, text, "the sign-up changed")
        for gid, before in states.items():
            now = after[gid]
            if now == before:
                continue
            if name == "vote":  # a post the engine saw (counted or void) is part of the window
                assert len(now.posts) == len(before.posts) + 1, (name, text)
                assert now.posts[-1].author == str(actor.id)
                assert dataclasses.replace(now, posts=before.posts) == before, (name, text)
                self.seen["vote posts seen"] += 1
                continue
            confirmed = text.startswith(("Received: ", "已收到："))  # a choice, confirmed itself
            assert text in ACCEPTED or confirmed, (name, text, "a refused command changed the game")
            self.seen["accepted " + name] += 1


@pytest_asyncio.fixture
async def fuzz(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> AsyncIterator[Fuzz]:
    caplog.set_level(logging.INFO)
    clock = EnvClock()
    env = BotEnv(make_bot(tmp_path / "g.db", clock, seed=SEED), settle_timeout=SETTLE_SECONDS)
    clock.bind(env)
    t = build_table(env, 9)
    lobby = t.guild.create_text_channel("lobby-2")
    await env.start()
    try:
        d = Driver(t, "v2")
        roles = await d.start()
        killer = next(s for s, r in sorted(roles.items()) if r == "killer")
        victim = next(s for s, r in sorted(roles.items()) if r == "civilian")
        await d.power_by_command(killer, "kill", victim)
        await d.lock()  # day 1, with one player out of the game
        yield Fuzz(t=t, d=d, lobby=lobby, rnd=random.Random(SEED), caplog=caplog)
    finally:
        await env.shutdown()


async def test_every_command_with_hostile_options(fuzz: Fuzz) -> None:
    for _round in range(3):
        for _ in range(60):
            await fuzz.one()
        state = await fuzz.t.bot.runtime.service.state(fuzz.d.game_id)
        if not state.over:  # on to the next phase (or further, if a moderator advanced)
            await fuzz.t.moderator.slash(fuzz.t.channel, "mod advance")
    for _ in range(30):
        await fuzz.one(ended=True)
    fuzz.no_errors("at the end")
    state = await fuzz.t.bot.runtime.service.state(fuzz.d.game_id)
    print("slash fuzz:", dict(sorted(fuzz.seen.items())), state.phase, state.over, state.alive())
    assert sum(n for k, n in fuzz.seen.items() if k != "refused by simcord") >= 180
    assert any(k.startswith("accepted ") for k in fuzz.seen)


# -- permissions ---------------------------------------------------------------------------------


@pytest_asyncio.fixture
async def day_one(fuzz: Fuzz) -> Fuzz:
    return fuzz


async def _refused(f: Fuzz, actor: MemberActor, name: str, expected: set[str], **opts: Any) -> None:
    before, lobbies = await f.states(), await f.lobbies()
    result = await actor.slash(f.t.channel, name, **opts)
    assert result.acknowledged and result.ephemeral, name
    assert answer(result) in expected, (name, answer(result))
    assert await f.states() == before and await f.lobbies() == lobbies, name
    f.no_errors(name)


MOD_COMMANDS: list[tuple[str, dict[str, Any]]] = [
    ("mod extend", {"minutes": 30}),
    ("mod shorten", {"minutes": 30}),
    ("mod set-deadline", {"time": "2026-01-02 12:00"}),
    ("mod advance", {}),
    ("mod pause", {}),
    ("mod resume", {}),
    ("mod modkill", {"seat": 1}),
    ("mod void", {"message_id": "1", "reason": "x"}),
    ("mod end", {"winner": "good"}),
]


async def test_only_a_moderator_can_override(day_one: Fuzz) -> None:
    f = day_one
    t = f.t
    state = await t.bot.runtime.service.state(f.d.game_id)
    dead = next(s for s in state.seats if not s.alive)
    alive = next(s for s in state.seats if s.alive)
    people = {
        "a player": t.player(int(alive.seat)),
        "a dead player": t.player(int(dead.seat)),
        "a stranger": t.outside,
    }
    for who, member in people.items():
        for name, opts in [*MOD_COMMANDS, ("mod replace", {"seat": 1, "member": t.outside})]:
            await _refused(f, member, name, MODS_ONLY, **opts)
        await _refused(f, member, "game new", MODS_ONLY, ruleset="v2")
        assert who
    # The moderator's own overrides do apply (the same commands, the same moment).
    result = await t.moderator.slash(t.channel, "mod extend", minutes=30)
    assert answer(result) in ACCEPTED


async def test_the_actor_is_always_the_one_invoking(day_one: Fuzz) -> None:
    f = day_one
    t = f.t
    bot = t.bot
    state = await bot.runtime.service.state(f.d.game_id)
    # A stranger has no role to read, no vote that counts, no power to use.
    await _refused(f, t.outside, "role", NOT_PLAYER)
    await _refused(f, t.outside, "act", NOT_PLAYER, power="kill", target=1)
    await _refused(f, t.outside, "pass", NOT_PLAYER, power="kill")
    # /role shows the invoker's own seat and nothing of anyone else's.
    for seat in state.seats:
        member = t.player(int(seat.seat))
        result = await member.slash(t.channel, "role")
        assert result.ephemeral
        own = [
            describe_view(
                await bot.runtime.contexts.context(f.d.game_id, state, locale=lang),
                state,
                seat.seat,
            )
            for lang in ("zh-CN", "en")
        ]
        assert answer(result) in own
    # A power the invoker does not hold is refused, whoever it would name.
    holder = {s.seat: s for s in state.seats}
    civilian = next(s for s in holder.values() if s.role.value == "civilian" and s.alive)
    killer = next(s for s in holder.values() if s.role.value == "killer" and s.alive)
    before = await f.states()
    result = await t.player(int(civilian.seat)).slash(
        t.channel, "act", power="kill", target=int(killer.seat)
    )
    assert answer(result) not in ACCEPTED and await f.states() == before
    # /vote records the invoker as the voter, whatever the text names.
    result = await t.player(int(civilian.seat)).slash(
        t.channel, "vote", target=str(int(killer.seat))
    )
    after = await bot.runtime.service.state(f.d.game_id)
    assert after.posts[-1].author == civilian.player and after.posts[-1].seat == civilian.seat
    f.no_errors()


FOUND = [
    ("vote", {"target": "²"}),
    ("role", {"game_id": 999}),
    ("game status", {"game_id": 999}),
    ("act", {"power": "kill", "target": 1, "game_id": 999}),
    ("mod set-deadline", {"time": "0001-01-01 00:00"}),
    ("game new", {"ruleset": "v2", "power_deadline": "99999999999d"}),
]


async def test_found_by_fuzzing(day_one: Fuzz) -> None:
    """Each of these once left the bot with an error (answered 'try again', or a game whose
    deadline could not be scheduled)."""
    f = day_one
    for name, opts in FOUND:
        actor = f.t.moderator if name.startswith(("mod", "game new")) else f.t.player(1)
        channel = f.lobby if name == "game new" else f.t.channel
        before = await f.states()
        result = await actor.slash(channel, name, **opts)
        f.no_errors(name)
        assert result.acknowledged and result.ephemeral, name
        assert answer(result) and answer(result) not in TRY_AGAIN, (name, answer(result))
        if name == "vote":  # read as the post 「投 ²」 is: NFKC makes it seat 2
            after = await f.t.bot.runtime.service.state(f.d.game_id)
            assert after.posts[-1].seat == 1 and after.posts[-1].target == 2
            continue
        assert await f.states() == before, name
    # After the end, /vote is refused before anything is posted.
    await f.t.moderator.slash(f.t.channel, "mod end", winner="draw")
    posts = len(f.t.channel.history())
    result = await f.t.player(1).slash(f.t.channel, "vote", target="1")
    f.no_errors("vote after the end")
    assert result.ephemeral and answer(result) not in TRY_AGAIN
    assert len(f.t.channel.history()) == posts


async def test_a_replaced_player_keeps_nothing(day_one: Fuzz) -> None:
    """After /mod replace, the seat answers only to the substitute: the old holder's DM button and
    commands are refused, the substitute reads the role."""
    f = day_one
    t = f.t
    state = await t.bot.runtime.service.state(f.d.game_id)
    seat = next(s for s in state.seats if s.alive)
    old = t.player(int(seat.seat))
    confirm = next(
        (m, c.custom_id)
        for m in old.user.dm_channel.history()
        for row in m.components
        for c in getattr(row, "children", [])
        if str(getattr(c, "custom_id", "")).startswith("faguan:confirm:")
    )
    result = await t.moderator.slash(
        t.channel, "mod replace", seat=int(seat.seat), member=t.outside
    )
    assert answer(result) in ACCEPTED
    before = await f.states()
    lobbies = t.bot.runtime.service.repo.lobbies
    confirmed = await lobbies.confirmed_seats(f.d.game_id)
    assert int(seat.seat) not in confirmed  # the substitute has not confirmed yet
    clicked = await old.user.click(confirm[0], custom_id=confirm[1])
    assert answer(clicked) in NOT_PLAYER
    assert await lobbies.confirmed_seats(f.d.game_id) == confirmed
    await _refused(f, old, "role", NOT_PLAYER)
    await _refused(f, old, "act", NOT_PLAYER, power="kill", target=1)
    assert await f.states() == before
    mine = await t.outside.slash(t.channel, "role")
    state = await t.bot.runtime.service.state(f.d.game_id)
    own = [
        describe_view(
            await t.bot.runtime.contexts.context(f.d.game_id, state, locale=lang), state, seat.seat
        )
        for lang in ("zh-CN", "en")
    ]
    assert answer(mine) in own
    f.no_errors()
