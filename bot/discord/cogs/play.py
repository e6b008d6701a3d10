"""Players: vote posts in the vote channel, /vote, /role, /act, /pass, /lastwords, /choose."""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
from collections.abc import Awaitable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands
from discord.app_commands import locale_str as _
from discord.ext import commands

from bot.discord import permissions
from bot.discord.channels import channel_if_there, channel_of
from bot.discord.interactions import (
    FORM_TIMEOUT,
    AnswersFailures,
    NoGame,
    answer_command,
    dm_notice,
    find_game,
    form_custom_id,
    locale_of,
    respond,
    say,
    text,
)
from bot.discord.port import is_persons_post, post_of
from bot.discord.views import valid_targets
from bot.records.render import (
    Context,
    check_line,
    error_text,
    known_seats,
    label,
    later_powers,
    plain,
    public_roster,
    role_powers_line,
    role_text,
)
from bot.runtime.game_options import clipped
from bot.runtime.hosting import is_forum, vote_channel_for
from bot.runtime.port import ChannelPost
from bot.runtime.schedule import from_ms, to_ms
from bot.runtime.vote_posts import VOTES_WINDOW
from engine.commands import ChooseTied, GiveLastWords, PostVote, SubmitPower
from engine.effects import seats_text
from engine.errors import EngineError
from engine.events import VotePosted
from engine.game import decide
from engine.model import UNPASSABLE, Instant, Power, Seat
from engine.publish import role_params
from engine.rulesets import rules_for
from engine.speech import channels_open, out_of_game, silenced
from engine.state import GameState
from engine.view import PlayerView, view_for
from engine.voteparse import Abstain, VoteFor

if TYPE_CHECKING:
    from bot.discord.judge import Judge

log = logging.getLogger(__name__)
ABSTAIN = "abstain"
HINT_SECONDS = 60
"""How long the hint to a vote posted in the discussion channel stays up."""


VOTER_REFUSED = {
    "vote.not_player": "actor.not_player",
    "vote.out_of_game": "vote.out_of_game",
    "vote.barred_in_runoff": "vote.barred_in_runoff",
    "vote.after_deadline": "phase.after_deadline",
    "vote.before_window": "vote.before_window",
}
"""Void reasons that are about who votes or when, not whom, and what the asker is told: a /vote
with one of these is not posted. (A vote for a target it cannot take is posted and marked void,
as a vote post would be: the channel shows what was voted, the voter is told why privately.)"""


def vote_refusal(state: GameState, command: PostVote) -> tuple[str, dict[str, Any]] | None:
    """Why the engine would not take `command` (a /vote, stamped now) from this voter now, if it
    would not: refused (no vote window, the game over), or void because of the voter (not a
    player, out of the game, barred from this run-off, past the deadline). The posted vote is
    still judged by the engine on its own time: a lock in between voids it as usual."""
    try:
        events = decide(state, command)
    except EngineError as error:
        return error.key, dict(error.params)
    for event in events:
        if isinstance(event, VotePosted) and event.post.void_reason in VOTER_REFUSED:
            return VOTER_REFUSED[event.post.void_reason], dict(event.post.void_params)
    return None


LAST_WORDS_FORM = "lastwords"
"""The kind of a last words box in its custom id (`form_custom_id`)."""


class LastWordsModal(AnswersFailures, discord.ui.Modal):
    """A text box for last words (遗言), worded in `locale` (the asker's)."""

    def __init__(self, judge: Judge, game_id: int, opened: int, locale: str) -> None:
        # the opening interaction in its custom id: discord.py keeps forms by custom id alone
        # (two players' forms must not share one; `mod_menus.ReasonForm`); the game in it: a
        # box sent after the bot dropped it is still submitted (`late_last_words`)
        super().__init__(
            title=say(locale, "lastwords_msg.form_title"),
            custom_id=form_custom_id(LAST_WORDS_FORM, game_id, opened),
            timeout=FORM_TIMEOUT,
        )
        self.judge = judge
        self.game_id = game_id
        self.words: discord.ui.TextInput[LastWordsModal] = discord.ui.TextInput(
            label=say(locale, "lastwords_msg.form_label"),
            style=discord.TextStyle.paragraph,
            max_length=1500,
            custom_id="words",
        )
        self.add_item(self.words)

    async def on_submit(self, interaction: discord.Interaction[Any]) -> None:
        await give_last_words(self.judge, interaction, self.game_id, str(self.words.value))


async def give_last_words(
    judge: Judge, interaction: discord.Interaction[Any], game_id: int, words: str
) -> None:
    """Submit the asker's last words to `game_id` and answer them: the engine takes them only
    while their window is open, and says why not otherwise."""
    command = GiveLastWords(player=str(interaction.user.id), text=words, at=judge.runtime.now_ms())
    await answer_command(judge, interaction, game_id, command)


async def late_last_words(judge: Judge, interaction: discord.Interaction[Any]) -> None:
    """A last words box sent after the bot dropped it (opened before a restart, or kept past
    `FORM_TIMEOUT`): its custom id names the game (`LastWordsModal`), so the words typed are
    submitted as the box would have (the engine refuses them once their window has closed),
    not lost; a box whose id or text cannot be read is answered: open /lastwords again."""
    data: Mapping[str, Any] = interaction.data or {}
    parts = str(data.get("custom_id", "")).split(":")  # faguan:lastwords:{game}:{opened}
    game = parts[2] if len(parts) > 2 else ""
    words = _typed(data.get("components", []), "words")
    if not game.isdecimal() or words is None:
        await respond(interaction, text(judge, interaction, "lastwords.box_expired"))
        return
    await give_last_words(judge, interaction, int(game), words)


def _typed(components: Sequence[Mapping[str, Any]], custom_id: str) -> str | None:
    """The value of the text input `custom_id` in a form's submitted components (each in an
    action row or a label, as Discord sends them back), or None if it is not there."""
    for component in components:
        if component.get("custom_id") == custom_id and "value" in component:
            return str(component["value"])
        inner = [*component.get("components", []), *filter(None, [component.get("component")])]
        found = _typed(inner, custom_id)
        if found is not None:
            return found
    return None


class PlayCog(commands.Cog, name="PlayCog"):
    """Everything a player does."""

    def __init__(self, judge: Judge) -> None:
        self.judge = judge
        self._edited: set[int] = set()
        self._told_no_manage_messages = False

    # -- vote posts --------------------------------------------------------------------------------
    @commands.Cog.listener()
    async def on_message(self, message: discord.Message) -> None:
        if not is_persons_post(message) or message.guild is None:
            return  # a bot's, a webhook's, or Discord's own (a thread's creation names it)
        game_id = self.judge.runtime.routes.channel_games.get(message.channel.id)
        author = str(message.author.id)
        if game_id is None:
            await self._in_thread(message, author)
            return
        if self.judge.runtime.routes.is_vote_channel(game_id, message.channel.id):
            with self.judge.runtime.votes.reading(message.id):  # its edits wait: held at once
                await self._vote_post(game_id, message, author)
        elif (found := await self._kept_silent(game_id, message.channel.id, author)) is not None:
            await self._took_down_post(game_id, message, found)  # gone or not: no hint
        elif await self.judge.runtime.hints.due(game_id, post_of(message)):
            await self._hint(game_id, message)

    async def _vote_post(self, game_id: int, message: discord.Message, author: str) -> None:
        """A post in the game's vote channel: recorded as a vote, or chat."""
        # the overwrites keep who may not post out of it, unless Discord refused them
        if game_id in self.judge.refused_permissions:
            found = await self._kept_silent(game_id, message.channel.id, author)
            if found is not None and await self._took_down_post(game_id, message, found):
                return
        await self.judge.runtime.votes.ingest(game_id, post_of(message))
        if not message.content and await self._forwarded_vote(game_id, message):
            await self._reply_forwarded(game_id, message)

    async def _in_thread(self, message: discord.Message, author: str) -> None:
        """A post in a public thread of a game's channel: in one of the discussion, taken down
        if its author may not speak there now (`_discussion_thread`); else, if it reads as a
        vote, the day's hint that votes count only in the vote channel itself, as in the
        discussion (a thread of the vote channel is no vote channel: the forum's 投票帖 is one
        thread, and a vote said aside in a side thread would count unseen by most)."""
        thread = await self._discussion_thread(message.channel)
        if thread is not None:
            game_id, discussion = thread
            found = await self._kept_silent(game_id, discussion, author, shut=True)
            if found is not None:
                await self._took_down_post(game_id, message, found, in_thread=True)
                return  # gone or not: no hint
        else:
            game = await self._vote_thread(message.channel)
            if game is None:
                return
            game_id = game
        if await self.judge.runtime.hints.due(game_id, post_of(message)):
            await self._hint(game_id, message)

    async def _vote_thread(self, channel: object) -> int | None:
        """The game whose vote channel (of its own: not its discussion) `channel` is a public
        thread of, if it is one."""
        if not isinstance(channel, discord.Thread) or channel.is_private():
            return None
        parent = channel.parent_id
        game_id = self.judge.runtime.routes.channel_games.get(parent)
        if game_id is None or not self.judge.runtime.routes.is_vote_channel(game_id, parent):
            return None
        info = await self.judge.runtime.service.info(game_id)
        return None if is_forum(info.channels) else game_id

    async def _forwarded_vote(self, game_id: int, message: discord.Message) -> bool:
        """Whether `message` forwards a post that reads as a vote, in a vote window. A forward
        is no vote: its text is not the poster's post (and Discord does not say whose it was);
        to vote, one posts (docs/rulings.md, "Votes")."""
        snapshots = getattr(message, "message_snapshots", None) or ()
        for snapshot in snapshots:
            text = getattr(snapshot, "content", "") or ""
            votes = self.judge.runtime.votes
            if text and await votes.reads_as_vote(game_id, text, message.author.id):
                return True
        return False

    async def _reply_forwarded(self, game_id: int, message: discord.Message) -> None:
        """Tell, under the forward, that it counts as no vote (the same words for everyone;
        nothing is recorded in the game)."""
        ctx = await self.judge.runtime.contexts.context(game_id)
        try:
            await message.reply(ctx.t("vote.forwarded"), mention_author=False)
        except discord.HTTPException:  # the forward was deleted meanwhile: nothing to point at
            log.info("game %s: no reply to a forwarded vote (the post is gone)", game_id)

    async def _took_down_post(
        self, game_id: int, message: discord.Message, found: GameState, *, in_thread: bool = False
    ) -> bool:
        """Take down a post by a player `found` keeps from speaking in this channel now (out of
        the game; silenced, in the discussion) and tell its author privately why; whether it is
        gone. The overwrites stop such posts where Discord can: these come where it cannot — a
        forum game's main post under a silence (one overwrite governs it and the day's 投票帖,
        where a silenced player's votes still count), a channel whose overwrites Discord refused
        to set (`bot.discord.permission_refusals`; in the vote channel, the bot's busiest, this
        is looked at only then), a player an Administrator permission lets past, and a public
        thread of the discussion channel (`_discussion_thread`; `in_thread`: there a living
        player may also not post while the discussion is shut). A vote post Discord would not
        take down is counted as the rules say, as a catch-up would read it."""
        if not await self._take_down(message.delete()):
            return False  # still there: no notice saying otherwise
        info = await self.judge.runtime.service.info(game_id)
        player = str(message.author.id)
        if out_of_game(found, player):
            key = "notice.post_removed_out"
        elif in_thread:
            why = "silenced" if is_silenced(found, player) else "shut"
            key = f"notice.thread_post_removed_{why}"
        elif is_forum(info.channels):
            key = "notice.silenced_post_removed"
        else:
            key = "notice.post_removed_silenced"
        ctx = await self.judge.runtime.contexts.context(game_id, found)
        with contextlib.suppress(discord.HTTPException):
            await message.author.send(ctx.t(key, game=game_id))
        return True

    async def _hint(self, game_id: int, message: discord.Message) -> None:
        """A vote posted in the discussion channel: say where votes count, in a reply that
        deletes itself (the same words for everyone; nothing is recorded in the game)."""
        ctx = await self.judge.runtime.contexts.context(game_id)
        try:
            await message.reply(
                ctx.t("hint.vote_elsewhere", vote=ctx.vote_place()),
                mention_author=False,
                delete_after=HINT_SECONDS,
            )
        except discord.HTTPException:  # the post was deleted meanwhile: nothing to point at
            log.info("game %s: no vote hint (the post is gone)", game_id)

    @commands.Cog.listener()
    async def on_raw_message_edit(self, payload: discord.RawMessageUpdateEvent) -> None:
        game_id = self.judge.runtime.routes.channel_games.get(payload.channel_id)
        if game_id is None:  # in a public thread of the discussion: as in the discussion
            thread = await self._discussion_thread(self._cached(payload.channel_id))
            if thread is not None:
                await self._took_down_edit(thread[0], payload, thread[1])
            return
        if await self._took_down_edit(game_id, payload, payload.channel_id):
            return
        now = from_ms(self.judge.runtime.now_ms())
        if not _persons_edit(payload, now) or payload.message_id in self._edited:
            return  # no edit of a person's text (a pin, a link preview), or answered already
        await self.judge.runtime.votes.read_done(payload.message_id)  # the post's own first
        state = await self.judge.runtime.service.state(game_id)
        if payload.message_id in self._edited:  # another edit of it answered meanwhile
            return
        if not any(p.post_id == str(payload.message_id) for p in state.posts):
            post = _edited_post(payload)
            if post and self.judge.runtime.routes.is_vote_channel(game_id, payload.channel_id):
                read = await self.judge.runtime.votes.edited(game_id, payload.channel_id, post)
                if read is not None:  # answered: a later edit of it is not
                    self._edited.add(payload.message_id)
            return
        self._edited.add(payload.message_id)
        ctx = await self.judge.runtime.contexts.context(game_id, state)
        channel = self.judge.client.get_channel(payload.channel_id)
        if isinstance(channel, discord.TextChannel | discord.Thread):
            await channel.get_partial_message(payload.message_id).reply(
                ctx.t("vote.edited"), mention_author=False
            )

    async def _took_down_edit(
        self, game_id: int, payload: discord.RawMessageUpdateEvent, channel_id: int
    ) -> bool:
        """An edit by a player the game keeps from speaking in this channel now (out of the game;
        silenced, in the discussion): Discord lets anyone edit their own posts without Send
        Messages, so the overwrites cannot stop it. The post is taken down and the author told
        privately why; a vote it cast stays as the engine recorded it (nothing reads deletes).
        `channel_id`: the game's channel the edit counts in (a public thread's: the discussion)."""
        author = payload.data.get("author")
        if not author or author.get("bot") or not payload.data.get("edited_timestamp"):
            return False  # no author given, a bot's post, or no edit of theirs (a link preview)
        player = str(author["id"])
        found = await self._kept_silent(game_id, channel_id, player)
        if found is None:
            return False
        if not await self._take_down(payload.message.delete()):
            return True  # still there: no notice saying otherwise
        why = "out" if out_of_game(found, player) else "silenced"
        ctx = await self.judge.runtime.contexts.context(game_id, found)
        with contextlib.suppress(discord.HTTPException):
            await payload.message.author.send(ctx.t(f"notice.edit_removed_{why}", game=game_id))
        return True

    @commands.Cog.listener()
    async def on_raw_reaction_add(self, payload: discord.RawReactionActionEvent) -> None:
        """A reaction by a player the game keeps from speaking in this channel now: Discord asks
        for Add Reactions only for a new emoji, so joining one already there gets past the
        overwrites. It is removed, without a notice (a reaction says little; a DM per click
        would say more than the click)."""
        if payload.member is None or payload.member.bot:
            return
        game_id = self.judge.runtime.routes.channel_games.get(payload.channel_id)
        where = payload.channel_id
        if game_id is None:  # in a public thread of the discussion: as in the discussion
            thread = await self._discussion_thread(self._cached(payload.channel_id))
            if thread is None:
                return
            game_id, where = thread
        player = discord.Object(payload.user_id)
        if await self._kept_silent(game_id, where, str(player.id)) is None:
            return
        channel = await channel_if_there(self.judge.client, payload.channel_id)
        if isinstance(channel, discord.TextChannel | discord.Thread):
            message = channel.get_partial_message(payload.message_id)
            await self._take_down(message.remove_reaction(payload.emoji, player))

    async def _kept_silent(
        self, game_id: int, channel_id: int, player: str, *, shut: bool = False
    ) -> GameState | None:
        """The game's state if it denies `player` anything in this channel now (out of the game;
        silenced, in the discussion; `shut`: a player of the game while the discussion is shut,
        which the players' role overwrite keeps in the channel itself but not in its public
        threads). The state is read last, after the other awaits: the answer is about now."""
        info = await self.judge.runtime.service.info(game_id)
        kinds = channel_kinds(info.channels, channel_id)
        state = await self.judge.runtime.service.state(game_id)
        if permissions.denied(state, player, kinds):
            return state
        return state if shut and "game" in kinds and shut_to(state, player) else None

    def _cached(self, channel_id: int) -> object:
        """The channel as the client holds it (a thread the bot can see is held from its
        creation on), without a request: most edits and reactions are in no game at all."""
        return self.judge.client.get_channel(channel_id)

    async def _discussion_thread(self, channel: object) -> tuple[int, int] | None:
        """(the game, its discussion channel) if `channel` is a public thread of a text game's
        discussion channel: a post there is a post in the discussion, under the same rules (a
        silenced player, or anyone while it is shut, could otherwise talk in a thread they open
        there, where the overwrites do not reach). The game's team threads are private threads
        of that channel, where the team talks at night and a silenced player too: never one.
        Every fact the takedown then rests on is public (who is in the game, out of it, silenced
        — announced at dawn — and when the discussion is shut), so a takedown seen by all
        discloses nothing. A forum game's main post is a thread itself: it has none."""
        if not isinstance(channel, discord.Thread) or channel.is_private():
            return None
        parent = channel.parent_id
        game_id = self.judge.runtime.routes.channel_games.get(parent)
        if game_id is None:
            return None
        info = await self.judge.runtime.service.info(game_id)
        if is_forum(info.channels) or int(str(info.channels["game"])) != parent:
            return None  # a thread of the vote channel alone, or of a forum
        teams = {str(v) for k, v in info.channels.items() if k.startswith("thread_")}
        if str(channel.id) in teams:
            return None
        return game_id, parent

    async def _take_down(self, request: Awaitable[object]) -> bool:
        """Delete a post or remove a reaction: whether it is gone (it may be already). Discord
        refuses without Manage Messages: said once in the log, naming nobody (who may not speak
        is the game's business)."""
        try:
            await request
        except discord.NotFound:
            return True
        except discord.Forbidden:
            if not self._told_no_manage_messages:
                self._told_no_manage_messages = True
                log.warning(
                    "cannot take down a post or reaction of a player who may not speak there: "
                    "the bot lacks Manage Messages in a game channel"
                )
            return False
        except discord.HTTPException:  # Discord away: the post stays, as when refused
            return False
        return True

    async def _asker(
        self, interaction: discord.Interaction[Any]
    ) -> tuple[GameState, Seat, Context] | None:
        """The game state, seat and rendering context of the player asking (for autocomplete)."""
        try:
            gid = await find_game(self.judge, interaction)
        except NoGame:
            return None
        state = await self.judge.runtime.service.state(gid)
        seat = state.seat_of(str(interaction.user.id))
        if seat is None:
            return None
        ctx = await self.judge.runtime.contexts.context(
            gid, state, locale=locale_of(self.judge, interaction)
        )
        return state, seat, ctx

    async def _submit_power(
        self,
        interaction: discord.Interaction[Any],
        power: str,
        target: int | None,
        game_id: int | None,
        *,
        passed: bool,
        card: int | None,
    ) -> None:
        """/act and /pass: a power (or an explicit pass) by the player asking. /act without a
        target is no pass: the engine answers whether the power needs one (天下无贼's guard and
        rob take none)."""
        gid = await find_game(self.judge, interaction, game_id)
        try:
            chosen = Power(power)
        except ValueError:
            await respond(
                interaction, text(self.judge, interaction, "actor.no_such_power", power=power)
            )
            return
        command = SubmitPower(
            player=str(interaction.user.id),
            power=chosen,
            target=Seat(target) if target is not None and not passed else None,
            passed=passed,
            at=self.judge.runtime.now_ms(),
            seat=Seat(card) if card is not None else None,
        )
        await answer_command(self.judge, interaction, gid, command)

    @staticmethod
    def _acting_card(
        state: GameState, seat: Seat, power: Power | None, card: object
    ) -> Seat | None:
        """The card acting for an autocomplete: the one named, else the asker's first living
        card holding the power (5.0 双身份), else their seat."""
        mine = state.seats_of(state.seat(seat).player)
        if isinstance(card, int) and Seat(card) in mine:
            return Seat(card)
        if power is None:
            return seat
        holding = [s for s in mine if state.seat(s).alive and power in view_for(state, s).powers]
        return holding[0] if holding else seat

    # -- slash commands ----------------------------------------------------------------------------
    @app_commands.command(
        name="vote", description=_("Vote (the bot posts your vote publicly, stamped now)")
    )
    @app_commands.describe(
        target=_(
            "A seat or abstain (弃权), suggested; by hand: 5号 (seat 5), a name, 弃票 (abstain)"
        )
    )
    async def vote(self, interaction: discord.Interaction[Any], target: str) -> None:
        game_id = await find_game(self.judge, interaction)
        state = await self.judge.runtime.service.state(game_id)
        if not await self.judge.runtime.service.is_active(game_id):  # its log takes no more inputs
            key = "phase.game_over" if state.over else "notice.no_game"
            await respond(interaction, text(self.judge, interaction, key))
            return
        abstain = target == ABSTAIN
        voted: Seat | None = None
        if not abstain:
            target = clipped(target)  # int() refuses 4,300 digits; a reply holds 2,000 characters
            if target.isdecimal():  # isdigit() also takes "²", which int() refuses
                voted = Seat(int(target))
            else:  # typed by hand: read as a vote post's target is (「5号」, 「弃票」, a name)
                read = await self.judge.runtime.votes.typed_target(game_id, target)
                if isinstance(read, VoteFor):
                    voted = Seat(read.seat)
                elif isinstance(read, Abstain):
                    abstain = True
                else:
                    key = "vote.unknown_target"
                    said = plain(target)  # quoted as text, as a post's unreadable target is
                    await respond(interaction, text(self.judge, interaction, key, raw=said))
                    return
        player = str(interaction.user.id)

        async def answer(key: str, params: Mapping[str, Any]) -> None:
            """A refusal, or why the vote is void, in the asker's language: its seats named as
            everywhere (`error_text`: a run-off's candidates as 「1号 阿明」, not `1,3`)."""
            locale = locale_of(self.judge, interaction)
            ctx = await self.judge.runtime.contexts.context(game_id, locale=locale)
            await respond(interaction, error_text(ctx, key, params))

        # the window the vote channel was opened for: a post made now comes after that opening
        opened = (await self.judge.runtime.service.info(game_id)).channels.get(VOTES_WINDOW)

        def refused(now: GameState) -> tuple[str, dict[str, Any]] | None:
            """Why a vote stamped now cannot count (nothing is posted for it), if it cannot."""
            at = self.judge.runtime.now_ms()
            asked = PostVote(
                player=player, post_id="", target=voted, abstain=abstain, at=at, opened_for=opened
            )
            refusal = vote_refusal(now, asked)
            if refusal is None and now.seat_of(player) is None:
                return "actor.not_player", {}
            return refusal

        refusal = refused(await self.judge.runtime.service.state(game_id))
        if refusal is not None:
            await answer(*refusal)
            return
        await interaction.response.defer(ephemeral=True, thinking=True)  # the game may be busy
        posted: list[discord.Message] = []

        async def post(now: GameState) -> tuple[PostVote, int] | None:
            """Under the game's lock: judged again on the state as it is now, then posted; the
            vote is stamped by its post and recorded before any other input (a lock) of the
            game comes in."""
            nonlocal refusal, opened
            info = await self.judge.runtime.service.info(game_id)
            opened = info.channels.get(VOTES_WINDOW)  # as it is under the game's lock
            seat, refusal = now.seat_of(player), refused(now)
            where = vote_channel_for(info.channels, now)
            if refusal is None and where is None:  # a forum day's 投票帖 still being opened
                refusal = ("notice.try_again", {})
            if refusal is not None or where is None or seat is None:
                return None
            ctx = await self.judge.runtime.contexts.context(game_id, now, locale=None)
            channel = await channel_of(self.judge.client, where)
            assert isinstance(channel, discord.TextChannel | discord.Thread)
            line = (
                ctx.t("notice.vote_post_abstain", who=ctx.seat(seat))
                if abstain
                else ctx.t("notice.vote_post", who=ctx.seat(seat), target=ctx.seat(voted))
            )
            message = await channel.send(line)
            posted.append(message)
            at = Instant(to_ms(message.created_at))
            vote = PostVote(
                player=player,
                post_id=str(message.id),
                target=voted,
                abstain=abstain,
                at=at,
                opened_for=opened,
            )
            return vote, message.id

        try:
            outcome = await self.judge.runtime.service.submit_posted(game_id, post)
        except Exception as exc:
            if not posted or await self._vote_recorded(posted[0]):
                raise
            # posted, not recorded: a vote the channel shows and the count would never have
            # (catch-up reads no bot's post), so its post is taken down and the voter told
            log.warning("game %s: a /vote post not recorded (%s): taken down", game_id,
                        type(exc).__name__)  # fmt: skip
            with contextlib.suppress(discord.HTTPException):
                await posted[0].delete()
            await respond(interaction, text(self.judge, interaction, "vote.post_not_recorded"))
            return
        if outcome is None:  # refused on the state under the lock: nothing was posted
            await answer(*(refusal or ("notice.try_again", {})))
        elif outcome.error is not None:
            await answer(outcome.error.key, outcome.error.params)
        else:
            void = outcome.state and next(
                (p for p in outcome.state.posts if p.post_id == str(posted[0].id)), None
            )
            key = void.void_reason if void and void.void_reason else "notice.accepted"
            params = dict(void.void_params) if void and void.void_reason else {}
            await answer(key, params)

    async def _vote_recorded(self, message: discord.Message) -> bool:
        """Whether a /vote post's vote is recorded, after its record failed: it may have been
        (a commit whose outcome is unknown). Not known (the database still away): taken as
        not, so the post is taken down: a recorded vote still counts without its post (a
        deletion retracts nothing), where a post left up for a vote never recorded would
        show a vote the count does not have."""
        try:
            return await self.judge.runtime.service.repo.input_recorded(message.id)
        except Exception:
            return False

    @vote.autocomplete("target")
    async def _vote_targets(
        self, interaction: discord.Interaction[Any], current: str
    ) -> list[app_commands.Choice[str]]:
        try:
            game_id = await find_game(self.judge, interaction)
        except NoGame:
            return []
        state = await self.judge.runtime.service.state(game_id)
        mine_alive = [s for s in state.seats_of(str(interaction.user.id)) if state.seat(s).alive]
        if not mine_alive:
            return []  # no vote to cast: no list (a stranger, a player out of the game)
        ctx = await self.judge.runtime.contexts.context(
            game_id, state, locale=locale_of(self.judge, interaction)
        )
        choices = [app_commands.Choice(name=ctx.t("notice.abstain"), value=ABSTAIN)]
        pool = (
            state.window.candidates if state.window and state.window.candidates else state.alive()
        )
        seat = mine_alive[0]
        groups = rules_for(state).vote_groups(state)  # 无间道: each faction votes within itself
        mine = next((g for g in groups if seat in g.voters), None)
        if mine is not None:
            pool = tuple(s for s in pool if s in mine.candidates)
        # a choice shows no Markdown: the name as written (`seat_label`), not escaped
        choices += [app_commands.Choice(name=ctx.seat_label(s), value=str(s)) for s in pool]
        return [c for c in choices if current.lower() in c.name.lower()][:25]

    @app_commands.command(
        name="role",
        description=_("Your seat, role, powers, teammates and check results (only you see it)"),
    )
    @app_commands.describe(
        game_id=_(
            "Which game (第N局), if you are in several (default: this channel's or your only game)"
        )
    )
    async def role(self, interaction: discord.Interaction[Any], game_id: int | None = None) -> None:
        gid = await find_game(self.judge, interaction, game_id)
        state = await self.judge.runtime.service.state(gid)
        seat = state.seat_of(str(interaction.user.id))
        if seat is None:
            await respond(interaction, text(self.judge, interaction, "actor.not_player"))
            return
        ctx = await self.judge.runtime.contexts.context(
            gid, state, locale=locale_of(self.judge, interaction)
        )
        notice = await dm_notice(self.judge, interaction, gid)  # a DM of theirs failed: say so
        described = describe_view(ctx, state, seat)
        await respond(interaction, f"{described}\n{notice}" if notice else described)

    @app_commands.command(
        name="act", description=_("Use a power (at night; by day a day power such as veto)")
    )
    @app_commands.describe(
        power=_("The power to use (suggested: your powers now)"),
        target=_(
            "Target's seat number (suggested); leave out for a power on nobody, e.g. 认匪 (confess)"
        ),
        card=_("5.0 双身份 (two cards): which card acts (default: the first holding the power)"),
        game_id=_(
            "Which game (第N局), if you are in several (default: this channel's or your only game)"
        ),
    )
    async def act(
        self,
        interaction: discord.Interaction[Any],
        power: str,
        target: int | None = None,
        card: int | None = None,
        game_id: int | None = None,
    ) -> None:
        await self._submit_power(interaction, power, target, game_id, passed=False, card=card)

    async def _power_choices(
        self, interaction: discord.Interaction[Any], *, passable: bool = False
    ) -> list[app_commands.Choice[str]]:
        """The asker's powers now (of the card named, else of all their cards); `passable`:
        only those /pass can pass (认匪 cannot: not confessing is doing nothing)."""
        found = await self._asker(interaction)
        if found is None:
            return []
        state, seat, ctx = found
        card = getattr(interaction.namespace, "card", None)
        mine = state.seats_of(state.seat(seat).player)
        cards = [Seat(card)] if isinstance(card, int) and Seat(card) in mine else mine
        powers = dict.fromkeys(p for c in cards for p in view_for(state, c).powers)
        shown = [p for p in powers if not (passable and p in UNPASSABLE)]
        return [app_commands.Choice(name=ctx.t(f"power.{p.value}"), value=p.value) for p in shown][
            :25
        ]

    @act.autocomplete("power")
    async def _powers(
        self, interaction: discord.Interaction[Any], current: str
    ) -> list[app_commands.Choice[str]]:
        return await self._power_choices(interaction)

    @act.autocomplete("target")
    async def _targets(
        self, interaction: discord.Interaction[Any], current: str
    ) -> list[app_commands.Choice[int]]:
        found = await self._asker(interaction)
        power = getattr(interaction.namespace, "power", None)
        if found is None or power not in {p.value for p in Power}:
            return []
        state, seat, ctx = found
        if Power(power) in rules_for(state).untargeted_powers:
            return []  # 天下无贼: guarding or robbing 傻根 names no seat
        card = getattr(interaction.namespace, "card", None)
        acting = self._acting_card(state, seat, Power(power), card) or seat
        # what the engine would accept from this card now: nothing for a power it lacks
        targets = valid_targets(state, acting, Power(power), self.judge.runtime.now_ms())
        shown = {s: ctx.seat_label(s) for s in targets}  # as written: a choice shows no Markdown
        return [
            app_commands.Choice(name=shown[s], value=int(s))
            for s in targets
            if current.lower() in shown[s].lower()
        ][:25]

    @act.autocomplete("card")
    async def _cards(
        self, interaction: discord.Interaction[Any], current: str
    ) -> list[app_commands.Choice[int]]:
        """The asker's living cards (5.0 双身份), each with its role (only they see it)."""
        found = await self._asker(interaction)
        if found is None:
            return []
        state, seat, ctx = found
        mine = [s for s in state.seats_of(state.seat(seat).player) if state.seat(s).alive]
        return [
            app_commands.Choice(
                name=label(f"{ctx.seat_label(s)} {ctx.t(f'role.{state.seat(s).role.value}')}"),
                value=int(s),
            )
            for s in mine
        ][:25]

    @app_commands.command(name="pass", description=_("Explicitly pass on a night power (不行使)"))
    @app_commands.describe(
        power=_("The night power you pass on (不行使) tonight (suggested)"),
        card=_("5.0 双身份 (two cards): which card passes (default: the first holding the power)"),
        game_id=_(
            "Which game (第N局), if you are in several (default: this channel's or your only game)"
        ),
    )
    async def pass_(
        self,
        interaction: discord.Interaction[Any],
        power: str,
        card: int | None = None,
        game_id: int | None = None,
    ) -> None:
        await self._submit_power(interaction, power, None, game_id, passed=True, card=card)

    @pass_.autocomplete("power")
    async def _passable(
        self, interaction: discord.Interaction[Any], current: str
    ) -> list[app_commands.Choice[str]]:
        return await self._power_choices(interaction, passable=True)

    pass_.autocomplete("card")(_cards)

    @app_commands.command(name="lastwords", description=_("Give your last words (遗言)"))
    @app_commands.describe(
        game_id=_(
            "Which game (第N局), if you are in several (default: this channel's or your only game)"
        )
    )
    async def lastwords(
        self, interaction: discord.Interaction[Any], game_id: int | None = None
    ) -> None:
        gid = await find_game(self.judge, interaction, game_id)
        state = await self.judge.runtime.service.state(gid)
        if state.over:  # none after the end: the engine's refusal, before any box opens
            await respond(interaction, text(self.judge, interaction, "phase.game_over"))
            return
        mine = state.seats_of(str(interaction.user.id))  # 5.0: the last card out has them
        if not any(seat in state.last_words_open for seat in mine):
            await respond(interaction, text(self.judge, interaction, "lastwords.not_entitled"))
            return
        box = LastWordsModal(self.judge, gid, interaction.id, locale_of(self.judge, interaction))
        await interaction.response.send_modal(box)

    @app_commands.command(name="choose", description=_("Pick who leaves among the tied players"))
    @app_commands.describe(
        target=_("The seat number of the tied player (平票者) who leaves"),
        game_id=_(
            "Which game (第N局), if you are in several (default: this channel's or your only game)"
        ),
    )
    async def choose(
        self, interaction: discord.Interaction[Any], target: int, game_id: int | None = None
    ) -> None:
        gid = await find_game(self.judge, interaction, game_id)
        command = ChooseTied(
            player=str(interaction.user.id), target=Seat(target), at=self.judge.runtime.now_ms()
        )
        await answer_command(self.judge, interaction, gid, command)


FRESH_EDIT = dt.timedelta(minutes=5)
"""An update of a post not in the client's cache is its author's edit only if its edit time is
this recent: a pin or a preview of a post edited long ago carries that old edit time. Read
against the bot's clock (kept right by the host's time service, as the deadlines need it)."""


def _persons_edit(payload: discord.RawMessageUpdateEvent, now: dt.datetime) -> bool:
    """Whether a message update is its author's edit of a person's post: its text given, a new
    edit time (Discord also sends updates for a pin, a link preview or embeds suppressed, with
    the post's last edit time, if any: the cached post's, or long before `now` when the post is
    not cached, as after a restart), no bot's, webhook's or system message."""
    data = payload.data
    author = data.get("author") or {}
    if not (
        "content" in data
        and data.get("edited_timestamp")
        and not author.get("bot")
        and not data.get("webhook_id")
        and data.get("type", 0) in (0, 19)  # a post, or a reply
    ):
        return False
    edited = discord.utils.parse_time(str(data["edited_timestamp"]))
    before = payload.cached_message
    if before is not None:
        return before.edited_at != edited or before.content != data["content"]
    return now - edited <= FRESH_EDIT


def _edited_post(payload: discord.RawMessageUpdateEvent) -> ChannelPost | None:
    """An edited post as the catch-up would read it: its text now, its own time, edited (None:
    the update does not say its author)."""
    data = payload.data
    author = (data.get("author") or {}).get("id")
    if author is None:
        return None
    return ChannelPost(
        id=payload.message_id,
        author_id=int(author),
        content=str(data["content"]),
        created_at=discord.utils.snowflake_time(payload.message_id),
        edited=True,
    )


def channel_kinds(channels: Mapping[str, Any], channel_id: int) -> frozenset[str]:
    """What one of a game's channels is to it ("game": the discussion, "vote"), as its overwrites
    are set: a forum game's main post is its discussion, its 投票帖s and the forum its vote
    channel (the forum's overwrite governs them all; a silence keeps to the main post)."""
    if is_forum(channels):
        return frozenset({"game" if channel_id == int(str(channels["game"])) else "vote"})
    return frozenset(n for n in permissions.CHANNELS if int(str(channels[n])) == channel_id)


def is_silenced(state: GameState, player: str) -> bool:
    """Whether one of `player`'s cards is under 森林老人's silence now."""
    return any(s in silenced(state) for s in state.seats_of(player))


def shut_to(state: GameState, player: str) -> bool:
    """Whether the discussion is shut to `player` now: they play in the game and it is between
    a 看表帖 and the next window, or waiting for a victim's choice or a last act
    (`engine.speech.channels_open`: what the players' role overwrite says in the channel)."""
    now = channels_open(state)
    return now is not None and not now.game and bool(state.seats_of(player))


def describe_view(ctx: Context, state: GameState, seat: Seat) -> str:
    """A player's private view as text: seat (or each of their cards), role (with the side a mine
    plays for, and the card dealt where it has turned), powers now and later (as the role
    message says them: `role_params`), whom they know, their public identity where the ruleset
    has one, checks, submissions."""
    cards = state.seats_of(state.seat(seat).player)
    views = [view_for(state, card) for card in cards]
    view = view_for(state, seat)
    lines: list[str] = []
    if len(cards) > 1:  # 5.0 双身份: every card, its role and powers
        items = [
            ctx.t(
                "role_msg.card",
                seat=ctx.seat(v.viewer),
                role=role_text(ctx, role_params(v, cards)),
                powers=_card_powers(ctx, v, cards),
                out="" if state.seat(card).alive else ctx.t("role_msg.card_out"),
            )
            for card, v in zip(cards, views, strict=True)
        ]
        sep = "；" if ctx.locale == "zh-CN" else "; "
        lines.append(ctx.t("role_msg.cards_line", cards=sep.join(items)))
    else:
        p = role_params(view, cards)
        lines.append(
            ctx.t(
                "role_msg.dealt",
                seat=int(seat),
                role=role_text(ctx, p),
                powers_line="",
                mates_line="",
            ).rstrip()  # its powers and mates on lines of their own
        )
        powers = [ctx.t(f"power.{x.value}") for x in view.powers]
        if state.seat(seat).alive:  # as the role message says them: now, and later
            lines.append(role_powers_line(ctx, powers, later_powers(ctx, p.get("later"))).strip())
        elif powers:  # out of the game: a power on leaving it, until the next lock
            lines.append(role_powers_line(ctx, powers, []).strip())
    known = _known(ctx, state, cards, views)
    if known:  # nobody known: no line
        lines.append(ctx.t("role_msg.mates_line", teammates=known))
    public = view.seats[int(seat) - 1].public
    if public is not None:  # 无间道: the public identities are everyone's knowledge
        lines.append(ctx.t("role_msg.public_line", public=ctx.t(f"public.{public.value}")))
        roster = ",".join(f"{i.seat}:{i.public.value}" for i in view.seats if i.public)
        lines.append(ctx.t("role_msg.roster_line", lines=public_roster(ctx, roster)))
    checks = dict.fromkeys(c for v in views for c in v.checks)
    for night, checked, result in checks:
        lines.append(check_line(ctx, night, checked, result.value))
    submissions = dict.fromkeys(s for v in views for s in v.submissions)
    passed = ctx.t("power.pass")  # an explicit pass (不行使), in the player's language
    for who, power, target in submissions:
        shown = ctx.seat(target) if target is not None else passed
        if target is None and power in rules_for(state).untargeted_powers:
            used = state.submissions.latest().get((who, power))
            shown = ctx.t("power.use") if used is not None and used.untargeted else passed
        lines.append(
            ctx.t(
                "notice.submission_line",
                seat=ctx.seat(who),
                power=ctx.t(f"power.{power.value}"),
                target=shown,
            )
        )
    if any(v.last_words_due for v in views):
        lines.append(ctx.t("lastwords_msg.prompt"))
    if not any(state.seat(card).alive for card in cards):
        lines.append(ctx.t("actor.out_of_game"))
    return "\n".join(lines)


def _powers_text(ctx: Context, powers: Sequence[Power]) -> str:
    sep = "、" if ctx.locale == "zh-CN" else ", "
    return sep.join(ctx.t(f"power.{p.value}") for p in powers)


def _card_powers(ctx: Context, view: PlayerView, cards: Sequence[Seat]) -> str:
    """A card's powers in the list of a player's cards (5.0 双身份): now, and later or on
    leaving the game (as its role message says them). Empty: none."""
    text = (
        ctx.t("role_msg.card_powers", powers=_powers_text(ctx, view.powers)) if view.powers else ""
    )
    later = later_powers(ctx, role_params(view, cards).get("later"))
    if later:
        sep = "；" if ctx.locale == "zh-CN" else "; "
        text += ctx.t("role_msg.card_later", powers=sep.join(later))
    return text


def _known(
    ctx: Context, state: GameState, cards: Sequence[Seat], views: Sequence[PlayerView]
) -> str:
    """Whom the player knows by the rules (`PlayerView.known` of each of their cards: teammates,
    and whoever else the ruleset lets them see — 5.0's mole, 无间道's leader), each with the role
    they know, for the whole game: one out of the game is marked so. Empty: nobody."""
    roles: dict[Seat, str] = {}
    for v in views:
        for seat, role in v.known:
            if seat not in cards:
                roles.setdefault(seat, role.value)
    listed = sorted(roles)
    return known_seats(
        ctx,
        seats_text(listed),
        ",".join(f"{seat}:{roles[seat]}" for seat in listed),
        seats_text(s for s in listed if not state.seat(s).alive),
    )
