"""Events: the facts a game is made of. `game.evolve` folds them; storage appends them.

Decisions (who dies, what a lot drew) are made in `game.decide` and carried by the events, so
evolving is plain bookkeeping and replaying the events rebuilds the state exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.model import Instant, Power, Role, Seat
from engine.state import (
    DayRecord,
    LastActRecord,
    LotDraw,
    NightRecord,
    Options,
    OverrideRecord,
    Result,
    Submission,
    Suspension,
    VotePost,
    Window,
)


@dataclass(frozen=True, kw_only=True, slots=True)
class GameCreated:
    """Seats, the deal and the commitment: the first event of every game."""

    ruleset: str
    players: tuple[str, ...]
    roles: tuple[Role, ...]
    dealt: tuple[Seat, ...]
    seed: str
    commitment: str
    options: Options


@dataclass(frozen=True, kw_only=True, slots=True)
class WindowOpened:
    """A window opens (night powers, a day vote, a run-off, a victim's choice)."""

    window: Window
    deadline: Instant | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class PowerSubmitted:
    """A night submission was accepted (it replaces the seat's earlier one for that power)."""

    submission: Submission


@dataclass(frozen=True, kw_only=True, slots=True)
class VotePosted:
    """A post was seen in an open vote window (valid or void, with the reason)."""

    post: VotePost


@dataclass(frozen=True, kw_only=True, slots=True)
class SeatChange:
    """What a resolution does to one seat."""

    seat: Seat
    dies: bool = False
    needle: int | None = None
    """The night number of a new empty needle."""
    role: Role | None = None
    """The new current role, when a spent power turns it."""
    spent: Power | None = None
    wound: bool = False
    """The seat survived an attack by an extra life (`SeatState.wounds` + 1)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class NightResolved:
    """A night's outcome; `changes` apply to the seats, `record` is what the record shows."""

    record: NightRecord
    changes: tuple[SeatChange, ...]
    lots: tuple[LotDraw, ...] = ()
    leavers_counted: int = 0
    last_words_kept: tuple[Seat, ...] = ()
    """Earlier leavers whose last words stay open (policy window `next_death`, nobody left)."""
    last_acts: tuple[tuple[Seat, Power], ...] = ()
    """Leavers who may use a power on death until the next lock (earlier ones lapse)."""
    counters: tuple[tuple[str, int], ...] = ()
    """Named counts the night changed (their new values)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class DayResolved:
    """A vote window's outcome (or a confession's)."""

    record: DayRecord
    changes: tuple[SeatChange, ...]
    lots: tuple[LotDraw, ...] = ()
    leavers_counted: int = 0
    last_words_kept: tuple[Seat, ...] = ()
    """Earlier leavers whose last words stay open (policy window `next_death`, nobody left)."""
    last_acts: tuple[tuple[Seat, Power], ...] = ()
    """Leavers who may use a power on death until the next lock (earlier ones lapse)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class LastActTaken:
    """A player out of the game used (or passed) a power on death; it acted at once."""

    record: LastActRecord
    changes: tuple[SeatChange, ...]
    leavers_counted: int
    last_acts: tuple[tuple[Seat, Power], ...] = ()
    """Players it took out who may use a power on death in turn."""


@dataclass(frozen=True, kw_only=True, slots=True)
class LastActsLapsed:
    """A last-act window closed: the last acts not used are gone."""


@dataclass(frozen=True, kw_only=True, slots=True)
class LastWordsGiven:
    """A player gave their last words (遗言)."""

    seat: Seat
    text: str
    closes_last_act: bool = False
    """Speaking closes the player's power on death (狙击手: shoot or speak)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ChoiceMade:
    """Under `victim_choice`, the previous night's victim picked one of the tied players."""

    seat: Seat
    target: Seat


@dataclass(frozen=True, kw_only=True, slots=True)
class DeadlineSet:
    """The current window's deadline changed (None: no deadline)."""

    deadline: Instant | None
    record: OverrideRecord | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Paused:
    """The clock stopped with `remaining_ms` left."""

    remaining_ms: int
    record: OverrideRecord


@dataclass(frozen=True, kw_only=True, slots=True)
class Resumed:
    """The clock restarted; the window now ends at `deadline`."""

    deadline: Instant
    record: OverrideRecord


@dataclass(frozen=True, kw_only=True, slots=True)
class PlayerReplaced:
    """A substitute took a seat."""

    seat: Seat
    new_player: str
    record: OverrideRecord


@dataclass(frozen=True, kw_only=True, slots=True)
class PlayerRemoved:
    """A moderator removed a player (modkill)."""

    seat: Seat
    record: OverrideRecord
    leavers_counted: int
    also: tuple[Seat, ...] = ()
    """The player's other seats still in the game, removed with it (several cards)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class PostVoided:
    """A moderator voided a vote post."""

    post_id: str
    reason: str
    record: OverrideRecord


@dataclass(frozen=True, kw_only=True, slots=True)
class GameEnded:
    """The game is over."""

    result: Result
    record: OverrideRecord | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class PowerSuspended:
    """A moderator's penalty: a night power does not act on a coming night."""

    suspension: Suspension
    record: OverrideRecord


Event = (
    GameCreated
    | WindowOpened
    | PowerSubmitted
    | VotePosted
    | NightResolved
    | DayResolved
    | LastWordsGiven
    | ChoiceMade
    | DeadlineSet
    | Paused
    | Resumed
    | PlayerReplaced
    | PlayerRemoved
    | PostVoided
    | GameEnded
    | PowerSuspended
    | LastActTaken
    | LastActsLapsed
)
