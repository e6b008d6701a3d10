"""Plausible games for property tests: each step picks a command a player or moderator could
really give in the state reached (a living seat's own power on a living seat, a vote in a vote
window, the chooser's pick, a last act, last words, a lock, now and then an override), so games
go deep — silences, run-offs, victims' choices, last-act windows, the end — where commands drawn
blind are nearly all refused."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from engine.commands import (
    ChooseTied,
    Command,
    EndGame,
    GiveLastWords,
    Lock,
    ModKill,
    Pause,
    PostVote,
    ReplacePlayer,
    Resume,
    SubmitPower,
)
from engine.errors import EngineError, SetupError
from engine.events import Event
from engine.game import apply, new_game, replay_events, start_events
from engine.model import Camp, Instant, PhaseKind
from engine.rulesets import RULESETS, rules_for
from engine.state import GameState

TIES = ("lots", "revote", "none", "victim_choice")


@dataclass(frozen=True, slots=True)
class Step:
    """One accepted command: the state before it, its events, and the state after."""

    before: GameState
    events: list[Event]
    after: GameState


def start(rnd: random.Random) -> tuple[GameState, list[Event]] | None:
    """A new game of a random ruleset, size and options (None: options it refuses)."""
    ruleset = rnd.choice(sorted(RULESETS))
    rules = RULESETS[ruleset]
    n = rnd.randint(rules.min_players, min(rules.max_players, rules.min_players + 6))
    options: dict[str, object] = {"tie": rnd.choice(TIES)}
    if rnd.random() < 0.2:
        options["warmup"] = 30
    for name, allowed in sorted(rules.option_choices.items()):
        options[name] = rnd.choice(list(allowed))
    try:
        created = new_game(
            ruleset=ruleset,
            players=[f"p{i}" for i in range(1, n + 1)],
            seed=str(rnd.getrandbits(32)),
            options=options,
        )
    except SetupError:
        return None
    events = start_events(created)
    return replay_events(events), events


def _commands(state: GameState, rnd: random.Random, post: Iterator[int]) -> list[Command]:
    """Candidate commands for this state, most of them acceptable."""
    window = state.window
    if window is None or state.over:
        return []
    rules = rules_for(state)
    living = list(state.alive())
    out: list[Command] = [Lock()] * 3
    for seat, power in state.last_acts_open:
        target = rnd.choice(living) if living else None
        player = state.seat(seat).player
        out.append(SubmitPower(player=player, power=power, target=target, passed=target is None))
    for seat in state.last_words_open:
        out.append(GiveLastWords(player=state.seat(seat).player, text="遗言"))
    for seat in living:
        me = state.seat(seat)
        if window.kind is PhaseKind.NIGHT and not window.last_act:
            for power in rules.night_powers(state, me):
                target = rnd.choice(living)
                out.append(SubmitPower(player=me.player, power=power, target=target, seat=seat))
        if window.kind is PhaseKind.DAY and not window.last_act:
            for power in rules.day_powers(state, me):
                target = rnd.choice(living)
                out.append(SubmitPower(player=me.player, power=power, target=target, seat=seat))
            if window.chooser is None:
                pool = list(window.candidates) or living
                out.append(
                    PostVote(
                        player=me.player,
                        post_id=str(next(post)),
                        target=rnd.choice(pool),
                        abstain=False,
                    )
                )
    if window.chooser is not None and window.candidates:
        chooser = state.seat(window.chooser).player
        out.append(ChooseTied(player=chooser, target=rnd.choice(window.candidates)))
    rare: list[Callable[[], Command]] = [
        lambda: ModKill(seat=rnd.choice(living)),
        lambda: ReplacePlayer(seat=rnd.choice(living), new_player=f"sub{next(post)}"),
        lambda: Lock(forced=True),
        lambda: Pause(at=Instant(1)),
        lambda: Resume(at=Instant(2)),
        lambda: EndGame(winner=rnd.choice(list(Camp))),
    ]
    if living and rnd.random() < 0.08:
        out.append(rnd.choice(rare[:-1] if rnd.random() < 0.9 else rare)())
    return out


def play(rnd: random.Random, steps: int = 200) -> tuple[list[Event], list[Step]] | None:
    """A game played by plausible commands until it ends or `steps` run out: its opening events
    and every accepted step (None: the options drawn were refused)."""
    started = start(rnd)
    if started is None:
        return None
    state, opening = started
    posts = iter(range(1, 1_000_000))
    played: list[Step] = []
    for _ in range(steps):
        candidates = _commands(state, rnd, posts)
        if not candidates:
            break
        try:
            after, events = apply(state, rnd.choice(candidates))
        except EngineError:
            continue
        played.append(Step(before=state, events=events, after=after))
        state = after
    return opening, played


def steps_of(seed: int, games: int, steps: int = 150) -> list[Step]:
    """Every accepted step of up to `games` games played from `seed` (games whose options were
    refused are skipped)."""
    rnd = random.Random(seed)
    out: list[Step] = []
    for _ in range(games):
        played = play(rnd, steps=steps)
        if played is not None:
            out += played[1]
    return out
