"""Secrets at engine scale: a thousand random games a run (every ruleset; random options, powers,
votes, run-offs, last words and moderator overrides) through `engine.game.apply` and
`engine.publish.effects_for`. Every public effect is rendered in zh-CN and en and must not show
a role, a check answer or a night target before the ruleset reveals it, nor the seed before the
end; a power submission makes no public effect at all; and `view_for` gives each seat only its
own, its team's and what was revealed."""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any
from zoneinfo import ZoneInfo

from rbkit import (
    LOCALES,
    RecordingContext,
    allowed_counts,
    count_words,
    examples,
    over,
    secret_words,
)

from bot.records.render import render_public, render_reply, render_vote_channel
from engine.commands import (
    ChooseTied,
    Command,
    EndGame,
    ExtendDeadline,
    GiveLastWords,
    Lock,
    ModKill,
    Pause,
    PostVote,
    ReplacePlayer,
    Resume,
    SetDeadline,
    SubmitPower,
    VoidPost,
)
from engine.effects import (
    Announce,
    ClockPost,
    Effect,
    OverrideLogged,
    ReplyToPost,
    VoteChannelPost,
)
from engine.errors import EngineError, SetupError
from engine.events import Event, GameCreated, GameEnded, NightResolved, PowerSubmitted
from engine.game import decide, evolve, initial_state, new_game, start_events
from engine.model import Camp, Instant, PhaseKind, Power, Seat
from engine.penalties import usable_night_powers
from engine.publish import effects_for
from engine.rulesets import RULESETS, rules_for
from engine.state import DayRecord, GameState, NightRecord
from engine.view import view_for

try:  # a moderator's penalty (newer engines)
    from engine.commands import Penalize
except ImportError:  # pragma: no cover
    Penalize = None  # type: ignore[assignment,misc]

GAMES = 1000
"""Random games a run (`FAGUAN_FUZZ_SCALE` multiplies it)."""

SHANGHAI = ZoneInfo("Asia/Shanghai")
HOUR = 3_600_000
T0 = 1_767_225_600_000  # 2026-01-01T00:00Z
NAME = re.compile(r"«(\d+)»")
SAFE_WORDS = ["遗言", "我没问题", "last words", "😀", "<@1>", "@everyone", "{seat}", "理由"]
"""Text a player or moderator writes (last words, void reasons): never a role name."""


@dataclass
class Stats:
    games: int = 0
    commands: int = 0
    accepted: int = 0
    public: int = 0
    endings: Counter[str] = field(default_factory=Counter)
    kinds: Counter[str] = field(default_factory=Counter)


# -- a random game -------------------------------------------------------------------------------


class Walk:
    """One random game: picks plausible (and some implausible) commands and checks each step."""

    def __init__(self, rnd: random.Random, ruleset: str, stats: Stats) -> None:
        self.rnd = rnd
        self.stats = stats
        rules = RULESETS[ruleset]
        self.n = rnd.randint(rules.min_players, rules.max_players)
        self.players = [f"u{i}" for i in range(1, self.n + 1)]
        self.seed = f"{rnd.getrandbits(128):032x}"
        options: dict[str, Any] = {"tie": rnd.choice(["lots", "revote", "none", "victim_choice"])}
        options["self_vote"] = rnd.random() < 0.8
        if rnd.random() < 0.25:  # a warm-up before night 1: talk, no vote, no power
            options["warmup"] = rnd.choice([1, 30, 600])
        for name, allowed in sorted(rules.option_choices.items()):
            options[name] = rnd.choice(list(allowed))
        self.created = new_game(
            ruleset=ruleset, players=self.players, seed=self.seed, options=options
        )
        self.now = T0
        self.posts = 0
        self.subs = 0
        self.state: GameState | None = None

    # time
    def tick(self) -> Instant:
        self.now += self.rnd.randint(1, 120_000)
        return Instant(self.now)

    def run(self, steps: int) -> None:
        events = start_events(self.created, Instant(T0 + HOUR))
        self.publish(None, events)
        for _ in range(steps):
            state = self.state
            assert state is not None
            if state.over:
                break
            command = self.command(state)
            self.stats.commands += 1
            try:
                new = decide(state, command)
            except EngineError:
                continue  # refused: the engine returned nothing, the state is the same value
            self.stats.accepted += 1
            self.publish(state, new)  # evolves event by event, as `apply` would
            if any(isinstance(e, NightResolved) for e in new) and self.rnd.random() < 0.4:
                self.check_views(self.state)
        assert self.state is not None
        self.check_views(self.state)
        self.stats.endings[self.state.result.reason if self.state.result else "unfinished"] += 1

    # commands
    def alive(self, state: GameState) -> list[Seat]:
        return list(state.alive())

    def command(self, state: GameState) -> Command:
        rnd = self.rnd
        window = state.window
        roll = rnd.random()
        if roll < 0.05:
            return self.override(state)
        if state.last_words_open and roll < 0.15:
            seat = rnd.choice(state.last_words_open)
            return GiveLastWords(
                player=state.seat(seat).player, text=rnd.choice(SAFE_WORDS), at=self.tick()
            )
        if window is None:
            return Lock(at=self.tick())
        if state.paused:
            return Resume(at=self.tick(), by="mod") if rnd.random() < 0.7 else self.lock(state)
        if window.kind is PhaseKind.NIGHT:
            return self.night(state) if rnd.random() < 0.8 else self.lock(state)
        if window.chooser is not None:
            if rnd.random() < 0.6:
                chooser = window.chooser if rnd.random() < 0.8 else rnd.choice(self.alive(state))
                pool = list(window.candidates) if rnd.random() < 0.8 else self.alive(state)
                return ChooseTied(
                    player=state.seat(chooser).player, target=rnd.choice(pool), at=self.tick()
                )
            return self.lock(state)
        return self.day(state) if rnd.random() < 0.88 else self.lock(state)

    def lock(self, state: GameState) -> Command:
        at = max(self.now, state.deadline or self.now)
        self.now = at + 1
        forced = self.rnd.random() < 0.05
        return Lock(
            at=Instant(at),
            next_deadline=Instant(at + HOUR),
            runoff_deadline=Instant(at + HOUR // 2),
            forced=forced,
            by="mod" if forced else "",
        )

    def actor_and_power(self, state: GameState, kinds: set[PhaseKind]) -> tuple[str, Power, Seat]:
        """A seat with a power it may use now (mostly), or something random."""
        rnd = self.rnd
        if rnd.random() < 0.85:
            alive = self.alive(state)
            rules = rules_for(state)
            for seat in rnd.sample(alive, min(4, len(alive))):
                if PhaseKind.NIGHT in kinds:
                    powers = usable_night_powers(state, rules, state.seat(seat))
                else:
                    powers = view_for(state, seat).powers
                if powers:
                    return state.seat(seat).player, rnd.choice(powers), seat
        seat = Seat(rnd.randint(1, self.n))
        who = rnd.choice([state.seat(seat).player, "stranger"])
        return who, rnd.choice(list(Power)), seat

    def night(self, state: GameState) -> Command:
        rnd = self.rnd
        player, power, seat = self.actor_and_power(state, {PhaseKind.NIGHT})
        passed = rnd.random() < 0.1
        target = None if passed else Seat(rnd.choice([*self.alive(state), 0, self.n + 1]))
        return SubmitPower(
            player=player, power=power, target=target, passed=passed, at=self.tick(), seat=seat
        ) if _has_seat_field() else SubmitPower(
            player=player, power=power, target=target, passed=passed, at=self.tick()
        )  # fmt: skip

    def day(self, state: GameState) -> Command:
        rnd = self.rnd
        window = state.window
        assert window is not None
        if rnd.random() < 0.06:
            player, power, _ = self.actor_and_power(state, {PhaseKind.DAY})
            target = Seat(rnd.choice(self.alive(state)))
            return SubmitPower(player=player, power=power, target=target, at=self.tick())
        self.posts += 1
        voters = (
            self.alive(state) if rnd.random() < 0.9 else [Seat(s) for s in range(1, self.n + 1)]
        )
        voter = rnd.choice(voters)
        player = state.seat(voter).player if rnd.random() < 0.97 else "stranger"
        pool = list(window.candidates) or self.alive(state)
        abstain = rnd.random() < 0.1
        target = None if abstain else Seat(rnd.choice([*pool, *pool, *pool, 0, self.n + 1]))
        at = self.tick() if rnd.random() < 0.97 else Instant((state.deadline or self.now) + 5)
        return PostVote(
            player=player, post_id=str(self.posts), target=target, abstain=abstain, at=at,
            raw="" if target is not None or abstain else rnd.choice(SAFE_WORDS),
        )  # fmt: skip

    def override(self, state: GameState) -> Command:
        rnd = self.rnd
        seat = Seat(rnd.randint(0, self.n + 1))
        kind = rnd.choice(
            ["extend", "set", "pause", "resume", "replace", "modkill", "void", "penalty", "end"]
        )
        self.stats.kinds[kind] += 1
        match kind:
            case "extend":
                return ExtendDeadline(delta_ms=rnd.randint(-2, 4) * HOUR // 2, by="mod")
            case "set":
                return SetDeadline(deadline=Instant(self.now + rnd.randint(1, 48) * HOUR), by="mod")
            case "pause":
                return Pause(at=self.tick(), by="mod")
            case "resume":
                return Resume(at=self.tick(), by="mod")
            case "replace":
                self.subs += 1
                return ReplacePlayer(seat=seat, new_player=f"sub{self.subs}", by="mod")
            case "modkill":
                return ModKill(seat=seat, by="mod")
            case "void":
                post = str(rnd.randint(max(1, self.posts - 5), self.posts + 1))
                return VoidPost(post_id=post, reason=rnd.choice(SAFE_WORDS), by="mod")
            case "penalty" if Penalize is not None:
                return Penalize(seat=seat, reason=rnd.choice(SAFE_WORDS), by="mod")
            case _:
                if rnd.random() < 0.2:
                    return EndGame(winner=rnd.choice(list(Camp)), by="mod")
                return Lock(at=self.tick(), forced=True, by="mod")

    # the checks
    def publish(self, before: GameState | None, events: list[Event]) -> None:
        """Effects event by event; every public one rendered and checked."""
        state = before
        for event in events:
            effects = effects_for(state, [event])
            after = initial_state(event) if isinstance(event, GameCreated) else evolve(state, event)  # type: ignore[arg-type]
            if isinstance(event, PowerSubmitted):
                assert not [e for e in effects if _public(e)], (event, effects)
            for effect in effects:
                if not isinstance(event, GameEnded):
                    assert self.seed not in repr(effect), ("the seed before the end", effect)
                if isinstance(effect, OverrideLogged):
                    keys = {k for k, _ in effect.params}
                    assert not keys & {"role", "roles", "result", "seed"}, effect
                if _public(effect):
                    self.stats.public += 1
                    self.check_public(effect, event, after)
            state = after
        self.state = state

    def check_public(self, effect: Effect, event: Event, after: GameState) -> None:
        key = getattr(effect, "key", None)
        for locale in LOCALES:
            ctx = RecordingContext(
                locale=locale,
                timezone=SHANGHAI,
                names={s: f"«{s}»" for s in range(1, self.n + 1)},
            )
            if isinstance(effect, ReplyToPost):
                text = render_reply(ctx, effect)
                if text is None:
                    continue
            elif isinstance(effect, VoteChannelPost):
                text = render_vote_channel(ctx, effect)
            else:
                assert isinstance(effect, Announce | ClockPost)
                text = render_public(ctx, effect)
            if key == "game.over":
                assert isinstance(event, GameEnded) and self.seed in text
                continue
            assert self.seed not in text, ("the seed before the end", text)
            if key == "reveal":  # the ruleset's own reveal: only of players leaving now
                shown = {int(s) for s in NAME.findall(text)}
                assert shown and all(not after.seat(Seat(s)).alive for s in shown), text
                continue
            leaked = over(count_words(text, secret_words(locale)), allowed_counts(ctx.used, locale))
            assert not leaked, (locale, key, text, leaked)
            if isinstance(event, NightResolved):
                record = event.record
                told = {*record.left, *record.last_words, *event.last_words_kept}
                told |= set(getattr(record, "silenced", ()))  # 森林老人's silence is public
                named = {Seat(int(s)) for s in NAME.findall(text)}
                assert named <= told, ("a night target that did not leave", text)

    def check_views(self, state: GameState) -> None:
        rules = rules_for(state)
        revealed: dict[Seat, str] = {}
        checks: list[tuple[int, Any]] = []
        for entry in state.history:
            if isinstance(entry, NightRecord | DayRecord):
                revealed.update(dict(entry.revealed))
            if isinstance(entry, NightRecord):
                checks += [(entry.number, c) for c in entry.checks]
        public = view_for(state, None)
        assert (public.seed is not None) == state.over
        if not state.over:
            for info in public.seats:
                assert info.role is None or info.seat in revealed, ("public", info)
            assert not public.checks and not public.submissions
        for me in state.seats:
            view = view_for(state, me.seat)
            assert (view.seed is not None) == state.over
            team = rules.team_of(me)
            if state.over:
                continue
            for info in view.seats:
                other = state.seat(info.seat)
                if info.role is None or other.player == me.player:
                    continue
                if info.role is not other.role and info.role is not other.original_role:
                    continue  # a role the ruleset shows in place of the true one (not a leak)
                mate = team is not None and rules.team_of(other) == team
                ever = any(  # known by rule as dealt or now (a role that turned is not forgotten)
                    rules.knows_role(replace(me, role=mine), replace(other, role=theirs))
                    for mine in (me.original_role, me.role)
                    for theirs in (other.original_role, other.role)
                )
                assert mate or ever or info.seat in revealed, (
                    f"seat {me.seat} ({me.role}) sees seat {info.seat}'s role {other.role}"
                )
            for night, target, result in view.checks:
                assert any(
                    n == night and c.target == target and c.result == result
                    and (me.seat in c.by or (c.team is not None and c.team == team)
                         or any(state.seat(b).player == me.player for b in c.by))
                    for n, c in checks
                ), (me.seat, night, target)  # fmt: skip
            for seat, _power, _target in view.submissions:  # own, or a teammate's
                other = state.seat(seat)
                mate = team is not None and rules.team_of(other) == team
                assert other.player == me.player or mate, (me.seat, "sees the submission of", seat)


assert not any(count_words(w, secret_words(loc)) for w in SAFE_WORDS for loc in LOCALES)


def _public(effect: Effect) -> bool:
    return isinstance(effect, Announce | ClockPost | ReplyToPost | VoteChannelPost)


def _has_seat_field() -> bool:
    return "seat" in SubmitPower.__dataclass_fields__


def test_a_thousand_random_games_keep_their_secrets() -> None:
    stats = Stats()
    rnd = random.Random(20260101)
    rulesets = sorted(RULESETS)
    for i in range(examples(GAMES)):
        try:
            walk = Walk(rnd, rulesets[i % len(rulesets)], stats)
        except SetupError:
            continue  # a composition the random options cannot deal
        walk.run(steps=rnd.choice([60, 150, 400]))
        stats.games += 1
    print(
        f"secrets (engine): {stats.games} games, {stats.commands} commands "
        f"({stats.accepted} accepted), {stats.public} public effects rendered twice; "
        f"endings {dict(stats.endings)}; overrides tried {dict(stats.kinds)}"
    )
    assert stats.games >= examples(GAMES) * 0.9
    assert sum(n for reason, n in stats.endings.items() if reason != "unfinished") > stats.games / 3
