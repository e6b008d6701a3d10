"""A night action: one power that resolves tonight, after the teams' choices are made.

Built by `engine.night.gather_actions` from the submissions; a ruleset may rewrite the list
before resolution (`Ruleset.actions_in_effect`: 花蝴蝶's hug voids what is aimed at the player it
covers and shares with them what is aimed at itself).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.model import Power, Seat, Team


@dataclass(frozen=True, kw_only=True)
class Action:
    """A power that will resolve tonight: who acted (a team acts as its members) and on whom."""

    power: Power
    actors: tuple[Seat, ...]
    target: Seat
    team: Team | None = None
    """The team that acted, for a team power used by its members."""
    void: bool = False
    """The action acts on nobody (its target is covered); a void check is answered `none`."""
