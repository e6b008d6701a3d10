"""Vote posts: a person's post in a vote channel becomes a `PostVote` (or is ordinary chat), and
catch-up reads the posts made while the bot was away or before a lock, through the port.

A post's time is its own (`created_at`, from its snowflake id), never the time it was read; its
message id makes it idempotent, so reading a post twice records it once.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from bot.runtime.contexts import Contexts
from bot.runtime.hosting import vote_channel_id
from bot.runtime.port import ChannelPost, ChatPort, snowflake_at
from bot.runtime.schedule import to_ms
from bot.runtime.service import GameService, Outcome
from engine.commands import PostVote
from engine.model import Instant, Seat
from engine.state import GameState, SeatState
from engine.voteparse import (
    Abstain,
    NotAVote,
    ParsedPost,
    UnknownTarget,
    VoteFor,
    own_words,
    parse_vote_post,
)
from engine.windows import is_vote_window

if TYPE_CHECKING:  # mypy checks each call against the class
    _post_vote = PostVote
else:  # the same object, built faster (`engine.replacing`): one for every vote post
    from engine.replacing import maker

    _post_vote = maker(PostVote)

SeatMaps = tuple[dict[str, int], dict[int, int]]
"""Display name → seat and Discord user id → seat: what the vote-post parser resolves."""


VOTES_FROM = "votes_from"
"""Game-row key: the message id the vote channel's catch-up reads after (set as the vote window
opens, by the platform when it opens the channel)."""
VOTES_WINDOW = "votes_window"
"""Game-row key: the window (`GameState.window_index`) the vote channel was last opened for, set
with ``VOTES_FROM``."""


def opened_for(channels: Mapping[str, Any], post_id: int) -> int | None:
    """The window the vote channel had last been opened for when the post was made
    (`PostVote.opened_for`): the window of its last opening if the post came after it, 0 if
    before; None where no opening named its window (recorded before the mark)."""
    window = channels.get(VOTES_WINDOW)
    start = channels.get(VOTES_FROM)
    if window is None or start is None:
        return None
    return int(window) if post_id > int(start) else 0


def maps_of(state: GameState, seat_names: Mapping[int, str]) -> SeatMaps:
    """Names and mentions that point at seats, for the vote-post parser. A player holding
    several cards (5.0 双身份) is no vote target by name or mention: a vote names a card."""
    held = Counter(s.player for s in state.seats)
    names = {
        name: seat for seat, name in seat_names.items() if held[state.seat(Seat(seat)).player] == 1
    }
    mentions = {
        int(s.player): int(s.seat)
        for s in state.seats
        if s.player.isdigit() and held[s.player] == 1
    }
    return names, mentions


def is_chat(parsed: ParsedPost, *, seated: bool) -> bool:
    """Whether a post read as `parsed` is chat, not a vote post: it does not read as a vote, or
    its author holds no seat (`seated`: a spectator, a moderator) and it names no one a vote
    could be for. A spectator's 「投票好激烈」 is talk about the vote, as a forum judge reads
    it; a spectator's 「投 5」 or 「弃权」 reads as a vote and is answered that only players
    vote. A player's post that starts as a vote and names no one is still an unreadable vote
    (void, asking for a clear one): they may have meant to vote (docs/rulings.md, "Votes")."""
    return isinstance(parsed, NotAVote) or (not seated and isinstance(parsed, UnknownTarget))


def vote_command(
    post: ChannelPost,
    names: Mapping[str, int],
    mentions: Mapping[int, int],
    *,
    opened: int | None = None,
    seated: bool = True,
) -> PostVote | None:
    """The vote a post casts (None: it is chat, `is_chat`), at the post's own time; `opened`: the
    window the vote channel had last been opened for when it was made (`opened_for`); `seated`:
    whether its author holds a seat in the game."""
    parsed = parse_vote_post(post.content, names=names, mentions=mentions)
    if is_chat(parsed, seated=seated):
        return None
    return _post_vote(
        player=str(post.author_id),
        post_id=str(post.id),
        target=Seat(parsed.seat) if isinstance(parsed, VoteFor) else None,
        abstain=isinstance(parsed, Abstain),
        # the unreadable text, or the post itself where its keyword stands alone (「投」)
        raw=(parsed.token or own_words(post.content)) if isinstance(parsed, UnknownTarget) else "",
        at=Instant(to_ms(post.created_at)),
        edited_unseen=post.edited,
        opened_for=opened,
    )


class KnownMaps:
    """Each game's seat maps, made again only when its seats (who holds which card) or their
    names change: a day's vote posts share one seating, and building the maps was as much CPU as
    parsing the post. The seats are compared by identity (`evolve` keeps the tuple while nobody
    leaves or is replaced), the names by value (a name may come from the member cache)."""

    def __init__(self) -> None:
        self._games: dict[int, tuple[tuple[SeatState, ...], Mapping[int, str], SeatMaps]] = {}

    def get(self, game_id: int, state: GameState, seat_names: Mapping[int, str]) -> SeatMaps:
        """The maps for `state` and `seat_names` (the parser only reads them)."""
        known = self._games.get(game_id)
        if (
            known is not None
            and known[0] is state.seats
            and (known[1] is seat_names or known[1] == seat_names)
        ):
            return known[2]
        maps = maps_of(state, seat_names)
        self._games[game_id] = (state.seats, seat_names, maps)  # kept as given: only read
        return maps

    def forget(self, game_id: int) -> None:
        """Drop a game's maps (it is over)."""
        self._games.pop(game_id, None)


class _Reading:
    """A hold on a post being read (`VotePosts.reading`): released, it wakes the post's edits."""

    __slots__ = ("_holds", "_owner", "_post")

    def __init__(self, holds: dict[int, asyncio.Future[None] | None], post_id: int) -> None:
        self._holds, self._post, self._owner = holds, post_id, False

    def __enter__(self) -> None:
        if self._post not in self._holds:
            self._holds[self._post] = None
            self._owner = True

    def __exit__(self, *_: object) -> None:
        if self._owner:
            done = self._holds.pop(self._post)
            if done is not None and not done.done():
                done.set_result(None)


class VotePosts:
    """Turns vote-channel posts into votes: one at a time as they arrive, or a channel's history."""

    def __init__(self, service: GameService, contexts: Contexts, port: ChatPort) -> None:
        self.service = service
        self.contexts = contexts
        self.port = port
        self.maps = KnownMaps()
        self._reading: dict[int, asyncio.Future[None] | None] = {}
        """Posts being read (`reading`), each with the future its edits wait on, once one does."""

    def reading(self, post_id: int) -> _Reading:
        """Held while a post is read and recorded (`ingest`; the shell holds it from the post's
        arrival, before its own awaits): an edit of the post waits for it (`read_done`), so an
        edit handled meanwhile never records the edited text first and has the original
        dropped as its duplicate. Nested holds of one post are one."""
        return _Reading(self._reading, post_id)

    async def read_done(self, post_id: int) -> None:
        """Once no reading of the post is under way (at once if none is)."""
        if post_id not in self._reading:
            return
        done = self._reading[post_id]
        if done is None:
            done = self._reading[post_id] = asyncio.get_running_loop().create_future()
        await asyncio.shield(done)  # a waiter cancelled leaves the others waiting

    async def ingest(self, game_id: int, post: ChannelPost) -> Outcome | None:
        """Record a post in the vote channel as a vote (None: the game is over, or it is chat)."""
        if post.edited:  # an edit: its handler waited for the post's own reading first
            return await self._ingest(game_id, post)
        with self.reading(post.id):
            return await self._ingest(game_id, post)

    async def _ingest(self, game_id: int, post: ChannelPost) -> Outcome | None:
        state = self.service.active_state(game_id)
        if state is None:
            if not await self.service.is_active(game_id):
                self.maps.forget(game_id)
                return None
            state = await self.service.state(game_id)
        seat_names = self.contexts.known_seat_names(game_id, state)
        if seat_names is None:
            seat_names = await self.contexts.seat_names(game_id, state)
        names, mentions = self.maps.get(game_id, state, seat_names)
        info = self.service.cached_info(game_id) or await self.service.info(game_id)
        opened = opened_for(info.channels, post.id)
        seated = state.seat_of(str(post.author_id)) is not None
        command = vote_command(post, names, mentions, opened=opened, seated=seated)
        if command is None:
            return None
        return await self.service.submit(game_id, command, message_id=post.id)

    async def edited(self, game_id: int, channel_id: int, post: ChannelPost) -> Outcome | None:
        """An edit, in the vote channel, of a post the judge has not recorded (chat when it was
        read, or not read yet): read now as the lock's catch-up would read it (`catch_up`:
        edited, so void if it reads as a vote: a vote is its post as first made), so its author
        hears at once that it does not count, while they can still post again, and not at the
        lock. A post the catch-up would not read (before the vote window's opening, or in
        another channel) is left alone. None: it is chat, or left alone."""
        info = await self.service.info(game_id)
        if channel_id != vote_channel_id(info.channels):
            return None
        start = info.channels.get(VOTES_FROM)
        if start is None or post.id <= int(start):
            return None
        return await self.ingest(game_id, post)

    async def _maps_now(self, game_id: int) -> SeatMaps:
        """The game's names and mentions as they are now (`KnownMaps`)."""
        state = await self.service.state(game_id)
        seat_names = self.contexts.known_seat_names(game_id, state)
        if seat_names is None:
            seat_names = await self.contexts.seat_names(game_id, state)
        return self.maps.get(game_id, state, seat_names)

    async def read(self, game_id: int, text: str) -> ParsedPost:
        """What `text` means as a vote post of this game now (its names and mentions)."""
        names, mentions = await self._maps_now(game_id)
        return parse_vote_post(text, names=names, mentions=mentions)

    async def typed_target(self, game_id: int, typed: str) -> ParsedPost:
        """What a target typed by hand (`/vote target:`) names: a player's name exactly as it is
        written (an option shows no Markdown: 「小明~~大~~」 is that name, not 「小明」), else
        what the post 「投 {typed}」 would (「5号」, 「五号」, 「弃票」, a name as a post names
        one)."""
        names, mentions = await self._maps_now(game_id)
        seat = names.get(typed.strip())
        if seat is not None:
            return VoteFor(seat=seat)
        return parse_vote_post(f"投 {typed}", names=names, mentions=mentions)

    async def reads_as_vote(self, game_id: int, text: str, author: int | None = None) -> bool:
        """Whether `text` reads as a vote post (or an attempt at one) of this game, and a vote
        window is open: for what is no post of the player's own (a forwarded post). `author`:
        who shows it (a forwarder); where they hold no seat, as their own post would be read
        (`is_chat`). None: read as a player's."""
        state = await self.service.state(game_id)
        if state.over or state.window is None or not is_vote_window(state.window):
            return False
        seated = author is None or state.seat_of(str(author)) is not None
        return not is_chat(await self.read(game_id, text), seated=seated)

    async def catch_up(self, game_id: int) -> None:
        """Read the vote channel (a forum game: the newest day's vote post) from the opening of
        the vote window and ingest, in time order.

        From the opening, not from the last post recorded: a post that failed to be recorded
        (the database was away) must still count when a later one did. Posts already recorded
        are no-ops (their message id is a unique key)."""
        info = await self.service.info(game_id)
        channel = vote_channel_id(info.channels)
        if channel is None:  # a forum game before its first day: no vote post yet
            return
        start = info.channels.get(VOTES_FROM) or await self.service.repo.last_message_id(game_id)
        if not start:
            start = snowflake_at(info.created_at)
        async for post in self.port.posts_after(channel, int(start)):
            await self.ingest(game_id, post)
