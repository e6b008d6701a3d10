"""Effects: what the shell must do in the world after events are committed.

Effects are data (message keys and parameters, never prose) derived from events by
`effects_for`; the shell renders and performs them (`bot/discord_effects.py`). Public effects
carry only public information; anything hidden goes in a `Whisper` to the seat concerned or a
`TeamNotice` to a team's private thread.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from engine.model import Instant, Seat, Team

Param = str | int | bool | None
Params = tuple[tuple[str, Param], ...]


def params(**values: Param) -> Params:
    """Parameters as a sorted tuple (hashable, JSON-safe)."""
    return tuple(sorted(values.items()))


@dataclass(frozen=True, kw_only=True, slots=True)
class Announce:
    """A public post in the game channel."""

    key: str
    params: Params = ()


@dataclass(frozen=True, kw_only=True, slots=True)
class Whisper:
    """A private message to the player in `seat` (DM, or ephemeral on their next command)."""

    seat: Seat
    key: str
    params: Params = ()


@dataclass(frozen=True, kw_only=True, slots=True)
class TeamNotice:
    """A message in a team's private thread."""

    team: Team
    key: str
    params: Params = ()


@dataclass(frozen=True, kw_only=True, slots=True)
class ClockPost:
    """The 看表帖: the phase lock post, with the exact deadline; players fall silent."""

    phase: str
    deadline: Instant | None


@dataclass(frozen=True, kw_only=True, slots=True)
class SetChannelsOpen:
    """Open or close the game channels to the living players (docs/rulings.md, "The forum's
    rhythm"): `open` is the discussion (game) channel; `vote` the vote channel, the same as `open`
    when None. Nights open discussion but keep the vote channel shut (`vote=False`): votes count
    only in a vote window."""

    open: bool
    vote: bool | None = None
    window: int | None = None
    """The window (`GameState.window_index`) the vote channel opens for, when it opens (None
    otherwise, and in effects recorded before this field): the shell keeps it with where the
    channel's catch-up starts, so it knows which opening a post came after
    (`PostVote.opened_for`)."""

    @property
    def vote_open(self) -> bool:
        """Whether the vote channel is open after this effect."""
        return self.open if self.vote is None else self.vote


@dataclass(frozen=True, kw_only=True, slots=True)
class VoteChannelPost:
    """A public post in the day's vote channel (or vote post): where the forum draws lots
    ("抽签过程必须在投票帖中进行", seed 004). Public information only, like `Announce`."""

    key: str
    params: Params = ()


@dataclass(frozen=True, kw_only=True, slots=True)
class ReplyToPost:
    """A reply to a vote post: ✅ for a valid one (`key=None`), or the reason it is void."""

    post_id: str
    key: str | None
    params: Params = ()


@dataclass(frozen=True, kw_only=True, slots=True)
class ScheduleDeadline:
    """Wake the shell at `deadline` (None: no timer for the current window)."""

    deadline: Instant | None


@dataclass(frozen=True, kw_only=True, slots=True)
class SeatHandover:
    """A seat changed hands: the old player loses the players' role and the seat's standing in
    the channels, the new one gets them (the team thread follows in private effects)."""

    seat: Seat
    old_player: str
    new_player: str


@dataclass(frozen=True, kw_only=True, slots=True)
class SeatLeft:
    """A player left the game (出局): they lose posting rights in the game channels."""

    seat: Seat


@dataclass(frozen=True, kw_only=True, slots=True)
class TeamJoin:
    """A seat is (now) a member of a team: add them to the team's private thread."""

    team: Team
    seat: Seat


@dataclass(frozen=True, kw_only=True, slots=True)
class LeaveTeamThreads:
    """`player` no longer reads `team`'s private thread — every team thread when `team` is
    None: out of the game (after `SeatLeft`) — or their seat was handed over to a substitute
    (after `SeatHandover`). Private: who is in a team is hidden, so this is no part of the
    public `SeatLeft` and `SeatHandover`."""

    player: str
    team: Team | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class OverrideLogged:
    """A moderator's override, for the server's override log: who, what, when (public facts only:
    the same details the record keeps)."""

    command: str
    phase: str | None
    at: Instant | None
    params: Params = ()


@dataclass(frozen=True, kw_only=True, slots=True)
class Silence:
    """A player may not post in the game's discussion channel on day `day` (森林老人's silence,
    docs/rules.md §1.6): from now until the matching `Unsilence`. Votes still count (by vote post or
    /vote); last words are not affected."""

    seat: Seat
    day: int


@dataclass(frozen=True, kw_only=True, slots=True)
class Unsilence:
    """Day `day` is over (or the game is): the silenced player in `seat`, still in the game, may
    post again (remove what `Silence` set; a player out of the game stays closed by `SeatLeft`)."""

    seat: Seat
    day: int


@dataclass(frozen=True, kw_only=True, slots=True)
class UpdateStandings:
    """The game is over: add its scores to the server's season standings (once per game)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ReleaseChannels:
    """The game is over: undo every permission the shell set for it (the players' member
    overwrites from leaving and silence, the players' role and its overwrites), so the next game in
    the same channels starts clean. Performing it again is harmless."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Bulletin:
    """Public posts of one input that go out as one message (see `as_posts`)."""

    parts: tuple[ClockPost | Announce, ...]


Effect = (
    Announce | Whisper | TeamNotice | ClockPost | SetChannelsOpen | ReplyToPost | ScheduleDeadline
    | VoteChannelPost | SeatHandover | SeatLeft | TeamJoin | LeaveTeamThreads | OverrideLogged
    | UpdateStandings | Silence | Unsilence | ReleaseChannels | Bulletin
)  # fmt: skip

PRIVATE = (Whisper, TeamNotice, TeamJoin, LeaveTeamThreads)
"""Effects that only the seat or team concerned sees: which there are, and when, depends on
hidden roles (a police check at dawn, a team thread's members)."""


_OWN_POST = ("window.", "game.over")


def as_posts(effects: Sequence[Effect]) -> list[Effect]:
    """The same effects with one input's public posts joined: the first post and every public
    post after it make one message; the 看表帖 is always a message of its own (timestamped: the
    mute starts there), and the announcement of the next window (`window.*`), or of the end
    (`game.over`), starts another. So a phase change is three public messages (看表帖, results,
    next window), in their order, and private messages and permission edits keep theirs."""
    out: list[Effect] = []
    open_at: int | None = None  # where the message being joined is in `out`
    for effect in effects:
        if not isinstance(effect, ClockPost | Announce):
            out.append(effect)
            continue
        if isinstance(effect, ClockPost):
            out.append(effect)
            open_at = None  # nothing joins the 看表帖
            continue
        if open_at is None or effect.key.startswith(_OWN_POST):
            open_at = len(out)
            out.append(effect)
            continue
        joined = out[open_at]
        parts = joined.parts if isinstance(joined, Bulletin) else (joined,)
        out[open_at] = Bulletin(parts=(*parts, effect))
    return out


def for_delivery(effects: Sequence[Effect]) -> tuple[list[Effect], list[Effect]]:
    """One input's effects in the order the shell performs them: its public posts joined
    (`as_posts`), then, apart, its private effects (`PRIVATE`), each part in its own order. The
    shell performs every public effect — its own public steps included — before any private
    one: how long private work takes depends on roles (a DM to the police, a dead killer leaving
    the team thread), so none of it may stand between two public posts, where the time between
    them would tell."""
    public: list[Effect] = []
    private: list[Effect] = []
    for effect in as_posts(effects):
        (private if isinstance(effect, PRIVATE) else public).append(effect)
    return public, private


def seats_text(seats: Iterable[Seat]) -> str:
    """Seat numbers as `3,5,9` (the shell renders names)."""
    return ",".join(str(s) for s in seats)
