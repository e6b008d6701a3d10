"""What the cogs and views share: the game an interaction is about, who may moderate it, the window
it arrived in, and answers in the asker's language."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands

from bot.discord.answering import CONFIRMATIONS, answering
from bot.discord.judge import judge_of
from bot.records.i18n import render
from bot.records.render import error_text, render_private
from bot.records.split import split_text
from bot.runtime.service import Outcome
from bot.store import GameNotFound, GameStatus, OutboxItem
from engine import codec
from engine.commands import Command
from engine.effects import Whisper
from engine.state import GameState

if TYPE_CHECKING:
    from bot.discord.judge import Judge

log = logging.getLogger(__name__)


class NoGame(Exception):
    """The interaction is not about any game (with the message key saying why)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


async def find_game(
    judge: Judge, interaction: discord.Interaction[Any], game_id: int | None = None
) -> int:
    """The game of this channel (or thread), or the user's only active game in a DM."""
    if game_id is not None:
        try:
            info = await judge.runtime.service.info(game_id)
        except GameNotFound:
            raise NoGame("notice.no_game") from None
        # A game is reached from its own server, or from a DM by one of its players.
        if interaction.guild is not None:
            if info.server_id != interaction.guild.id:
                raise NoGame("notice.no_game")
        else:
            repo = judge.runtime.service.repo
            held = await repo.games_of_user(interaction.user.id, statuses=tuple(GameStatus))
            if all(game != game_id for game, _seat in held):
                raise NoGame("notice.no_game")
        return game_id
    channel = interaction.channel
    if channel is not None:
        for cid in (channel.id, getattr(channel, "parent_id", None)):
            if cid is not None and cid in judge.runtime.routes.channel_games:
                return judge.runtime.routes.channel_games[cid]
        if interaction.guild is not None:
            # A game that ended before the bot restarted is not routed (recovery routes the
            # games in play): its channel still names it, by the sign-up that became it, as it
            # did before the restart (`/game record` there after the end); a thread of it too.
            lobbies = judge.runtime.service.repo.lobbies
            for cid in (channel.id, getattr(channel, "parent_id", None)):
                ended = await lobbies.newest_game(cid) if cid is not None else None
                if ended is not None:
                    return ended
    ids = sorted(
        {
            game
            for game, _seat in await judge.runtime.service.repo.games_of_user(interaction.user.id)
        }
    )
    if len(ids) == 1:
        return int(ids[0])
    raise NoGame("notice.no_game" if not ids else "notice.which_game")


def is_moderator(judge: Judge, member: discord.abc.User) -> bool:
    """Moderator role (from the config) or Manage Server, on this server. @everyone never
    counts (a configured id that happens to be the server's own id names every member)."""
    if not isinstance(member, discord.Member) or member.bot:
        return False
    if member.guild_permissions.manage_guild:
        return True
    wanted = judge.runtime.settings.discord.moderator_role
    return any(wanted.matches(role.id, role.name) for role in member.roles if not role.is_default())


async def plays_in(judge: Judge, game_id: int, user_id: int) -> bool:
    """Whether the user holds, or held, a seat of this game (any term: a replaced player too)."""
    return any(term.user_id == user_id for term in await judge.runtime.service.repo.seats(game_id))


async def moderates(
    judge: Judge, interaction: discord.Interaction[Any], game_id: int | None
) -> bool:
    """The moderators' check (/mod and the moderators' context menus): a moderator of the
    server, and for a game one who holds no seat in it. Says why not to the asker."""
    if not is_moderator(judge, interaction.user):
        await respond(interaction, text(judge, interaction, "notice.moderators_only"))
        return False
    if game_id is not None and await plays_in(judge, game_id, interaction.user.id):
        await respond(interaction, text(judge, interaction, "notice.mod_plays_here"))
        return False
    return True


async def moderators_of(judge: Judge, game_id: int) -> list[discord.Member]:
    """The members who moderate this game: never one who plays in it. Listed from Discord (the
    member cache holds only the members the bot has met), else from the cache."""
    info = await judge.runtime.service.info(game_id)
    guild = judge.client.get_guild(info.server_id)
    if guild is None:
        return []
    try:
        members = [m async for m in guild.fetch_members(limit=None)]
    except discord.HTTPException:
        members = list(guild.members)
    players = {term.user_id for term in await judge.runtime.service.repo.seats(game_id)}
    return [m for m in members if m.id not in players and is_moderator(judge, m)]


FORM_TIMEOUT = 30 * 60
"""Seconds a form (a modal) opened and not submitted is kept, then dropped from the client's
store: each has a custom id of its own (the interaction that opened it), so none is ever
replaced by another, and one never submitted would otherwise be kept for good."""

DM_UNSEEN = "dm_unseen:"
"""Game-row key prefix: a player whose DM failed and who has not been told yet (a key per
player, so telling one never rewrites another's mark, and a substitute never inherits the mark
of the player they replaced)."""


async def dm_notice(judge: Judge, interaction: discord.Interaction[Any], game_id: int) -> str:
    """The line telling the player asking that the bot could not DM them ("" if nothing is
    due), said once: the private side of a failed DM (only a failure at the deal is public).
    The cached row says whether a mark may be there; only the answer that takes it from the
    store says it (two answers at once both see the mark in the cache)."""
    info = await judge.runtime.service.info(game_id)
    due = f"{DM_UNSEEN}{interaction.user.id}"
    if not info.channels.get(due) or not await judge.runtime.service.take_channel(game_id, due):
        return ""
    return text(judge, interaction, "notice.dm_closed_you", game=game_id)


def text(judge: Judge, interaction: discord.Interaction[Any], key: str, **params: object) -> str:
    """A catalog text in the language of the person asking."""
    return render(locale_of(judge, interaction), key, params)


def say(locale: str, key: str, **params: object) -> str:
    """A catalog text in `locale`."""
    return render(locale, key, params)


def locale_of(
    judge: Judge, interaction: discord.Interaction[Any], default: str | None = None
) -> str:
    """The language to answer a person in: theirs if we speak it, else the game's."""
    tag = str(interaction.locale)
    if tag.startswith("zh"):
        return "zh-CN"
    if tag.startswith("en"):
        return "en"
    return default or judge.runtime.settings.game.language


def public_locale(judge: Judge) -> str:
    """The language of a public post about no one game (standings, a new season): the
    configured one, whoever asked (a game's own posts are in that game's language)."""
    return judge.runtime.settings.game.language


_ATTACHED = frozenset({"view", "embed", "embeds", "file", "files"})
"""What an answer carries besides its text: with a long answer in several messages, the last."""


async def respond(interaction: discord.Interaction[Any], text: str, **kwargs: Any) -> None:
    """Answer privately (ephemeral in a guild), whether or not the interaction was deferred. An
    answer longer than a Discord message (`/role` after many nights of checks, `/game status`
    or `/mod pending` naming 32 cards under long names) goes out as several, in order
    (`split_text`: cut at a line, else between two items of a list)."""
    every = {k: v for k, v in kwargs.items() if k not in _ATTACHED}  # the view: last only
    *first, last = split_text(text)
    for part, extra in [*((part, every) for part in first), (last, kwargs)]:
        if interaction.response.is_done():
            await interaction.followup.send(part, ephemeral=True, **extra)
        else:
            await interaction.response.send_message(part, ephemeral=True, **extra)
    interaction.extras[ANSWERED] = True


FORM_PREFIX = "faguan:"
"""How the custom id of each of the bot's forms (modals) begins (`form_custom_id`)."""


def form_custom_id(kind: str, game_id: int, opened: int) -> str:
    """A form's custom id, `faguan:{kind}:{game}:{opened}`: discord.py keeps live forms by custom
    id alone (the opening interaction's id keeps two people's apart), and one sent after the
    bot dropped it is known by it (`client.dropped_form`)."""
    return f"{FORM_PREFIX}{kind}:{game_id}:{opened}"


ANSWERED = "faguan_answered"
"""`interaction.extras` key: the person has their answer (`respond`). A deferred interaction's
response type says only that it was deferred, not whether the answer followed."""


async def answer_failure(
    judge: Judge, interaction: discord.Interaction[Any], error: BaseException, what: str
) -> None:
    """An unexpected failure (Discord or the database away, or a bug): logged by its type alone
    (its message may carry a hidden role or target), and the person asked to try again unless
    they already have an answer, so that no interaction is left unanswered."""
    log.error("%s failed: %s", what, type(error).__name__)
    if judge.runtime.metrics is not None:
        judge.runtime.metrics.discord_errors.inc()
    log.debug("%s failed", what, exc_info=error)
    if interaction.extras.get(ANSWERED) or interaction.response.type not in (
        None,
        discord.InteractionResponseType.deferred_channel_message,  # "thinking…": still owed
        discord.InteractionResponseType.deferred_message_update,  # a slow click, deferred
    ):
        return
    with contextlib.suppress(discord.HTTPException):
        await respond(interaction, say(locale_of(judge, interaction), "notice.try_again"))


class AnswersFailures:
    """For forms and DM components: a failure is answered as a command's is (`answer_failure`).
    discord.py's own `on_error` only logs, leaving the person without an answer."""

    async def on_error(
        self, interaction: discord.Interaction[Any], error: Exception, /, *item: object
    ) -> None:
        await answer_failure(judge_of(interaction.client), interaction, error, type(self).__name__)


async def answered_no_game(
    judge: Judge, interaction: discord.Interaction[Any], error: Exception
) -> bool:
    """A cog's command error that is a ``NoGame``: the person is told why there is no game
    (True). Anything else is left to the tree's ``on_error``, which answers and logs it."""
    original = getattr(error, "original", error)
    if not isinstance(original, NoGame):
        return False
    key = original.key
    if key == "notice.which_game" and not _takes_game_id(interaction):
        key = "notice.which_game_here"  # `/vote` has no game_id to name one with
    await respond(interaction, text(judge, interaction, key))
    return True


def _takes_game_id(interaction: discord.Interaction[Any]) -> bool:
    """Whether the command asked has a `game_id` option (naming a game is the way out of
    several)."""
    command = interaction.command
    return isinstance(command, app_commands.Command) and any(
        p.name == "game_id" for p in command.parameters
    )


async def answer_command(
    judge: Judge,
    interaction: discord.Interaction[Any],
    game_id: int,
    command: Command,
    *,
    name: str | None = None,
    by_menu: bool = False,
) -> Outcome:
    """Submit a person's command and answer them privately: done, or exactly why not
    (`name`: a substitute's display name, recorded with their seat). A choice is confirmed
    once: in this answer for a command, by the DM alone for a menu in the DM (`by_menu`).

    The answer goes as soon as the input is recorded (or refused), before its effects are
    performed: what else it does in private (the team thread a shot player leaves, a check's
    result) depends on others' roles, and the answer's time must not. Its confirmation is read
    from what the input recorded, and is then not DMed as well (`answering`)."""
    answers: list[asyncio.Task[None]] = []

    def recorded(outcome: Outcome, pending: Sequence[OutboxItem]) -> None:
        answer = _answer(judge, interaction, game_id, outcome, pending, by_menu=by_menu)
        answers.append(asyncio.ensure_future(answer))

    with contextlib.nullcontext() if by_menu else answering(game_id, str(interaction.user.id)):
        task = asyncio.ensure_future(  # (in this context: `answering` sees its deliveries)
            judge.runtime.service.submit(game_id, command, name=name, recorded=recorded)
        )
        done, _ = await asyncio.wait({task}, timeout=DEFER_AFTER)
        if not done and not answers:
            async with _replying(interaction):  # not while the answer is going out
                if not answers and not interaction.response.is_done():
                    with contextlib.suppress(discord.HTTPException):  # expired: answered later
                        await interaction.response.defer(ephemeral=True, thinking=not by_menu)
        try:
            return await task  # its effects performed too (or left for their retry)
        finally:
            for answering_task in answers:
                await answering_task


def _replying(interaction: discord.Interaction[Any]) -> asyncio.Lock:
    """The interaction's first response is given once: a deferral and the answer never both."""
    lock: asyncio.Lock = interaction.extras.setdefault("faguan_replying", asyncio.Lock())
    return lock


async def _answer(
    judge: Judge,
    interaction: discord.Interaction[Any],
    game_id: int,
    outcome: Outcome,
    pending: Sequence[OutboxItem],
    *,
    by_menu: bool,
) -> None:
    """`answer_command`'s answer, once the input is recorded (`pending`: what it recorded)."""
    confirmations = [] if by_menu else _confirmations(outcome, pending, str(interaction.user.id))
    ctx = await judge.runtime.contexts.context(game_id, locale=locale_of(judge, interaction))
    if outcome.error is not None:
        answer = error_text(ctx, outcome.error.key, outcome.error.params)
    elif confirmations:  # the confirmation itself, in the asker's language
        answer = "\n".join(render_private(ctx, whisper) for whisper in confirmations)
    elif by_menu:
        answer = ""  # the DM confirms
    else:
        answer = ctx.t("notice.accepted")
    notice = await dm_notice(judge, interaction, game_id)  # a DM of theirs failed: say so
    shown = "\n".join(line for line in (answer, notice) if line)
    try:
        async with _replying(interaction):
            if shown:
                await respond(interaction, shown)
            elif not interaction.response.is_done():
                await interaction.response.defer()  # the click is taken; nothing more to say
                interaction.extras[ANSWERED] = True
    except discord.NotFound:  # the interaction expired before its answer: the DM confirms
        log.debug("game %s: an answer came after its interaction expired", game_id)
        if confirmations:  # not DMed for this answer: never lost
            with contextlib.suppress(discord.HTTPException):
                await interaction.user.send(answer)


def _confirmations(outcome: Outcome, pending: Sequence[OutboxItem], asker: str) -> list[Whisper]:
    """What the input recorded to confirm the asker's own choice (`answering.CONFIRMATIONS`)."""
    state = outcome.state
    if state is None:
        return []
    found = []
    for item in pending:
        if item.payload.get("type") == "Whisper" and item.payload.get("key") in CONFIRMATIONS:
            whisper = codec.load(item.payload)
            if isinstance(whisper, Whisper) and state.seat(whisper.seat).player == asker:
                found.append(whisper)
    return found


DEFER_AFTER = 1.5
"""Seconds a command may take before its interaction is deferred, if not answered by then:
Discord drops an interaction not answered within 3 s, and a command waits for the game's turn
(a replacement also for the private effects under way)."""


async def confirm_role(
    judge: Judge, interaction: discord.Interaction[Any], game_id: int, seat: int
) -> None:
    """Record that a player has seen their role: a row per seat and term, written only for the
    seat's present holder (a replaced player is refused), a repeat changing nothing."""
    runtime = judge.runtime
    if not await runtime.service.repo.lobbies.confirm(game_id, seat, interaction.user.id):
        await respond(interaction, text(judge, interaction, "actor.not_player"))
        return
    ctx = await runtime.contexts.context(game_id, locale=locale_of(judge, interaction))
    await respond(interaction, ctx.t("notice.confirmed"))


# -- the window a command arrived in ---------------------------------------------------------------


class JudgeTree(discord.app_commands.CommandTree):
    """The command tree, noting as each command arrives which window its game had open."""

    async def interaction_check(self, interaction: discord.Interaction[Any]) -> bool:
        note_arrival(interaction)  # before the first await: nothing can have moved yet
        await read_on_arrival(interaction)  # a game not in memory: read now, before any check
        return True


def note_arrival(interaction: discord.Interaction[Any]) -> None:
    """Record in `interaction.extras["windows"]` the window open (its index, or None) in each game
    the interaction may be about, as the bot takes it up — without I/O, so no deadline can lock in
    between — and in `interaction.extras["states"]` the whole state then. A clock command is bound
    to that window (`window_at_arrival`), not to whatever window is open after the awaits of the
    command's own checks; a moderator's command names what it saw (`state_at_arrival`: the seat's
    holder, the deadline), so a second moderator's at the same moment does not act twice. A game
    not in memory (after a restart or a reload, or another process's game) is listed in
    `interaction.extras["unread"]`, for `read_on_arrival` to read at the first await."""
    try:
        runtime = judge_of(interaction.client).runtime
    except TypeError:
        return
    if not runtime.started:
        return
    routes = runtime.routes.channel_games
    parent = getattr(interaction.channel, "parent_id", None)
    here = {routes[c] for c in (interaction.channel_id, parent) if c in routes}
    games = set(here)
    named = _option(interaction.data, "game_id")
    if isinstance(named, int):
        games.add(named)
    windows: dict[int, int | None] = {}
    states: dict[int, GameState] = {}
    unread: list[int] = []
    for game_id in sorted(games):
        state = runtime.service.cached_state(game_id)
        if state is not None:
            windows[game_id] = open_window(state)
            states[game_id] = state
        elif game_id in here and interaction.type is not discord.InteractionType.autocomplete:
            # only the game of the channel it is used in (a moderator's command acts on that
            # one): a game id typed in an option is anyone's to type, and is checked first
            unread.append(game_id)
    interaction.extras["windows"] = windows
    interaction.extras["states"] = states
    interaction.extras["unread"] = unread


async def read_on_arrival(interaction: discord.Interaction[Any]) -> None:
    """Read, once and at once — before the awaits of the command's own checks, in which another
    command may change the game — the state of each game `note_arrival` found not in memory, and
    record it (and the window open in it) as that game's state at arrival. A game that cannot be
    read now (none by that id, the database away) is left to the command, which says why; its
    state at arrival is then the first read of it (`state_at_arrival`), and never a second."""
    unread = interaction.extras.pop("unread", ())
    if not unread:
        return
    runtime = judge_of(interaction.client).runtime
    for game_id in unread:
        try:
            state = await runtime.service.state(game_id)
        except Exception as exc:  # the command reads it again, and answers its failure
            log.debug("game %s: not read on arrival (%s)", game_id, type(exc).__name__)
            continue
        _arrived(interaction, game_id, state)


def _arrived(interaction: discord.Interaction[Any], game_id: int, state: GameState) -> None:
    """Record `state` as the game's state when the interaction arrived (a first one stays)."""
    interaction.extras.setdefault("states", {}).setdefault(game_id, state)
    interaction.extras.setdefault("windows", {}).setdefault(game_id, open_window(state))


def open_window(state: GameState) -> int | None:
    """The index of the window open in `state` (None: none is open)."""
    return state.window_index if state.window is not None else None


def _option(data: Any, name: str) -> Any:
    """The value of the option `name` anywhere in a command's (sub)options, if given."""
    if not isinstance(data, dict):
        return None
    for option in data.get("options", ()) or ():
        if option.get("name") == name and "value" in option:
            return option["value"]
        found = _option(option, name)
        if found is not None:
            return found
    return None


async def window_at_arrival(
    judge: Judge, interaction: discord.Interaction[Any], game_id: int
) -> int | None:
    """The window the game had open when the interaction arrived (see `note_arrival`): the one
    open in `state_at_arrival`, so the window and the deadline seen always come from one state."""
    windows = interaction.extras.get("windows", {})
    if game_id in windows:
        return windows[game_id]  # type: ignore[no-any-return]
    return open_window(await state_at_arrival(judge, interaction, game_id))


async def state_at_arrival(
    judge: Judge, interaction: discord.Interaction[Any], game_id: int
) -> GameState:
    """The game's state when the interaction arrived (see `note_arrival`, `read_on_arrival`). A
    game read neither then nor on arrival (not named by the interaction's channel or options) is
    read now, once: the first read is kept on the interaction, and every later reader of it (the
    window, the deadline seen, a seat's holder) has that same state."""
    states = interaction.extras.get("states", {})
    if game_id in states:
        return states[game_id]  # type: ignore[no-any-return]
    state = await judge.runtime.service.state(game_id)
    _arrived(interaction, game_id, state)
    return interaction.extras["states"][game_id]  # type: ignore[no-any-return]
