"""Commands: what the shell asks of the engine. Each carries the time and ids the shell saw."""

from __future__ import annotations

from dataclasses import dataclass

from engine.model import Camp, Instant, Power, Seat, Team


@dataclass(frozen=True, kw_only=True, slots=True)
class SubmitPower:
    """A player uses (or, with `target=None` and `passed=True`, explicitly passes) a power."""

    player: str
    power: Power
    target: Seat | None = None
    passed: bool = False
    at: Instant | None = None
    seat: Seat | None = None
    """The seat (card) acting, for a player who holds several (5.0 双身份); by default their first
    seat in the game that holds the power."""
    night: int | None = None
    """The night a power menu was sent for (None: whatever window is open, as /act): a menu
    stays in the DM after its night, and a choice made in it later acts in no other window."""
    next_deadline: Instant | None = None
    """The deadline of the window that opens if this power closes the one open now (认匪 ends
    the day), computed by the bot from the game's schedule as a lock's is (None: no timer)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class PostVote:
    """A public vote post: for `target`, or an abstention; `target=None, abstain=False` is a post
    whose target could not be read (`raw` says what was written)."""

    player: str
    post_id: str
    target: Seat | None = None
    abstain: bool = False
    raw: str = ""
    at: Instant | None = None
    edited_unseen: bool = False
    """The post was edited before the judge could read it (the bot was down): its original
    content is unknown, so it cannot count."""
    opened_for: int | None = None
    """The window (`GameState.window_index`) the vote channel had last been opened for when the
    post was made, as the platform knows it (0: made before the channel's last opening; None:
    not known). In a run-off (PK), a post made before the channel opened for it does not count:
    the channel stays open from the day's deadline until its 看表帖 shuts it, and a post made
    after the deadline that is read only once the run-off is recorded would otherwise count
    there (read before the lock, it is void as late): what counts never depends on when a post
    arrives."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Lock:
    """The current window's deadline is reached (or a moderator advances): resolve it.

    `at` is the deadline itself: anything stamped later is void. `next_deadline` is the deadline
    the shell computed for the window that opens next, if any. `post_id` is the 看表帖's id.
    """

    at: Instant | None = None
    next_deadline: Instant | None = None
    runoff_deadline: Instant | None = None
    """The deadline for a run-off (PK) or victim's-choice window, if the lock opens one."""
    post_id: str | None = None
    forced: bool = False
    by: str = ""
    """A moderator who advanced the lock (`forced`): the advance is then a recorded override."""
    window: int | None = None
    """The window this lock closes (`GameState.window_index` when it was issued); a lock naming a
    window that is no longer open is refused (`phase.window_locked`), so a second lock of one
    window — the deadline job and a moderator, a retried job — never locks the next one. None:
    the open window (replay files written before the key existed)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class GiveLastWords:
    """A player entitled to last words (遗言) gives them."""

    player: str
    text: str
    at: Instant | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class ChooseTied:
    """Under `victim_choice`, the previous night's victim picks one of the tied players."""

    player: str
    target: Seat
    at: Instant | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class SetDeadline:
    """Moderator: the current window ends at `deadline`; one earlier than `at` (now) is refused."""

    deadline: Instant
    by: str = ""
    at: Instant | None = None
    window: int | None = None
    """The window the command was issued against (`GameState.window_index`); None: the open one."""
    seen: Instant | None = None
    """The deadline in force when the moderator gave the command: refused if it has been moved
    since (another moderator's at the same moment, `mod.deadline_moved`). None: not checked."""
    saw_none: bool = False
    """The moderator saw no deadline in force (the game paused, or none set): refused if one
    is now (a resume or another moderator's command since, `mod.deadline_moved`)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ExtendDeadline:
    """Moderator: move the current deadline by `delta_ms` (negative shortens); a new deadline
    earlier than `at` (now) is refused."""

    delta_ms: int
    by: str = ""
    at: Instant | None = None
    window: int | None = None
    """The window the command was issued against (`GameState.window_index`); None: the open one."""
    seen: Instant | None = None
    """The deadline the moderator moved, as it was when they gave the command: refused if it has
    been moved since (two moderators' `extend` at the same moment move it once,
    `mod.deadline_moved`). None: not checked."""
    saw_none: bool = False
    """The moderator saw no deadline in force (the game paused, or none set): refused if one
    is now (a resume or another moderator's command since, `mod.deadline_moved`)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Pause:
    """Moderator: freeze the clock; the remaining time is kept."""

    at: Instant
    by: str = ""
    window: int | None = None
    """The window the command was issued against (`GameState.window_index`); None: the open one."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Resume:
    """Moderator: restart the clock with the remaining time kept at the pause."""

    at: Instant
    by: str = ""
    window: int | None = None
    """The window the command was issued against (`GameState.window_index`); None: the open one."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ReplacePlayer:
    """Moderator: a substitute (替补) takes the seat, role and state of `seat`."""

    seat: Seat
    new_player: str
    by: str = ""
    at: Instant | None = None
    reason: str = ""
    """Why, as the moderator said it (announced and logged; optional)."""
    player: str | None = None
    """The holder the moderator acted on (a form opened on them): refused if the seat is
    someone else's by the time it arrives. None: whoever holds the seat."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ModKill:
    """Moderator: remove a player for inactivity; last words as the ruleset says."""

    seat: Seat
    by: str = ""
    at: Instant | None = None
    reason: str = ""
    """Why, as the moderator said it (announced and logged; optional)."""
    player: str | None = None
    """The holder the moderator acted on (a form opened on them): refused if the seat is
    someone else's by the time it arrives. None: whoever holds the seat."""


@dataclass(frozen=True, kw_only=True, slots=True)
class VoidPost:
    """Moderator: a vote post of the open window does not count."""

    post_id: str
    reason: str
    by: str = ""
    at: Instant | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class EndGame:
    """Moderator: declare the game over with a winner (or a draw)."""

    winner: Camp
    by: str = ""
    at: Instant | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Penalize:
    """Moderator: a ruleset penalty as data: the `team`'s (or one `seat`'s) night power — every
    one when `power` is None — does not act on the next night (e.g. 4.0 独杀's 诈尸 penalty)."""

    team: Team | None = None
    seat: Seat | None = None
    power: Power | None = None
    reason: str = ""
    by: str = ""
    at: Instant | None = None


Command = (
    SubmitPower
    | PostVote
    | Lock
    | GiveLastWords
    | ChooseTied
    | SetDeadline
    | ExtendDeadline
    | Pause
    | Resume
    | ReplacePlayer
    | ModKill
    | VoidPost
    | EndGame
    | Penalize
)
