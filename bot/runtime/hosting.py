"""Where a game is hosted: text channels (a game channel and a vote channel) or a forum channel
(a main post, and one 投票帖 per day), read from the game's channels JSON.

In forum hosting the channels hold ``hosting = "forum"``, ``game`` (the main post, a thread),
``vote`` (the forum channel itself: its permissions govern every post in it) and one key per
day's vote post, ``vote_post:N`` → the thread's id, written once when the bot makes the post.
Every reader of "the vote channel" asks here, so catch-up, routes and replies read the open
day's post in forum hosting exactly as they read the vote channel in text hosting.

The vote posts are opened and locked by outbox steps of the shell's own (not engine effects: a
replay does not reproduce them and ``engine.codec`` never sees them), written with the events
that open a vote window or resolve a day, after that input's engine effects, so the day's 看表帖
is posted before its vote post is locked and a restart performs an undone step once more.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, NamedTuple

from engine.events import DayResolved, Event, GameEnded, WindowOpened
from engine.model import PhaseKind
from engine.state import GameState
from engine.windows import is_vote_window

FORUM: Final = "forum"
PREFIX: Final = "vote_post:"
TYPE: Final = "faguan.vote_post"
"""The payload ``type`` of a vote post step (engine effect types never contain a dot)."""


def is_forum(channels: Mapping[str, Any]) -> bool:
    """Whether the game is hosted in a forum channel."""
    return channels.get("hosting") == FORUM


def forum_channels(settings: Mapping[str, Any]) -> dict[str, Any]:
    """A sign-up's settings → the game's forum channels keys (none for text hosting): the
    hosting, and the text channel whose private threads are the teams' (a forum has none)."""
    if settings.get("hosting") != FORUM:
        return {}
    return {"hosting": FORUM, "teams": str(settings["teams"])}


def forum_settings(teams_channel_id: int) -> dict[str, Any]:
    """A forum sign-up's own settings: the hosting, and the text channel it was opened from
    (the teams' private threads are made there: a forum post cannot hold threads)."""
    return {"hosting": FORUM, "teams": str(teams_channel_id)}


def vote_post_key(day: int) -> str:
    """The channels key holding day `day`'s vote post (one key per day: never a whole value)."""
    return f"{PREFIX}{day}"


def vote_posts(channels: Mapping[str, Any]) -> dict[int, int]:
    """Day → its vote post's thread id, in day order."""
    found = {int(k[len(PREFIX) :]): int(v) for k, v in channels.items() if k.startswith(PREFIX)}
    return dict(sorted(found.items()))


def vote_channel_id(channels: Mapping[str, Any]) -> int | None:
    """Where votes are posted now: the vote channel, or the newest day's vote post (None in a
    forum game before its first day)."""
    if not is_forum(channels):
        return int(channels["vote"])
    posts = vote_posts(channels)
    return posts[max(posts)] if posts else None


def vote_channel_for(channels: Mapping[str, Any], state: GameState) -> int | None:
    """Where a vote posted now goes: the vote channel, or the open day's own 投票帖 (None while
    it is not opened yet: never a past day's post)."""
    if not is_forum(channels):
        return int(channels["vote"])
    window = state.window
    if window is None or window.kind is not PhaseKind.DAY:
        return None
    return vote_posts(channels).get(window.number)


def vote_channel_of(channels: Mapping[str, Any], post_id: int) -> int | None:
    """The channel a vote post was made in: the vote channel, or the vote post opened last
    before it (a thread's id is its opening's snowflake, so later posts have larger ids)."""
    if not is_forum(channels):
        return int(channels["vote"])
    before = [thread for thread in vote_posts(channels).values() if thread <= post_id]
    return max(before) if before else None


def vote_post_steps(events: Sequence[Event]) -> list[dict[str, Any]]:
    """The forum's vote post steps for these events, in their order: a day's post opens with
    its vote window (`engine.windows.is_vote_window`: a run-off opens it again) and is locked when
    the day is resolved (or the game ends: every post is locked). Which windows take votes is the
    engine's; where they are posted (a forum's 投票帖) is this hosting's."""
    steps: list[dict[str, Any]] = []
    for event in events:
        match event:
            case WindowOpened(window=w) if is_vote_window(w):
                # the deadline rides in the step: a retry performed after this window has
                # closed must not show a later window's deadline
                steps.append(
                    {"type": TYPE, "action": "open", "day": w.number, "deadline": event.deadline}
                )
            case DayResolved():
                steps.append({"type": TYPE, "action": "close", "day": event.record.number})
            case GameEnded():
                steps.append({"type": TYPE, "action": "close", "day": None})
    return steps


class VotePostStep(NamedTuple):
    """One step of a forum game's 投票帖: open (or reopen) a day's post, or lock it."""

    action: str
    day: int | None
    """None with "close": every post of the game."""
    deadline: int | None
    """The vote window's deadline when it opened (ms); None in steps recorded before it was
    carried, and for "close"."""


def vote_post_step(payload: Mapping[str, Any]) -> VotePostStep | None:
    """The step this payload asks for, or None for any other payload."""
    if payload.get("type") != TYPE:
        return None
    action, day, deadline = payload.get("action"), payload.get("day"), payload.get("deadline")
    if action not in ("open", "close"):
        raise ValueError(f"unknown vote post action {action!r}")
    return VotePostStep(
        str(action), None if day is None else int(day), None if deadline is None else int(deadline)
    )
