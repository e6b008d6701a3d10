"""The real engine as a crash-test scenario: the 2.0 game of rules/examples/v2_whole_game.toml.

Storage sees only the engine's JSON (``engine.codec``); this adapter is the one place that folds
and decides with the engine, as the shell will.
"""

from __future__ import annotations

from typing import Any

from bot.runtime.snapshots import SNAPSHOTS
from bot.store.repository import SnapshotCodec
from engine import codec
from engine.commands import Command, Lock, PostVote, SubmitPower
from engine.errors import EngineError
from engine.events import GameEnded
from engine.game import decide, new_game, replay_events, start_events
from engine.model import Power, Seat
from engine.publish import effects_for
from engine.state import GameState
from tests.store.crashkit import Decision, JsonDict

PLAYERS = ("甲", "乙", "丙", "丁", "戊", "己", "庚", "辛")
ROLES = {
    "甲": "killer",
    "乙": "killer",
    "丙": "police",
    "丁": "police",
    "戊": "civilian",
    "己": "civilian",
    "庚": "civilian",
    "辛": "civilian",
}
SEAT = {name: Seat(i + 1) for i, name in enumerate(PLAYERS)}


def _power(by: str, power: Power, target: str) -> SubmitPower:
    return SubmitPower(player=by, power=power, target=SEAT[target])


def _vote(message_id: int, by: str, target: str | None) -> PostVote:
    seat = SEAT[target] if target is not None else None
    return PostVote(player=by, post_id=str(message_id), target=seat, abstain=target is None)


def _script() -> list[tuple[int, Command]]:
    steps: list[tuple[int, Any]] = []
    message_id = 2000

    def add(make: Any) -> None:
        nonlocal message_id
        message_id += 1
        steps.append((message_id, make(message_id)))

    add(lambda _: _power("甲", Power.KILL, "戊"))
    add(lambda _: _power("乙", Power.KILL, "戊"))
    add(lambda _: _power("丙", Power.CHECK, "乙"))
    add(lambda _: _power("戊", Power.KILL, "甲"))  # refused: a civilian has no kill
    add(lambda _: Lock())
    for by, target in [("丙", "乙"), ("丁", "乙"), ("己", "乙"), ("庚", "甲"), ("辛", "乙")]:
        add(lambda m, by=by, target=target: _vote(m, by, target))
    steps.append(steps[-2])  # Discord redelivers a vote post: a no-op
    for by, target in [("甲", "丙"), ("乙", "丙"), ("庚", "乙")]:
        add(lambda m, by=by, target=target: _vote(m, by, target))
    add(lambda _: Lock())
    add(lambda _: _power("甲", Power.KILL, "丁"))
    add(lambda _: _power("丙", Power.CHECK, "甲"))
    add(lambda _: Lock())
    for by, target in [("丙", "甲"), ("己", "甲"), ("庚", "甲"), ("甲", "丙"), ("辛", None)]:
        add(lambda m, by=by, target=target: _vote(m, by, target))
    add(lambda _: Lock())
    return steps


class EngineGame:
    """A whole v2 game played through the engine: creation, nights, votes, the end."""

    name = "v2"
    players = PLAYERS
    snapshots: SnapshotCodec[Any] | None = None

    def start(self) -> Decision:
        created = new_game(ruleset="v2", players=list(PLAYERS), seed="s", roles=ROLES)
        events = start_events(created)
        return Decision(
            events=[codec.dump(e) for e in events],
            effects=[codec.dump(e) for e in effects_for(None, events)],
            outcome={"ok": True},
        )

    def steps(self) -> list[tuple[int, Any]]:
        return _script()

    def fold(self, events: list[JsonDict]) -> GameState:
        return replay_events(codec.load(e) for e in events)

    def decide(self, state: GameState, command: Any) -> Decision:
        try:
            events = decide(state, command)
        except EngineError as error:
            reply = {"type": "Reply", "key": error.key}
            return Decision([], [reply], {"rejected": error.key})
        return Decision(
            events=[codec.dump(e) for e in events],
            effects=[codec.dump(e) for e in effects_for(state, events)],
            outcome={"ok": True},
            finish=any(isinstance(e, GameEnded) for e in events),
        )


class SnapshottedEngineGame(EngineGame):
    """The same game, its state stored with the bot's own snapshot codec after every input."""

    name = "v2+snapshots"
    snapshots = SNAPSHOTS
