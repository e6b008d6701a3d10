"""Who gets last words (遗言) when players leave (docs/rules.md §1.8)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from engine.model import PhaseId, Seat
from engine.rulesets import Ruleset
from engine.rulesets.base import Causes
from engine.state import GameState


def entitled(
    state: GameState,
    rules: Ruleset,
    leavers: Sequence[Seat],
    phase: PhaseId,
    causes: Mapping[Seat, Causes] | None = None,
) -> tuple[tuple[Seat, ...], int]:
    """The leavers (in seat order) who get last words, and the new count of used slots."""
    why = causes or {}
    policy = rules.last_words(len(state.seats), Counter(s.original_role for s in state.seats))
    counted = state.leavers_counted
    ordered = players_leaving(state, leavers)
    if not ordered:
        return (), counted
    if policy.not_if_multiple and len(ordered) >= 2:
        return (), counted
    ordered = tuple(
        s
        for s in ordered
        if rules.has_last_words(state, state.seat(s), phase, why.get(s, frozenset()))
    )
    if not ordered:
        return (), counted
    if policy.only is not None and phase.kind is not policy.only:
        return (), counted + len(ordered)
    match policy.kind:
        case "all":
            return ordered, counted + len(ordered)
        case "none":
            return (), counted + len(ordered)
        case "first_n":
            slots = max(0, policy.n - counted)
            return ordered[:slots], counted + len(ordered)
        case "until":
            assert policy.until is not None
            return (ordered if phase <= policy.until else ()), counted + len(ordered)


def players_leaving(state: GameState, leavers: Sequence[Seat]) -> tuple[Seat, ...]:
    """The leavers that take a player out of the game, in seat order: a player holding several
    seats leaves with the last of them (named by their lowest seat leaving now)."""
    gone = set(leavers)
    out: list[Seat] = []
    players: set[str] = set()
    for seat in sorted(gone):
        player = state.seat(seat).player
        staying = [s for s in state.seats_of(player) if s not in gone and state.seat(s).alive]
        if player not in players and not staying:
            players.add(player)
            out.append(seat)
    return tuple(out)


def kept_open(state: GameState, rules: Ruleset, leavers: Sequence[Seat]) -> tuple[Seat, ...]:
    """The open last words that a resolution with these leavers does not close: all of them when
    nobody leaves and the policy keeps last words open until the next death list."""
    policy = rules.last_words(len(state.seats), Counter(s.original_role for s in state.seats))
    if policy.window == "next_death" and not leavers:
        return state.last_words_open
    return ()
