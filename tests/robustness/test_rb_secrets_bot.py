"""Secrets at bot scale: whole random games on simcord (the real bot, slash commands, vote posts,
DM-less play through /act, overrides, last words). Captured: every message and embed in every
guild channel (private team threads excepted), every ephemeral answer, every log line at INFO
and above. None may show a role, a check answer or the seed before the ruleset reveals it; an
ephemeral /role answer shows only the invoker's own role and checks.

Also: autocomplete of /act (power, target) and /vote offers a member exactly what the engine
would accept from them (no list for a power they lack, none for a stranger or the dead); players
close their DMs at random moments (one from the deal, more later); the team threads hold only
the team's players and nobody out of the game can post there; in some games the moderator plays
(`/game join`), and their /mod pending names no power holder they may not know of."""

from __future__ import annotations

import contextlib
import logging
import random
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import discord
import pytest
import pytest_asyncio
from nikit import quick_settle
from rbkit import LOCALES, EnvClock, count_words, excess_secret_words, secret_words

# isort: split
from gamebot import SETTLE_SECONDS, BotEnv, Table, build_table, make_bot
from simcord import BackendError, ChannelHandle, InteractionResult, MemberActor

from bot.discord.views import valid_targets
from bot.records.i18n import catalog, render
from bot.runtime.schedule import to_ms
from engine.model import CheckResult, Instant, PhaseKind, Power, Role, Seat, Team
from engine.rulesets import RULESETS, rules_for
from engine.state import DayRecord, GameState, NightRecord
from engine.view import view_for

SEED = "bot-secrets-seed-7f3a9c"
SIZES = {
    "v1_inspector": 16,
    "v4_lone": 16,
    "v2_sapper": 13,
    "v5": 8,
    "tianxia": 12,
    "wujiandao": 10,
}
GAMES = [
    (ruleset, SIZES.get(ruleset, max(RULESETS[ruleset].min_players, 10)))
    for ruleset in sorted(RULESETS)
]
"""Every ruleset, at a size it deals (v5: 8 players, 16 cards)."""
PREFIXES = {
    "pending_powers": tuple(catalog(loc)["pending.powers"].split("{")[0] for loc in LOCALES),
    "over": tuple(catalog(loc)["game.over"].split("{")[0] for loc in LOCALES),
    "reveal": tuple(catalog(loc)["reveal_msg.text"].split("{")[0] for loc in LOCALES),
    "record": tuple(catalog(loc)["notice.record"].split("{")[0] for loc in LOCALES),
}
SEAT = re.compile(r"(\d+)号 |#(\d+) ")
ROLE_IDS = re.compile(
    r"\b(" + "|".join(sorted((r.value for r in Role), key=len, reverse=True)) + r")\b"
)
WORDS = ["遗言：我没问题", "last words 😀", "@everyone 理由", "{seat}", "**粗体**"]


RULESET_NAMES = sorted(
    {render(loc, f"ruleset.{r.id}") for r in RULESETS.values() for loc in LOCALES}
    | {r.name_zh for r in RULESETS.values()},
    key=len,
    reverse=True,
)
"""秘匪版, 3.1 特警版 (special police) …: a ruleset's name, in either language, is not a fact
about a seat."""


def excess(text: str) -> dict[str, int]:
    """Secret words (either language) not explained by the catalog's own wording."""
    for name in RULESET_NAMES:
        text = text.replace(name, "\x00")
    found: dict[str, int] = {}
    for locale in LOCALES:
        found.update(excess_secret_words(text, locale))
    return found


def message_text(message: Any) -> str:
    parts = [message.content or ""]
    for embed in message.embeds:
        parts += [embed.title or "", embed.description or ""]
        parts += [f"{f.name} {f.value}" for f in embed.fields]
        if embed.footer and embed.footer.text:
            parts.append(embed.footer.text)
    return "\n".join(parts)


def answer_texts(result: InteractionResult) -> list[str]:
    out = []
    if result.response is not None:
        out.append(message_text(result.response))
    out += [message_text(m) for m in result.followups]
    return out


@dataclass
class Capture:
    """What every non-concerned reader saw, checked as it arrives."""

    t: Table
    caplog: pytest.LogCaptureFixture
    seen: set[int] = field(default_factory=set)
    seeds: dict[int, str] = field(default_factory=dict)
    """Each game's seed (secret until that game is over)."""
    public: int = 0
    answers: int = 0
    own_answers: int = 0
    logs: int = 0
    autocompletes: int = 0
    mod_pendings: int = 0
    thread_refusals: int = 0

    async def states(self) -> dict[int, GameState]:
        bot = self.t.bot
        return {g: await bot.runtime.service.state(g) for g in self.seeds}

    def secret_seeds(self, states: dict[int, GameState]) -> list[str]:
        return [seed for g, seed in self.seeds.items() if not states[g].over]

    async def check(self) -> None:
        """Every new message in every guild channel (as @everyone's client shows it), and every
        new log line."""
        states = await self.states()
        games = self.t.bot.runtime.routes.channel_games
        for channel in self.t.guild.channels.values():
            last = channel.last_message
            if last is None or last.id in self.seen:
                continue  # nothing new here
            state = states.get(games.get(channel.id, -1))
            for message in channel.history():
                if message.id in self.seen:
                    continue
                self.seen.add(message.id)
                self.public += 1
                if message.type is discord.MessageType.thread_created:
                    # A team thread was opened (its name, 第1局·杀手, names a team, not a seat).
                    assert not SEAT.search(message.content), message.content
                    continue
                for part in message_text(message).split("\n\n"):  # effects merged in one post
                    self.check_public(part, state, states)
        self.check_logs(states)

    def check_public(
        self, text: str, state: GameState | None, states: dict[int, GameState]
    ) -> None:
        for seed in self.secret_seeds(states):
            assert seed not in text, ("the seed before the end", text)
        if text.startswith(PREFIXES["over"]):
            assert state is not None and state.over, ("a game.over post before the end", text)
            return
        if text.startswith(PREFIXES["reveal"]):
            shown = {int(a or b) for a, b in SEAT.findall(text)}
            assert state is not None and shown, text
            assert all(not state.seat(Seat(s)).alive for s in shown), text  # only the leaving
            return
        assert not excess(text), ("a secret in public", text, excess(text))

    def answer(
        self,
        result: InteractionResult,
        states: dict[int, GameState],
        *,
        own: tuple[GameState, Seat] | None = None,
    ) -> None:
        """An ephemeral answer: seen by the invoker only."""
        for text in answer_texts(result):
            self.answers += 1
            for seed in self.secret_seeds(states):
                assert seed not in text, ("the seed before the end", text)
            if own is not None:  # /role to its owner: their role and checks, nobody else's
                self.own_answers += 1
                state, seat = own
                roles: set[Role] = set()  # what the engine lets them know, from each card
                checks: set[CheckResult] = set()  # (apart: Role.KILLER == CheckResult.KILLER)
                sides: set[str] = set()  # a mine's own side
                whens: set[str] = set()  # when its own role's later powers come
                for card in state.seats_of(state.seat(seat).player):
                    view = view_for(state, card)
                    roles |= {r for r in (view.role, view.original_role) if r is not None}
                    roles |= {s.role for s in view.seats if s.role is not None}
                    roles |= {p.becomes for p in view.later if p.becomes is not None}
                    checks |= {c for _, _, c in view.checks}
                    sides |= {view.side} if view.side else set()
                    whens |= {p.when for p in view.later}
                words = [render(loc, f"role.{r.value}") for r in roles for loc in LOCALES]
                words += [render(loc, f"check.{c.value}") for c in checks for loc in LOCALES]
                words += [render(loc, f"role_side.{side}", {}) for side in sides for loc in LOCALES]
                words += [  # the rule's own wording (「有杀手出局后起」)
                    part
                    for when in whens
                    for loc in LOCALES
                    for part in re.split(r"\{[^}]*\}", catalog(loc)[f"later.{when}"])
                    if len(part) > 1
                ]
                for word in sorted(words, key=len, reverse=True):
                    text = text.replace(word, "\x00")
            assert not excess(text), ("a secret in an answer", text, excess(text))

    def check_logs(self, states: dict[int, GameState]) -> None:
        records = [r for r in self.caplog.records if r.levelno >= logging.INFO]
        for record in records[self.logs :]:
            message = record.getMessage()
            assert not excess(message), ("a secret in the log", message)
            assert not ROLE_IDS.search(message), ("a role id in the log", message)
            for seed in self.secret_seeds(states):
                assert seed not in message, ("the seed in the log", message)
        self.logs = len(records)


@dataclass
class Game:
    """One game played through Discord only, with random choices."""

    t: Table
    cap: Capture
    channel: ChannelHandle
    ruleset: str
    n: int
    rnd: random.Random
    game_id: int = 0
    mod_player: MemberActor | None = None
    """A member with the moderator role who joins this game (and one player fewer does); the
    table's moderator still runs it."""
    blocked: set[int] = field(default_factory=set)
    """Members whose DMs are closed."""

    @property
    def members(self) -> list[MemberActor]:
        return self.t.players[: self.n - (self.mod_player is not None)]

    @property
    def spares(self) -> list[MemberActor]:
        return self.t.players[self.n - (self.mod_player is not None) :]

    @property
    def seated(self) -> list[MemberActor]:
        """Everyone who tried to join (the moderator-player too)."""
        return [*self.members, self.mod_player] if self.mod_player else self.members

    async def state(self) -> GameState:
        return await self.t.bot.runtime.service.state(self.game_id)

    def member(self, state: GameState, seat: Seat) -> MemberActor:
        user = int(state.seat(seat).player)
        everyone = [*self.t.players, self.t.outside, *self.seated]
        return next(m for m in everyone if m.id == user)

    async def slash(self, who: MemberActor, name: str, **opts: Any) -> InteractionResult:
        result = await who.slash(self.channel, name, **opts)
        assert result.acknowledged, (name, opts)
        assert not list(self.t.env.errors)
        return result

    async def start(self) -> None:
        t = self.t
        language = self.rnd.choice(["zh-CN", "en"])
        r = await self.slash(t.moderator, "game new", ruleset=self.ruleset, language=language)
        assert not r.ephemeral, answer_texts(r)
        for member in self.members:
            await self.slash(member, "game join")
        if self.mod_player:  # a moderator who plays; if that is refused, a spare takes the seat
            joined = await self.slash(self.mod_player, "game join")
            if joined.ephemeral:
                await self.slash(self.spares[0], "game join")
        seed = f"{SEED}-{self.channel.name}-{self.rnd.getrandbits(64):016x}"
        t.bot.runtime.seed_source = lambda: seed
        self.block(self.rnd.choice(self.members))  # one player does not accept DMs
        await self.slash(t.moderator, "game start")
        self.game_id = t.bot.runtime.routes.channel_games[self.channel.id]
        self.cap.seeds[self.game_id] = seed

    def block(self, member: MemberActor) -> None:
        """From now on every DM the bot sends this member fails as Discord's do (50007)."""
        self.blocked.add(member.id)
        self.t.env.inject_error(
            "POST",
            f"/channels/{member.user.dm_channel.id}/messages",
            status=403,
            code=50007,
            message="Cannot send messages to this user",
            times=None,
        )

    async def checkpoint(self) -> None:
        await self.cap.check()
        if self.game_id:
            await self.check_threads(await self.state())

    async def check_threads(self, state: GameState) -> None:
        """Each team thread holds only players of that team, and nobody out of the game (dead,
        replaced) can post there."""
        info = await self.t.bot.runtime.service.info(self.game_id)
        rules = rules_for(state)
        handles = {h.id: h for h in self.channel.threads}
        bot_id = self.t.bot.user.id if self.t.bot.user else 0
        for key, value in info.channels.items():
            if not key.startswith("thread_"):
                continue
            team = Team(key.removeprefix("thread_"))
            thread = self.t.env.backend.channels[int(value)]
            inside = set(thread.thread_members) - {bot_id}
            team_users = {int(s.player) for s in state.seats if rules.team_of(s) is team}
            assert inside <= team_users, (
                "someone outside the team is in its thread",
                team,
                inside - team_users,
            )
            if state.over:
                continue
            living = {int(s.player) for s in state.seats if s.alive}
            for member in [*self.t.players, *self.seated, self.t.outside]:
                if member.id in living or member.id not in inside | team_users:
                    continue  # the living post there; others were never in it
                with pytest.raises(BackendError):  # out of the game: no more posting
                    await member.send(handles[int(value)], "我还在")
                self.cap.thread_refusals += 1

    async def autocompletes(self, state: GameState) -> None:
        """What autocomplete offers a member (or a stranger) is exactly what the engine would
        accept from them: their own powers; targets only for a power a living card holds."""
        rnd = self.rnd
        who = rnd.choice([*self.seated, self.t.outside])
        cards = state.seats_of(str(who.id))
        living = [c for c in cards if state.seat(c).alive]
        got = await who.autocomplete(self.channel, "act", "power", "")
        mine = {p.value for c in cards for p in view_for(state, c).powers}
        assert {c["value"] for c in got} == mine, ("/act power offers", who, got)
        power = rnd.choice(list(Power))
        got = await who.autocomplete(self.channel, "act", "target", "", power=power.value)
        holding = [c for c in living if power in view_for(state, c).powers]
        expected: set[int] = set()
        if holding and power not in rules_for(state).untargeted_powers:
            at = Instant(to_ms(self.t.env.now()))
            expected = {int(s) for s in valid_targets(state, holding[0], power, at)}
        assert {c["value"] for c in got} == expected, ("/act target offers", who, power, got)
        votes = await who.autocomplete(self.channel, "vote", "target", "")
        if not living:
            assert votes == [], ("/vote offers a list to someone without a vote", who, votes)
        for choice in [*got, *votes]:
            assert not excess(str(choice["name"])), ("a secret in autocomplete", choice)
        self.cap.autocompletes += 3

    async def mod_pending(self, state: GameState) -> None:
        """A moderator who plays asks /mod pending: it names no power holder they may not know."""
        mod = self.mod_player
        assert mod is not None
        cards = state.seats_of(str(mod.id))
        if not cards:
            return  # not in this game: a moderator's view is theirs to have
        known = set(cards)
        for card in cards:
            known |= set(view_for(state, card).teammates)
        result = await self.slash(mod, "mod pending")
        await self.answer(result, own=cards[0])
        for text in answer_texts(result):
            for line in text.split("\n"):
                if line.startswith(PREFIXES["pending_powers"]):
                    named = {int(a or b) for a, b in SEAT.findall(line + " ")}
                    assert named <= {int(s) for s in known}, ("/mod pending names", line)
        self.cap.mod_pendings += 1

    async def answer(self, result: InteractionResult, own: Seat | None = None) -> None:
        states = await self.cap.states()
        state = states[self.game_id]
        self.cap.answer(result, states, own=(state, own) if own is not None else None)

    async def peeks(self, state: GameState) -> None:
        """Someone reads: /role (their own), or /game status, or a stranger's /role."""
        rnd = self.rnd
        seat = Seat(rnd.randint(1, self.n))
        result = await self.slash(self.member(state, seat), "role")
        await self.answer(result, own=seat)
        if rnd.random() < 0.5:
            who = rnd.choice([*self.members, self.t.outside])
            await self.answer(await self.slash(who, "game status"))
        else:
            await self.answer(await self.slash(self.t.outside, "role"))
        await self.autocompletes(state)
        if self.mod_player:
            await self.mod_pending(state)

    async def night(self, state: GameState) -> None:
        rules = rules_for(state)
        for seat in state.alive():
            view = view_for(state, seat)
            powers = [p for p in view.powers if p.value not in ("confess", "veto")]
            if not powers or self.rnd.random() < 0.1:
                continue
            power = self.rnd.choice(powers)
            if self.mod_player and self.rnd.random() < 0.2:  # asked in the middle of the night
                await self.mod_pending(await self.state())
            member = self.member(state, seat)
            cards = state.seats_of(state.seat(seat).player)
            card = {"card": int(seat)} if len(cards) > 1 else {}  # 5.0: the card acting
            targets = valid_targets(state, seat, power)
            use = self.rnd.random() < 0.85
            if use and power in rules.untargeted_powers:  # 天下无贼: on 傻根, no seat
                await self.answer(await self.slash(member, "act", power=power.value, **card))
            elif use and targets:
                target = int(self.rnd.choice(targets))
                opts = {"power": power.value, "target": target, **card}
                await self.answer(await self.slash(member, "act", **opts))
            else:
                await self.answer(await self.slash(member, "pass", power=power.value, **card))

    def pool(self, state: GameState, seat: Seat) -> list[Seat]:
        """Whom `seat` may vote for: its group's candidates (无间道), the run-off's, or anyone."""
        window = state.window
        assert window is not None
        group = next((g for g in rules_for(state).vote_groups(state) if seat in g.voters), None)
        if group is not None:
            return list(group.candidates)
        return list(window.candidates) or list(state.alive())

    async def day(self, state: GameState) -> None:
        window = state.window
        assert window is not None
        if window.chooser is not None:
            member = self.member(state, window.chooser)
            target = int(self.rnd.choice(window.candidates))
            await self.answer(await self.slash(member, "choose", target=target))
            return
        wagons: dict[tuple[Seat, ...], Seat] = {}  # most follow one lead, so the games end
        posted: set[str] = set()
        for seat in state.alive():
            player = state.seat(seat).player
            if player in posted or self.rnd.random() < 0.15:
                continue  # 5.0: a player votes once, with all their living cards
            posted.add(player)
            member = self.member(state, seat)
            pool = self.pool(state, seat)
            wagon = wagons.setdefault(tuple(pool), self.rnd.choice(pool))
            target = wagon if self.rnd.random() < 0.6 else self.rnd.choice(pool)
            if self.rnd.random() < 0.2:
                await self.answer(await self.slash(member, "vote", target=str(int(target))))
                continue
            text = "弃权" if self.rnd.random() < 0.08 else f"投 {int(target)}号"
            with contextlib.suppress(BackendError):  # barred from posting (silenced, out)
                await member.send(self.channel, text)
        await self.t.env.settle()
        if self.rnd.random() < 0.3:  # a stranger tries to vote
            await self.t.outside.send(self.channel, "投 1")

    async def last_words(self, state: GameState) -> None:
        for seat in state.last_words_open:
            member = self.member(state, seat)
            shown = await self.slash(member, "lastwords")
            if shown.modal is not None:
                result = await member.submit_modal(shown, {"words": self.rnd.choice(WORDS)})
                await self.answer(result)

    async def override(self, state: GameState) -> None:
        rnd = self.rnd
        mod = self.t.moderator
        kind = rnd.choice(["extend", "pause", "modkill", "replace", "status"])
        if kind == "extend":
            await self.answer(await self.slash(mod, "mod extend", minutes=rnd.randint(1, 30)))
        elif kind == "pause":
            await self.answer(await self.slash(mod, "mod pause"))
            await self.checkpoint()
            await self.answer(await self.slash(mod, "mod resume"))
        elif kind == "modkill" and len(state.alive()) > 4:
            seat = int(rnd.choice(state.alive()))
            await self.answer(await self.slash(mod, "mod modkill", seat=seat))
        elif kind == "replace" and self.spares:
            seat = int(rnd.choice(state.alive()))
            spare = rnd.choice(self.spares)
            if await self.t.bot.runtime.service.repo.games_of_user(spare.id):
                return
            await self.answer(await self.slash(mod, "mod replace", seat=seat, member=spare))
        else:
            await self.answer(await self.slash(mod, "game status"))

    async def lock(self) -> None:
        await self.checkpoint()
        assert await self.t.run_deadline(), "no deadline fired"
        assert not list(self.t.env.errors)
        await self.checkpoint()

    async def play(self, phases: int) -> GameState:
        await self.start()
        await self.checkpoint()
        for _ in range(phases):
            state = await self.state()
            if state.over:
                break
            await self.peeks(state)
            if self.rnd.random() < 0.25:  # another player closes their DMs, at a random moment
                open_dms = [m for m in self.seated if m.id not in self.blocked]
                if open_dms:
                    self.block(self.rnd.choice(open_dms))
            await self.last_words(state)
            if self.rnd.random() < 0.2:
                await self.override(state)
                state = await self.state()
                if state.over:
                    break
            assert state.window is not None
            if state.window.kind is PhaseKind.NIGHT:
                await self.night(state)
            else:
                await self.day(state)
            await self.lock()
        state = await self.state()
        if not state.over:
            await self.checkpoint()
            await self.answer(await self.slash(self.t.moderator, "mod end", winner="draw"))
        await self.checkpoint()
        result = await self.slash(self.rnd.choice(self.members), "game record")
        assert not result.ephemeral and self.cap.seeds[self.game_id] in answer_texts(result)[0]
        return await self.state()


@pytest_asyncio.fixture
async def table(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> AsyncIterator[Table]:
    caplog.set_level(logging.INFO)
    clock = EnvClock()
    env = BotEnv(make_bot(tmp_path / "g.db", clock, seed=SEED), settle_timeout=SETTLE_SECONDS)
    quick_settle(env)
    clock.bind(env)
    t = build_table(env, 18)
    await env.start()
    try:
        yield t
    finally:
        await env.shutdown()


async def test_whole_bot_games_keep_their_secrets(
    table: Table, caplog: pytest.LogCaptureFixture
) -> None:
    rnd = random.Random(SEED)
    cap = Capture(t=table, caplog=caplog)
    managers = table.guild.create_role("管理", permissions=discord.Permissions(manage_guild=True))
    mod_players = [  # moderators who play: the configured role, and Manage Server
        table.guild.add_member(table.env.create_user("主持玩家"), roles=[table.mod_role]),
        table.guild.add_member(table.env.create_user("管理玩家"), roles=[managers]),
    ]
    await table.env.settle()
    results = []
    for k, (ruleset, n) in enumerate(GAMES, start=1):
        channel = table.guild.create_text_channel(f"game-{k}")
        await table.env.settle()
        mod_player = (
            mod_players[k % 2] if k % 4 < 2 else None
        )  # one holds the role, one Manage Server
        game = Game(t=table, cap=cap, channel=channel, ruleset=ruleset, n=n, rnd=rnd)
        game.mod_player = mod_player
        final = await game.play(phases=8)
        history = [e for e in final.history if isinstance(e, NightRecord | DayRecord)]
        results.append((ruleset, final.result.reason if final.result else None, len(history)))
    await cap.check()
    assert not list(table.env.errors)
    print(
        f"secrets (bot): {len(GAMES)} games {results}; {cap.public} public messages, "
        f"{cap.answers} answers ({cap.own_answers} /role to their owner), {cap.logs} log lines, "
        f"{cap.autocompletes} autocompletes, {cap.mod_pendings} /mod pending by a moderator who "
        f"plays, {cap.thread_refusals} posts refused in a team thread"
    )
    assert cap.public > 100 and cap.answers > 50 and cap.logs > 0
    assert cap.autocompletes > 50 and cap.mod_pendings > 0 and cap.thread_refusals > 0
    assert sum(1 for _, reason, _ in results if reason != "win.moderator") >= 2
    # The checker itself sees a role shown in public.
    killer = render("zh-CN", "role.killer")
    assert count_words(f"3号 玩家3 是{killer}", secret_words("zh-CN"))
    assert excess(f"3号 玩家3 是{killer}")
