"""Departures: who leaves in a resolution, why, and what their leaving brings about.

A resolution (a night, a vote, a confession, a last act) first names who leaves and for what
causes (`Causes`: the powers that killed them, `needle`, `vote`, …). `settle` then asks the
ruleset what that brings about (`Ruleset.on_leaving`: others taken along, roles turned), again
for those taken along, until nobody new leaves. A moderator's removal settles nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engine.model import Role, Seat
from engine.rulesets import Ruleset
from engine.rulesets.base import WITH, Causes
from engine.state import Action, GameState


def settle(
    state: GameState,
    rules: Ruleset,
    first: Mapping[Seat, Causes],
    tonight: Sequence[Action] = (),
) -> tuple[dict[Seat, Causes], dict[Seat, Role]]:
    """Everyone who leaves (with their causes) and the roles that turn, from `first`;
    `tonight`: the night's actions in effect, during a night's resolution."""
    leaving = dict(first)
    turned: dict[Seat, Role] = {}
    new = dict(first)
    while new:
        after = rules.on_leaving(state, new, tonight)
        turned.update(after.roles)
        new = {
            s: frozenset({WITH}) for s in after.leave if s not in leaving and state.seat(s).alive
        }
        leaving.update(new)
    return leaving, turned
