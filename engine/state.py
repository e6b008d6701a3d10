"""The state of one game: an immutable value rebuilt by folding its events (see `game.evolve`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any, Self, TypeVar, overload

from engine.model import (
    Camp,
    CheckResult,
    Instant,
    PhaseId,
    PhaseKind,
    Power,
    Role,
    Seat,
    Team,
    TiePolicy,
)

T = TypeVar("T")


@dataclass(frozen=True, kw_only=True, slots=True)
class Options:
    """Per-game options (docs/rules.md §1.2; docs/replay.md)."""

    tie: TiePolicy = TiePolicy.LOTS
    self_vote: bool = True
    composition: int = 1
    warmup: int = 0
    """Minutes of warm-up (游戏热身) between the deal and night 1; 0: none (the default). The
    engine only opens the window; its length is the shell's (the deadline it sets)."""
    extras: tuple[tuple[str, str], ...] = ()
    """The ruleset's own options in force (`Ruleset.option_choices`), by name, defaults filled."""


@dataclass(frozen=True, kw_only=True, slots=True)
class SeatState:
    """One seat: who sits there, their role now and at the deal, and what happened to them."""

    seat: Seat
    player: str
    original_role: Role
    role: Role
    alive: bool = True
    spent: frozenset[Power] = frozenset()
    needles: tuple[int, ...] = ()
    """Nights on which this seat received an empty needle (空针)."""
    wounds: int = 0
    """Attacks survived by an extra life (警长's first hit by the killers)."""
    former_players: tuple[str, ...] = ()
    """Players replaced in this seat (替补), oldest first."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Submission:
    """A night power submission; a later one for the same seat and power replaces it."""

    seat: Seat
    power: Power
    target: Seat | None
    """None means an explicit pass (不行使), unless `untargeted`."""
    at: Instant | None = None
    untargeted: bool = False
    """A power used without a seat as target (天下无贼: guarding or robbing the virtual 傻根)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Action:
    """A power that resolves tonight: who acted (a team acts as its members) and on whom.

    Built by `engine.night.gather_actions` from the submissions; a ruleset may rewrite the list
    before resolution (`Ruleset.actions_in_effect`)."""

    power: Power
    actors: tuple[Seat, ...]
    target: Seat | None
    """None for a power used without a seat as target (on a virtual player)."""
    team: Team | None = None
    """The team that acted, for a team power used by its members."""
    void: bool = False
    """The action acts on nobody (its target is covered); a void check is answered `none`."""
    told: CheckResult | None = None
    """For a check: the answer the judge gives instead (天下无贼: a bad thief exposed)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class VotePost:
    """A vote post seen while a vote window was open, valid or not."""

    post_id: str
    author: str
    seat: Seat | None
    target: Seat | None
    abstain: bool
    at: Instant | None
    void_reason: str | None = None
    """A message key when the post does not count."""
    void_params: tuple[tuple[str, str], ...] = ()


class AppendLog(Sequence[T]):
    """An immutable sequence that grows by one item without copying the ones before (`plus`),
    so appending costs the same at item 5,000 as at item 100 (a tuple copied on every append
    ~6 µs at 5,000, and as much again to free the one before).

    The states of one window share one list; each holds a view of its first `len` items. Only
    the view that reaches the list's end (the newest state) appends in place; any other (an older
    state, decided again) copies its own items first, so no view ever sees an item change. It is
    equal to, and hashes as, the tuple of the same items, and is stored as a list (`codec`).
    """

    __slots__ = ("_items", "_n")

    _items: list[T]
    _n: int

    def __init__(self, items: Iterable[T] = ()) -> None:
        self._items = list(items)
        self._n = len(self._items)

    def plus(self, item: T) -> Self:
        """These items and then `item`."""
        newest = self._n and len(self._items) == self._n  # an empty log never lends its list
        items = self._items if newest else self._items[: self._n]
        items.append(item)
        grown = object.__new__(type(self))
        grown._items = items
        grown._n = self._n + 1
        return grown

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[T, ...]: ...

    def __getitem__(self, index: int | slice) -> T | tuple[T, ...]:
        if isinstance(index, slice):
            return tuple(self._items[: self._n][index])
        if index < 0:
            index += self._n
        if not 0 <= index < self._n:
            raise IndexError(f"{type(self).__name__} index out of range")
        return self._items[index]

    def __iter__(self) -> Iterator[T]:
        return islice(self._items, self._n)

    def __reversed__(self) -> Iterator[T]:
        items = self._items
        return (items[i] for i in range(self._n - 1, -1, -1))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, AppendLog):
            if self._n != other._n:
                return False
            return self._items is other._items or self._items[: self._n] == other._items[: self._n]
        if isinstance(other, tuple):
            return len(other) == self._n and tuple(self) == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({tuple(self)!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (tuple(self),)


class PostLog(AppendLog[VotePost]):
    """A vote window's posts, in the order seen (an `AppendLog`: a vote post costs the same at
    post 5,000 as at post 100)."""

    __slots__ = ()


NO_POSTS = PostLog()
"""A window's posts before its first (shared: a view of none never changes)."""


SubmissionKey = tuple[Seat, Power]
"""A seat and one of its powers: a later submission for the same key replaces the one before."""


class SubmissionLog(AppendLog[Submission]):
    """A window's power submissions, in the order made (an `AppendLog`: a player who submits
    again and again costs the same at submission 5,000 as at submission 100), and where each
    seat's latest submission per power is (`latest`), without reading the window's submissions:
    a dict of each key's position, shared with the list and kept by the view that appends in
    place (the newest state). Any other view reads its own items instead, and a copy made to
    append (an older state, decided again) makes its own dict. The dict is no part of the
    value: equality, hash and stored form are the submissions' own."""

    __slots__ = ("_latest",)

    _latest: dict[SubmissionKey, int]

    def __init__(self, submissions: Iterable[Submission] = ()) -> None:
        super().__init__(submissions)
        self._latest = _positions(self._items)

    def plus(self, item: Submission) -> Self:
        """These submissions and then `item`."""
        n = self._n
        if n and len(self._items) == n:  # the newest view: its list and dict grow in place
            items, latest = self._items, self._latest
        else:  # an older view, or none made yet (the empty log never lends its list)
            items = self._items[:n]
            latest = _positions(items)
        latest[(item.seat, item.power)] = n
        items.append(item)
        grown = object.__new__(type(self))
        grown._items = items
        grown._n = n + 1
        grown._latest = latest
        return grown

    def latest(self) -> dict[SubmissionKey, Submission]:
        """Each (seat, power) submitted for, in the order first submitted, with its latest
        submission: as `{(s.seat, s.power): s for s in self}` (a new dict, the caller's), read in
        as many steps as there are keys for the newest view."""
        items, n = self._items, self._n
        if len(items) == n:
            return {key: items[at] for key, at in self._latest.items()}
        return {(s.seat, s.power): s for s in islice(items, n)}


def _positions(submissions: list[Submission]) -> dict[SubmissionKey, int]:
    """Each (seat, power)'s latest position in `submissions`, in the order first submitted."""
    return {(s.seat, s.power): at for at, s in enumerate(submissions)}


NO_SUBMISSIONS = SubmissionLog()
"""A window's submissions before its first (shared: a view of none never changes)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Window:
    """The open window: a night's powers, a day's vote (maybe a run-off), or a victim's choice."""

    kind: PhaseKind
    number: int
    revote: int = 0
    candidates: tuple[Seat, ...] = ()
    """In a run-off, the tied players (only they can be voted for)."""
    barred_voters: tuple[Seat, ...] = ()
    """Players who may not vote in this window (the tied ones in the third window)."""
    chooser: Seat | None = None
    """In a victim's-choice window, the player who picks among `candidates`."""
    last_act: bool = False
    """A window that only waits for last acts (powers used on death, 狙击手) before the game
    ends: it extends the phase just resolved; no vote and no night power in it."""

    @property
    def phase(self) -> PhaseId:
        """The phase this window belongs to."""
        return PhaseId(kind=self.kind, number=self.number)


@dataclass(frozen=True, kw_only=True, slots=True)
class LotDraw:
    """One verifiable draw: its label, the options in the order drawn from, and the result."""

    label: str
    among: tuple[str, ...]
    drawn: str


@dataclass(frozen=True, kw_only=True, slots=True)
class CheckRecord:
    """A private check answer, for the team (or player) that made it."""

    team: Team | None
    """The team that checked; None for a player checking alone."""
    by: tuple[Seat, ...]
    target: Seat
    result: CheckResult


@dataclass(frozen=True, kw_only=True, slots=True)
class TieRecord:
    """How a tie was settled."""

    tied: tuple[Seat, ...]
    policy: TiePolicy
    then: str
    """`lots`, `revote`, `none`, `draw` or `choice`."""
    drawn: Seat | None = None
    label: str | None = None
    chooser: Seat | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class NightRecord:
    """What a night's resolution did (public: `left`; private: checks)."""

    number: int
    left: tuple[Seat, ...]
    checks: tuple[CheckRecord, ...]
    last_words: tuple[Seat, ...]
    revealed: tuple[tuple[Seat, str], ...] = ()
    silenced: tuple[Seat, ...] = ()
    """Players who may not speak in the game channels on the coming day (森林老人; public)."""
    actions: tuple[Action, ...] = ()
    """The night's actions as they took effect (private: the judge's log; a ruleset may look
    back at them, e.g. whom 花蝴蝶 protects through the next day)."""
    virtual_out: tuple[str, ...] = ()
    """Virtual players (not seats: 天下无贼's 傻根) out of the game this night (public)."""
    notices: tuple[tuple[Team, str], ...] = ()
    """Private news for a team (a message key): 天下无贼's knife mark for the good thieves."""


@dataclass(frozen=True, kw_only=True, slots=True)
class DayRecord:
    """What a vote window's lock did: tally, abstentions, void posts, who left, the tie."""

    number: int
    revote: int
    tally: tuple[tuple[Seat, int], ...]
    votes: tuple[tuple[Seat, Seat | None], ...]
    """Each counted voter and their vote (None: abstained): the 票型."""
    abstained: tuple[Seat, ...]
    void_posts: tuple[VotePost, ...]
    left: tuple[Seat, ...]
    tie: TieRecord | None
    last_words: tuple[Seat, ...]
    confess: Seat | None = None
    chosen_by: Seat | None = None
    revealed: tuple[tuple[Seat, str], ...] = ()
    vetoed: Seat | None = None
    """The player the vote picked whose elimination a `veto` cancelled (nobody leaves)."""
    spared: Seat | None = None
    """The player the vote picked who cannot be voted out (花蝴蝶's protection, an unspent 密警):
    nobody leaves."""
    veto_by: Seat | None = None
    eliminated: Seat | None = None
    """The player the vote picked, when others left because of it (a mine takes its voters)."""
    posts: tuple[VotePost, ...] = ()
    """Every post seen in the window, counted or not, in the order seen (for message links)."""
    group: str | None = None
    """The vote group (a ruleset's `vote_groups`), when the day holds several votes."""


@dataclass(frozen=True, kw_only=True, slots=True)
class LastActRecord:
    """A power used on death (a last act, 狙击手's shot), or passed (`target` None)."""

    phase: PhaseId
    by: Seat
    power: Power
    target: Seat | None
    left: tuple[Seat, ...] = ()
    last_words: tuple[Seat, ...] = ()
    revealed: tuple[tuple[Seat, str], ...] = ()
    forfeits_last_words: bool = False
    """Using it closed the user's own last words (they had not given them yet)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class OverrideRecord:
    """A moderator command that applied, in the phase it applied."""

    command: str
    phase: PhaseId | None
    details: tuple[tuple[str, str], ...] = ()
    left: tuple[Seat, ...] = ()
    last_words: tuple[Seat, ...] = ()
    at: Instant | None = None
    """When the moderator gave the command, if the shell said."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Result:
    """The end of the game: who won, when, why, and every player's score."""

    winner: Camp
    after: str
    reason: str
    """A message key."""
    scores: tuple[tuple[Seat, int], ...]


@dataclass(frozen=True, kw_only=True, slots=True)
class Suspension:
    """A moderator's penalty: a team's or one seat's night power (every one when `power` is None)
    does not act on night `night` (e.g. 4.0 独杀's 诈尸 penalty)."""

    night: int
    team: Team | None = None
    seat: Seat | None = None
    power: Power | None = None
    reason: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class GameState:
    """Everything about one game. Never mutated: `evolve` returns a new one."""

    ruleset: str
    seed: str
    commitment: str
    options: Options
    seats: tuple[SeatState, ...]
    dealt: tuple[Seat, ...] = ()
    window: Window | None = None
    window_index: int = 0
    """How many windows have opened in this game: the open (or last) window's place in it, 1 for
    night 1. Every window counts (a run-off, a victim's choice, a last-act window), so an input
    that names the window it was meant for cannot act on the next one (see `Lock.window`)."""
    deadline: Instant | None = None
    paused_remaining: int | None = None
    """Milliseconds left on the deadline while the game is paused."""
    submissions: SubmissionLog = NO_SUBMISSIONS
    posts: PostLog = NO_POSTS
    choice: Seat | None = None
    """In a victim's-choice window, the pick made so far."""
    last_words_open: tuple[Seat, ...] = ()
    last_words_given: tuple[tuple[Seat, str], ...] = ()
    leavers_counted: int = 0
    """How many players have used up a last-words slot (`first_n`)."""
    last_acts_open: tuple[tuple[Seat, Power], ...] = ()
    """Players out of the game who may still use a power on death, until the next lock."""
    history: tuple[NightRecord | DayRecord | OverrideRecord | LastActRecord, ...] = ()
    lots: tuple[LotDraw, ...] = ()
    result: Result | None = None
    suspensions: tuple[Suspension, ...] = ()
    """Penalties in force or to come (see `engine.penalties`)."""
    virtual_out: frozenset[str] = frozenset()
    """Virtual players (a ruleset's `virtual_players`, not seats) out of the game."""
    counters: tuple[tuple[str, int], ...] = ()
    """Named counts a ruleset keeps (天下无贼: the good thieves' knife marks)."""

    def counter(self, name: str) -> int:
        """A named count (0 until set)."""
        return dict(self.counters).get(name, 0)

    # -- lookups -----------------------------------------------------------------------------
    def seat(self, seat: Seat) -> SeatState:
        """The state of one seat (1-based)."""
        return self.seats[seat - 1]

    def seat_of(self, player: str) -> Seat | None:
        """The seat a player sits in now (their first seat still in the game, where a player holds
        several cards), or None for someone who is not (or no longer) playing."""
        held = SEATINGS.of(self.seats).get(player)
        return held[1] if held is not None else None

    def seats_of(self, player: str) -> tuple[Seat, ...]:
        """Every seat a player holds (one, or one per card where a ruleset deals several)."""
        held = SEATINGS.of(self.seats).get(player)
        return held[0] if held is not None else ()

    def alive(self) -> tuple[Seat, ...]:
        """Seats still in the game, in seat order."""
        return tuple(s.seat for s in self.seats if s.alive)

    @property
    def over(self) -> bool:
        """True once the game has a result."""
        return self.result is not None

    @property
    def phase(self) -> PhaseId | None:
        """The phase in play (None before the first window and after the end)."""
        return self.window.phase if self.window else None

    @property
    def paused(self) -> bool:
        """True while a moderator has paused the clock."""
        return self.paused_remaining is not None


Held = tuple[tuple[Seat, ...], Seat]
"""A player's seats, and their seat now."""


def _held(seats: tuple[SeatState, ...]) -> dict[str, Held]:
    """`Seatings.of`, worked out: seat numbers in seat order, each alive as `GameState.seat` reads
    it (the seat at that number's place)."""
    mine: dict[str, list[Seat]] = {}
    for s in seats:
        mine.setdefault(s.player, []).append(s.seat)
    return {
        player: (tuple(held), next((n for n in held if seats[n - 1].alive), held[0]))
        for player, held in mine.items()
    }


class Seatings:
    """Each player's seats and seat now (`GameState.seats_of`, `seat_of`), per seating: without
    reading every seat for each vote post. A day's states share their seats tuple (`evolve` keeps
    it while nobody leaves or is replaced), so the answers are kept per tuple, by identity (the
    tuple is held, so its id is not reused). A memo only, bounded like `PostIndex`."""

    LIMIT = 1024
    """Seatings remembered (the oldest is dropped first)."""

    def __init__(self) -> None:
        self._known: dict[int, tuple[tuple[SeatState, ...], dict[str, Held]]] = {}

    def of(self, seats: tuple[SeatState, ...]) -> dict[str, Held]:
        """Player → (every seat they hold, their seat now: the first still in the game, else the
        first), for the players in `seats` (read only)."""
        known = self._known.get(id(seats))
        if known is not None and known[0] is seats:
            return known[1]
        held = _held(seats)
        if type(seats) is not tuple:  # a list (never a state's) could change: not remembered
            return held
        if len(self._known) >= self.LIMIT:
            del self._known[next(iter(self._known))]
        self._known[id(seats)] = (seats, held)
        return held


SEATINGS = Seatings()
"""The engine's one memo of seatings (answers are the same without it)."""


class PostIndex:
    """Whether a day's posts hold a post id, without scanning the day on every vote post.

    The states of one day share their post objects (`evolve` appends), so the index is kept per day,
    keyed by the identity of the day's first post: the newest posts tuple seen and each post id's
    position in it. `evolve` hands on each tuple it appends to (`appended`); a tuple that extends
    the known one by appended posts (its first posts equal to the known ones, compared in C,
    identity first) adds only the new ones; any other tuple (an older
    state, a voided post, a state read from a snapshot) is indexed afresh. A hit is checked at its
    position, and a stale one falls back to a scan, so the answer is always the scan's. The engine
    runs on one thread (this is not locked). A memo only: nothing here changes a state, its equality
    or its serialized form.
    """

    LIMIT = 4096
    """Days remembered (the oldest is dropped first)."""

    def __init__(self) -> None:
        self._days: dict[int, tuple[Sequence[VotePost], dict[str, int]]] = {}

    def holds(self, posts: Sequence[VotePost], post_id: str) -> bool:
        """Whether one of `posts` has `post_id`."""
        if not posts:
            return False
        ids = self._index(posts)
        at = ids.get(post_id)
        if at is None:
            return False
        if at < len(posts) and posts[at].post_id == post_id:
            return True
        return any(p.post_id == post_id for p in posts)

    def appended(self, before: Sequence[VotePost], after: Sequence[VotePost]) -> None:
        """`after` is `before` with posts appended (only `evolve`, which made it so, says this):
        where `before` is its day's newest tuple seen, the index moves on to `after` by its new
        posts, with no comparison of the two (on a long day, the work per vote post)."""
        if not before:
            return
        key = id(before[0])
        known = self._days.get(key)
        if known is None or known[0] is not before:
            return
        ids = known[1]
        for i in range(len(before), len(after)):
            ids[after[i].post_id] = i
        del self._days[key]
        self._days[key] = (after, ids)

    def forget(self, posts: Sequence[VotePost]) -> None:
        """Drop the index of the day `posts` belong to (its window is locked). Else a locked day's
        ids stay until `LIMIT` newer days push them out: with many games, several days each."""
        if posts:
            self._days.pop(id(posts[0]), None)

    def __len__(self) -> int:
        """Days remembered."""
        return len(self._days)

    def _index(self, posts: Sequence[VotePost]) -> dict[str, int]:
        key = id(posts[0])
        known = self._days.pop(key, None)
        if known is not None and known[0] is posts:
            ids = known[1]
        elif known is not None and _extends(posts, known[0]):
            ids = known[1]
            for i in range(len(known[0]), len(posts)):  # one, after a vote post
                ids[posts[i].post_id] = i
        else:
            ids = {p.post_id: i for i, p in enumerate(posts)}
        self._days[key] = (posts, ids)  # the strong reference keeps id(posts[0]) from reuse
        if len(self._days) > self.LIMIT:
            del self._days[next(iter(self._days))]
        return ids


def _extends(posts: Sequence[VotePost], known: Sequence[VotePost]) -> bool:
    return len(known) <= len(posts) and posts[: len(known)] == known


POSTS = PostIndex()
"""The engine's one index of the days' posts (a memo: answers are the same without it)."""
