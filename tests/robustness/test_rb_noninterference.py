"""Non-interference, proven on the real bot: for every ruleset, two games on simcord that differ
only in hidden information — the same seed and players, but two living seats' roles swapped at
the deal — are played with the same public inputs at the same simulated times (vote posts and
/vote, abstentions, last words, the victim's choice, moderator extends, pauses and advances,
`/mod replace` of a seat by an outside member, modkills, `/mod void` of the last vote post,
`/mod penalty`, DM closures, the observers' own commands), while the night powers follow the
roles (the step one seat of the pair makes in game A, the other makes in game B). The swap goes
through the bot's own deal (a test hook around `engine.new_game` as `bot.runtime.service` calls
it, nothing else changed). After every step, what changed in everything a non-privileged observer can see must be
identical up to ids (so a difference is reported once, at the step that made it):

- the spectator (a member of the server not in the game) and every seated member whose engine
  view (`view_for` of each of their cards) is the same in both games: the channels and threads
  they can read (every message, embed, component, reaction and who reacted, pings, thread
  members), the permission overwrites of those channels, the server's roles and who holds them;
- the answers they get to the same commands: `/game status`, `/role`, `/vote` (at night, or as a
  spectator: a refusal), `/mod pending` (the seated members are moderators: one holds the
  moderator role, one Manage Server), and the autocomplete of `/act` power and target.

Where the games may legitimately diverge: from the first step after which the engine's public
view (`view_for(state, None)`: roles revealed, deaths, votes, the result) differs between the two
games — a death that shows a role, a public identity, the end — the comparison stops (that step
included). Seated observers are compared only at steps where the engine lets them know the same
in both games. The moderator who does not play is privileged and never compared.

Every ruleset is played hosted in a text channel and hosted in a forum (the main post, a daily
投票帖 where the votes are posted: the comparison covers both, as every channel and thread).

FAGUAN_NI_GAMES=k plays k pairs per ruleset and hosting (CI: 1)."""

from __future__ import annotations

import itertools
import os
import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import discord
import pytest
from nikit import (
    LAST_VOTE_POST,
    Observed,
    Play,
    Someone,
    Step,
    dealing,
    delta,
    first_difference,
    quick_settle,
    same_knowledge,
    swapped,
)
from rbkit import EnvClock

# isort: split
from gamebot import GUILD_ID, SETTLE_SECONDS, BotEnv, invite_permissions, make_bot
from simcord import Env

from bot.discord.views import valid_targets
from engine.events import GameCreated
from engine.game import replay_events, start_events
from engine.model import PhaseKind, Seat
from engine.rulesets import RULESETS, get_ruleset, rules_for
from engine.state import GameState
from engine.view import view_for

GAMES = int(os.environ.get("FAGUAN_NI_GAMES", "1"))
TRACE = bool(os.environ.get("FAGUAN_NI_TRACE"))
"""Print every step of game A with the answers it got (to read what a failure means)."""
SEED = "ni-seed-5b1e"
PHASES = 4
HOSTINGS = ["text", "forum"]
"""Where the game is hosted: a text channel, or a forum (a main post and a daily 投票帖)."""
DAY_POWERS = {"confess", "veto"}
MOD_PLAYER = "主持玩家"
"""A member holding the moderator role who joins the game."""
MANAGER_PLAYER = "管理玩家"
"""A member with Manage Server (a moderator for the bot) who joins the game."""


def size(ruleset: str) -> int:
    """The smallest table the ruleset deals (and at least 8 seats, so the pair has company)."""
    return max(RULESETS[ruleset].min_players, 8 // RULESETS[ruleset].cards_per_player)


# -- the world -------------------------------------------------------------------------------------


@dataclass
class World:
    play: Play
    order: list[str]
    """Members in the order they try to join."""


def build(env: Env, n: int, hosting: str) -> World:
    """The same server for both games: a moderator who does not play, n + 2 members (a
    moderator-player, a Manage Server player, plain players; those left out are substitutes), a
    spectator; with `hosting` "forum", a forum the game is hosted in."""
    guild = env.create_guild("杀人游戏", id=GUILD_ID)
    invite_permissions(env, guild)
    mod_role = guild.create_role("主持人")
    managers = guild.create_role("管理", permissions=discord.Permissions(manage_guild=True))
    channel = guild.create_text_channel("game")
    forum = guild.create_forum_channel("杀人游戏论坛") if hosting == "forum" else None
    moderator = guild.add_member(env.create_user("mod"), roles=[mod_role])
    members = {}
    order = []
    for i in range(1, n + 3):
        name = f"玩家{i}"
        roles = []
        if i == 2:
            name, roles = MOD_PLAYER, [mod_role]
        elif i == 4:
            name, roles = MANAGER_PLAYER, [managers]
        members[name] = guild.add_member(env.create_user(name), roles=roles)
        order.append(name)
    spectator = guild.add_member(env.create_user("路人"))
    play = Play(
        env=env,
        guild_id=guild.id,
        channel=channel,
        moderator=moderator,
        members=members,
        spectator=spectator,
        forum=forum,
    )
    return World(play=play, order=order)


@dataclass
class Game:
    """A started simcord environment with one world (only one Env may live per event loop)."""

    env: Env
    world: World

    @classmethod
    async def start(cls, db: Path, n: int, hosting: str) -> Game:
        clock = EnvClock()
        env = BotEnv(make_bot(db, clock, seed=SEED), settle_timeout=SETTLE_SECONDS)
        quick_settle(env)
        clock.bind(env)
        world = build(env, n, hosting)
        await env.start()
        return cls(env=env, world=world)

    async def stop(self) -> None:
        await self.env.shutdown()


# -- recording game A ------------------------------------------------------------------------------


@dataclass
class Recorded:
    step: Step
    seen: Observed | None
    """None for steps before the game exists."""


@dataclass
class Planner:
    """Plays game A with random choices, recording every step and what it showed."""

    play: Play
    order: list[str]
    ruleset: str
    n: int
    rnd: random.Random
    log: list[Recorded] = field(default_factory=list)
    pair: tuple[int, int] = (0, 0)
    blocked: set[str] = field(default_factory=set)
    powers: list[str] = field(default_factory=list)
    """Every power some seat of this game holds (for the autocomplete probes)."""
    subs: list[str] = field(default_factory=list)
    """Members who did not join: outsiders a moderator may seat with `/mod replace`."""

    def name_of(self, member_id: int) -> str:
        return next(k for k, m in self.play.members.items() if m.id == member_id)

    def seated(self, state: GameState) -> list[str]:
        return sorted({self.name_of(int(s.player)) for s in state.seats})

    async def step(self, step: Step) -> None:
        answers: dict[str, list[Any]] = {}
        await self.play.do(step, answers)
        seen = None
        if not self.play.game_id:  # observed from the step that starts the game
            self.play.game_id = self.play.bot.runtime.routes.channel_games.get(
                self.play.channel.id, 0
            )
        if self.play.game_id:
            state = await self.play.state()
            seen = await self.play.observe(state, self.seated(state))
            seen.answers = answers
        self.log.append(Recorded(step, seen))

    async def setup(self, language: str, deals: list[GameCreated]) -> None:
        mod = "moderator"
        new = {"command": "game new", "ruleset": self.ruleset, "language": language}
        await self.step(Step("slash", mod, args=tuple(new.items())))
        joined = 0
        for name in self.order:
            if joined == self.n:
                break
            answers: dict[str, list[Any]] = {}
            step = Step("slash", name, args=(("command", "game join"),))
            await self.play.do(step, answers)
            self.log.append(Recorded(step, None))
            joined += not answers[name][0][1][1]  # a public answer: joined (ephemeral: refused)
        if self.rnd.random() < 0.3:  # DMs closed before the deal
            await self.step(Step("block", self.rnd.choice(self.order[: self.n])))
        await self.step(Step("slash", mod, args=(("command", "game start"),)))
        assert self.play.game_id, "the game did not start"
        assert len(deals) == 1
        state = await self.play.state()
        self.pair = choose_pair(deals[0], state, self.rnd, self.seated(state), self)
        self.subs = [name for name in self.order if name not in self.seated(state)]
        self.powers = sorted(
            {p.value for s in state.seats for p in view_for(state, s.seat).powers}
            | {"check", "kill"}
        )

    async def observe(self, state: GameState) -> None:
        """Observers ask: the spectator and one seated member (often a moderator-player), two
        questions each; a moderator-player at night always asks /mod pending."""
        rnd = self.rnd
        seated = self.seated(state)
        mods = [m for m in (MOD_PLAYER, MANAGER_PLAYER) if m in seated]
        member = rnd.choice(mods if mods and rnd.random() < 0.6 else seated)
        night = state.window is not None and state.window.kind is PhaseKind.NIGHT
        for who in ("spectator", member):
            power = rnd.choice(self.powers)
            menu: list[tuple[str, tuple[tuple[str, Any], ...]]] = [
                ("slash", (("command", "game status"),)),
                ("slash", (("command", "role"),)),
                ("autocomplete", (("command", "act"), ("option", "power"))),
                ("autocomplete", (("command", "act"), ("option", "target"), ("power", power))),
            ]
            if night or who == "spectator":
                vote = (("command", "vote"), ("target", str(rnd.randint(1, self.n))))
                menu.append(("slash", vote))
            asks = rnd.sample(menu, 2)
            if who in mods and night:
                asks.append(("slash", (("command", "mod pending"),)))
            for kind, args in asks:
                await self.step(Step(kind, who, args=args))

    async def maybe_block(self, state: GameState) -> None:
        """A player closes their DMs (often one of the pair)."""
        if self.rnd.random() > 0.4:
            return
        pair_members = [self.name_of(int(state.seat(Seat(s)).player)) for s in self.pair]
        pool = pair_members if self.rnd.random() < 0.6 else self.seated(state)
        pool = [m for m in pool if m not in self.blocked]
        if pool:
            who = self.rnd.choice(pool)
            self.blocked.add(who)
            await self.step(Step("block", who))

    async def night(self, state: GameState) -> None:
        rules = rules_for(state)
        cards = rules.cards_per_player
        for seat in state.alive():
            powers = [p for p in view_for(state, seat).powers if p.value not in DAY_POWERS]
            if not powers or self.rnd.random() < 0.1:
                continue
            power = self.rnd.choice(powers)
            args: list[tuple[str, Any]] = [("power", power.value), ("cards", cards)]
            targets = [t for t in valid_targets(state, seat, power) if int(t) not in self.pair]
            use = self.rnd.random() < 0.85
            if use and power in rules.untargeted_powers:
                pass
            elif use and targets:
                args.append(("target", int(self.rnd.choice(targets))))
            else:
                args.append(("passed", True))
            await self.step(Step("power", seat=int(seat), args=tuple(args)))
            if self.rnd.random() < 0.15:  # someone looks in the middle of the night
                await self.observe(await self.play.state())

    def pool(self, state: GameState, seat: Seat) -> list[Seat]:
        window = state.window
        assert window is not None
        group = next((g for g in rules_for(state).vote_groups(state) if seat in g.voters), None)
        if group is not None:
            return list(group.candidates)
        return list(window.candidates) or list(state.alive())

    async def day(self, state: GameState) -> None:
        window = state.window
        assert window is not None
        rnd = self.rnd
        if window.chooser is not None:
            who = self.name_of(int(state.seat(window.chooser).player))
            target = int(rnd.choice(window.candidates))
            await self.step(Step("slash", who, args=(("command", "choose"), ("target", target))))
            return
        wagons: dict[tuple[Seat, ...], Seat] = {}
        posted: set[str] = set()
        for seat in state.alive():
            who = self.name_of(int(state.seat(seat).player))
            if who in posted or rnd.random() < 0.15:
                continue
            posted.add(who)
            pool = self.pool(state, seat)
            calm = [s for s in pool if int(s) not in self.pair] or pool  # the pair lives longer
            wagon = wagons.setdefault(tuple(pool), rnd.choice(calm))
            target = wagon if rnd.random() < 0.6 else rnd.choice(pool)
            if rnd.random() < 0.2:
                vote = (("command", "vote"), ("target", str(int(target))))
                await self.step(Step("slash", who, args=vote))
            else:
                text = "弃权" if rnd.random() < 0.1 else f"投 {int(target)}号"
                await self.step(Step("post", who, args=(("text", text),)))
        if rnd.random() < 0.3:
            await self.step(Step("post", "spectator", args=(("text", "投 1"),)))

    async def override(self) -> None:
        rnd = self.rnd
        kind = rnd.choice(["extend", "pause"])
        if kind == "extend":
            extend = (("command", "mod extend"), ("minutes", rnd.randint(1, 30)))
            await self.step(Step("slash", "moderator", args=extend))
        else:
            await self.step(Step("slash", "moderator", args=(("command", "mod pause"),)))
            await self.step(Step("wait", args=(("seconds", 600),)))
            await self.step(Step("slash", "moderator", args=(("command", "mod resume"),)))

    async def moderate(self, state: GameState) -> None:
        """A moderator steps in on a seat outside the pair (its role is the same in both games):
        seats a substitute, modkills it, voids the last vote post, or penalizes a seat (of the
        pair too: a public input, whatever its hidden role makes of it)."""
        rnd = self.rnd
        others = [int(s) for s in state.alive() if int(s) not in self.pair]
        kind = rnd.choice(["replace", "modkill", "void", "penalty"])
        args: tuple[tuple[str, Any], ...]
        if kind == "replace" and self.subs and others:
            sub = Someone(self.subs.pop(0))
            args = (("command", "mod replace"), ("seat", rnd.choice(others)), ("member", sub))
        elif kind == "modkill" and len(others) > 4:
            args = (("command", "mod modkill"), ("seat", rnd.choice(others)))
        elif kind == "penalty":
            seat = rnd.choice([*self.pair, *others])
            args = (("command", "mod penalty"), ("seat", seat), ("reason", "诈尸"))
        else:
            args = (("command", "mod void"), ("message_id", LAST_VOTE_POST), ("reason", "代投"))
        await self.step(Step("slash", "moderator", args=args))

    async def last_words(self, state: GameState, choices: list[str]) -> None:
        """Every player with last words open gives them (one of `choices`)."""
        for seat in state.last_words_open:
            who = self.name_of(int(state.seat(seat).player))
            words = self.rnd.choice(choices)
            await self.step(Step("lastwords", who, args=(("words", words),)))

    async def run(self) -> None:
        for _ in range(PHASES):
            state = await self.play.state()
            if state.over:
                return
            await self.maybe_block(state)
            await self.observe(state)
            await self.last_words(state, ["我是好人", "last words", "{seat}"])
            if self.rnd.random() < 0.25:
                await self.override()
            state = await self.play.state()
            if state.over:
                return
            assert state.window is not None
            if state.window.kind is PhaseKind.NIGHT:
                await self.night(state)
            else:
                await self.day(state)
            state = await self.play.state()
            if not state.over and self.rnd.random() < 0.4:
                await self.moderate(state)
                if (await self.play.state()).over:
                    return
            if self.rnd.random() < 0.25:
                await self.step(Step("slash", "moderator", args=(("command", "mod advance"),)))
            else:
                await self.step(Step("lock"))


def choose_pair(
    created: GameCreated, state: GameState, rnd: random.Random, seated: list[str], planner: Planner
) -> tuple[int, int]:
    """Two seats with different roles whose swap the ruleset deals, preferring swaps that leave
    the moderator-players' (and most members') knowledge unchanged and move a power."""
    rules = get_ruleset(created.ruleset).configured(created.options.extras)
    cards = rules.cards_per_player
    base = replay_events(start_events(created))
    holder = {int(s.seat): planner.name_of(int(s.player)) for s in state.seats}
    scored = []
    for a, b in itertools.combinations(range(1, len(created.roles) + 1), 2):
        if created.roles[a - 1] == created.roles[b - 1] or holder[a] == holder[b]:
            continue
        other = swapped(created, (a, b))
        hands = [other.roles[i : i + cards] for i in range(0, len(other.roles), cards)]
        if not rules.deal_allowed(hands):
            continue
        moved = replay_events(start_events(other))
        if view_for(base, None) != view_for(moved, None):
            continue  # the swap itself is public (无间道's identities): no hidden difference
        unchanged = [
            name
            for name in seated
            if same_knowledge(
                tuple(view_for(base, c) for c in base.seats_of(str(planner.play.members[name].id))),
                tuple(
                    view_for(moved, c) for c in moved.seats_of(str(planner.play.members[name].id))
                ),
            )
        ]
        if not unchanged:
            continue
        mods = sum(m in unchanged for m in (MOD_PLAYER, MANAGER_PLAYER))
        power = bool(view_for(base, Seat(a)).powers or view_for(base, Seat(b)).powers)
        scored.append(((mods, power), (a, b)))
    assert scored, f"{created.ruleset}: no two seats whose roles differ can be swapped"
    best = max(score for score, _ in scored)
    pair = rnd.choice([p for score, p in scored if score == best])
    a, b = pair
    assert created.roles[a - 1] != created.roles[b - 1]  # else the test proves nothing
    return pair


# -- the test ----------------------------------------------------------------------------------------


@dataclass
class Verdict:
    compared: int = 0
    locks: int = 0
    answers: int = 0
    observers: set[str] = field(default_factory=set)
    stopped: str = "the script's end"
    leaks: list[tuple[str, str]] = field(default_factory=list)
    """(kind, what differs): the first difference of each kind (who saw it, through what)."""

    def add(self, kind: str, found: str) -> None:
        if all(k != kind for k, _ in self.leaks):
            self.leaks.append((kind, found))


def compare(
    step_no: int,
    step: Step,
    a: tuple[Observed | None, Observed],
    b: tuple[Observed | None, Observed],
    verdict: Verdict,
) -> None:
    """Record what an observer sees differently at this step (the first of each kind): what
    changed in their view of the server since the previous step, and the answers they got."""
    step_kind = step.kind if step.kind != "slash" else dict(step.args)["command"]
    (a_before, a_now), (b_before, b_now) = a, b
    for who in sorted(a_now.public):
        if who != "spectator" and not (
            who in b_now.views and same_knowledge(a_now.views[who], b_now.views[who])
        ):
            continue
        verdict.observers.add(who)
        seen_a = delta(a_before.public.get(who) if a_before else None, a_now.public[who])
        seen_b = delta(b_before.public.get(who) if b_before else None, b_now.public.get(who, {}))
        found = first_difference(seen_a, seen_b)
        if found:
            where = re.sub(r"\[\d+\]", "", re.split(r":\n|: only in", found)[0])
            kind = f"seen in {where} after {step_kind}"
            verdict.add(kind, f"step {step_no} ({step}): {who} sees {found}")
    a, b = a_now, b_now
    for who, got in a.answers.items():
        if who == "moderator":
            continue
        if who != "spectator" and not (
            who in a.views and who in b.views and same_knowledge(a.views[who], b.views[who])
        ):
            continue
        verdict.answers += len(got)
        found = first_difference(got, b.answers.get(who))
        if found:
            kind = f"{'spectator' if who == 'spectator' else 'player'} is answered {step_kind}"
            verdict.add(kind, f"step {step_no} ({step}): {who} is answered {found}")


async def replay(game: Game, recorded: list[Recorded], verdict: Verdict) -> None:
    """Game B: the same steps, compared after each until the public views differ."""
    play = game.world.play
    before: tuple[Observed | None, Observed | None] = (None, None)
    for i, rec in enumerate(recorded):
        answers: dict[str, list[Any]] = {}
        await play.do(rec.step, answers)
        if rec.seen is None:
            continue
        if not play.game_id:
            play.game_id = play.bot.runtime.routes.channel_games.get(play.channel.id, 0)
        assert play.game_id, "game B did not start"
        state = await play.state()
        seen = await play.observe(state, sorted(rec.seen.views))
        seen.answers = answers
        if seen.public_view != rec.seen.public_view:
            verdict.stopped = f"step {i} ({rec.step}): the public views differ"
            return
        verdict.compared += 1
        verdict.locks += rec.step.kind == "lock" or "mod advance" in str(rec.step)
        compare(i, rec.step, (before[0], rec.seen), (before[1], seen), verdict)
        before = (rec.seen, seen)


@pytest.mark.parametrize("k", range(GAMES))
@pytest.mark.parametrize("hosting", HOSTINGS)
@pytest.mark.parametrize("ruleset", sorted(RULESETS))
async def test_swapped_roles_look_the_same(
    ruleset: str, hosting: str, k: int, tmp_path: Path
) -> None:
    rnd = random.Random(
        f"{SEED}-{ruleset}-{k}" if hosting == "text" else f"{SEED}-{hosting}-{ruleset}-{k}"
    )
    n = size(ruleset)
    language = rnd.choice(["zh-CN", "en"])
    deals_a: list[GameCreated] = []
    game = await Game.start(tmp_path / "a.db", n, hosting)
    try:
        with dealing(deals_a, None):
            planner = Planner(game.world.play, game.world.order, ruleset, n, rnd)
            await planner.setup(language, deals_a)
        await planner.run()
        assert not list(game.env.errors)
    finally:
        await game.stop()
    pair = planner.pair
    if TRACE:
        for i, rec in enumerate(planner.log):
            print(i, rec.step, rec.seen.answers if rec.seen else "")
    deals_b: list[GameCreated] = []
    verdict = Verdict()
    game = await Game.start(tmp_path / "b.db", n, hosting)
    try:
        game.world.play.pair = pair
        with dealing(deals_b, pair):
            await replay(game, planner.log, verdict)
    finally:
        await game.stop()
    a, b = pair
    roles = deals_a[0].roles
    assert deals_b[0].roles[a - 1] == roles[b - 1] != roles[a - 1] == deals_b[0].roles[b - 1]
    print(
        f"{ruleset} ({hosting}): seats {a} ({roles[a - 1].value}) ⇄ {b} ({roles[b - 1].value}), "
        f"{len(planner.log)} steps, {verdict.compared} compared ({verdict.locks} locks, "
        f"{verdict.answers} answers, observers {sorted(verdict.observers)}); stopped at {verdict.stopped}"
    )
    if verdict.leaks:
        leaks = "\n".join(f"  [{kind}]\n    {found}" for kind, found in verdict.leaks)
        pytest.fail(
            f"{ruleset} ({hosting}), seats {a}⇄{b}: an observer can tell them apart:\n{leaks}"
        )
    assert verdict.compared > 10 and verdict.locks >= 1, verdict
    assert "spectator" in verdict.observers and len(verdict.observers) >= 2, verdict


def test_the_comparison_sees_one_word() -> None:
    """The checker itself: one changed word in one message of one game is a difference, found
    at the step that made it and not again after."""
    post = (
        "user:TestBot",
        0,
        "昨夜出局：3号",
        "[]",
        "[]",
        (),
        None,
        False,
        False,
        (),
        (),
        (),
        False,
    )
    told = (*post[:2], "⚠ 无法私信 3号", *post[3:])
    first = {"channel:game": (0, (), (), (post,))}
    a1 = {"channel:game": (0, (), (), (post, post))}
    b1 = {"channel:game": (0, (), (), (post, told))}
    assert first_difference(delta(first, a1), delta(first, b1))
    a2 = {"channel:game": (0, (), (), (post, post, post))}
    b2 = {"channel:game": (0, (), (), (post, told, post))}
    assert first_difference(delta(a1, a2), delta(b1, b2)) is None
