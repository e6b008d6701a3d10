"""Non-interference kit: one bot game on simcord, played by a script of steps, and what every
non-privileged observer can see after each step, with ids normalized away.

Two games that differ only in hidden information (two seats' roles swapped at the deal) are
played with the same script: the same public inputs (votes, last words, moderator overrides, DM
closures, the observers' own commands) at the same simulated times; the hidden inputs (night
powers) follow the roles, so in the swapped game the step is made by the other seat of the pair.
`test_rb_noninterference.py` compares the two games' observations step by step."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from simcord import BackendError, ChannelHandle, Env, InteractionResult, MemberActor
from simcord.backend.access import channel_accessible

import bot.runtime.service
from bot.discord.client import FaguanBot
from engine.events import GameCreated
from engine.model import Seat
from engine.state import GameState
from engine.view import PlayerView, view_for

CANNOT_DM = 50007


def quick_settle(env: Env) -> None:
    """Settle with a 2 ms poll instead of simcord's 50 ms. While the bot waits on the database's
    thread, simcord's settling sleeps its idle interval between looks; over the hundreds of steps
    of a game that sleeping was half the wall time. Only how often it looks changes, not when it
    calls the bot settled (simcord 3.2.1's `_settle_internal` decides that from the bot's pending
    work)."""
    settle = env._settle_internal
    env._settle_internal = functools.partial(settle, idle=0.002)  # type: ignore[method-assign]


# -- the deal: recorded (game A) or with two seats' roles swapped (game B) ------------------------


def swapped(created: GameCreated, pair: tuple[int, int]) -> GameCreated:
    """The same deal with the roles of seats `pair` exchanged (nothing else changes)."""
    a, b = pair
    roles = list(created.roles)
    roles[a - 1], roles[b - 1] = roles[b - 1], roles[a - 1]
    return dataclasses.replace(created, roles=tuple(roles))


@contextlib.contextmanager
def dealing(deals: list[GameCreated], pair: tuple[int, int] | None) -> Iterator[None]:
    """The bot deals as always (`bot.runtime.service` calls `engine.new_game`); the deal is recorded in
    `deals`, and with `pair` the two seats' roles are swapped before anything is stored."""
    real = bot.runtime.service.new_game

    def hooked(**kwargs: Any) -> GameCreated:
        created = real(**kwargs)
        if pair is not None:
            created = swapped(created, pair)
        deals.append(created)
        return created

    bot.runtime.service.new_game = hooked  # type: ignore[attr-defined]
    try:
        yield
    finally:
        bot.runtime.service.new_game = real  # type: ignore[attr-defined]


# -- steps -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One input. `seat` is a card for `power` (mapped through the swap in game B: the power
    follows the role); for everything else the actor is a member, by name."""

    kind: str
    who: str = ""
    seat: int = 0
    args: tuple[tuple[str, Any], ...] = ()

    def __str__(self) -> str:
        args = " ".join(f"{k}={v}" for k, v in self.args)
        return f"{self.kind} {self.who or self.seat or ''} {args}".strip()


@dataclass(frozen=True)
class Someone:
    """A slash option naming a member (`/mod replace`'s substitute): the same member, by name, in
    both games."""

    name: str

    def __str__(self) -> str:
        return f"@{self.name}"


LAST_VOTE_POST = "<last vote post>"
"""A slash option naming the newest member's message where votes are posted (`/mod void`): each
game's own message id for the same post."""


@dataclass
class Observed:
    """What a step showed: public items (the spectator's and every seated observer's), and the
    answers the observers got. Keys name the viewer: `spectator`, or a member's name."""

    public: dict[str, Any]
    answers: dict[str, list[Any]]
    views: dict[str, tuple[PlayerView, ...]]
    """Each seated member's engine views (one per card): who knows the same in both games."""
    public_view: PlayerView


# -- normalizing what Discord shows ----------------------------------------------------------------

SNOWFLAKE = re.compile(r"\b\d{15,21}\b")
MENTION = re.compile(r"<(@!?|@&|#)(\d+)>")


@dataclass
class Names:
    """Ids → stable names (members, roles, channels); any other snowflake becomes `<id>`."""

    env: Env
    guild_id: int
    cache: dict[int, str] = field(default_factory=dict)

    def of(self, ident: int) -> str:
        if ident in self.cache:
            return self.cache[ident]
        backend = self.env.backend
        guild = backend.guilds[self.guild_id]
        name: str
        if ident in guild.roles:
            name = f"role:{guild.roles[ident].name}"
        elif ident in backend.channels:
            name = f"channel:{backend.channels[ident].name}"
        elif ident in backend.users:
            name = f"user:{backend.users[ident].name}"
        elif ident == self.guild_id:
            name = "guild"
        else:
            return "<id>"  # a message, an interaction …: differs legitimately
        self.cache[ident] = name
        return name

    def text(self, value: str) -> str:
        value = MENTION.sub(lambda m: f"<{m[1]}{self.of(int(m[2]))}>", value)
        return SNOWFLAKE.sub(lambda m: self.of(int(m[0])), value)

    def data(self, value: Any) -> Any:
        """JSON-like data (embeds, components) with ids named."""
        if isinstance(value, dict):
            return {k: self.data(v) for k, v in sorted(value.items()) if k != "id"}
        if isinstance(value, list | tuple):
            return [self.data(v) for v in value]
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, int) and not isinstance(value, bool) and value > 10**14:
            return self.of(value)
        return value


def message_item(names: Names, message: Any, replied: dict[int, Any]) -> Any:
    """A stored message as its readers see it (backend model), ids named; a reply names the
    message it answers by author and text (positions shift once two games differ)."""
    ref = message.reference or {}
    ref_id = ref.get("message_id")
    return (
        names.of(message.author_id) if message.author_name is None else message.author_name,
        message.type,
        names.text(message.content),
        json.dumps(names.data(message.embeds), ensure_ascii=False, sort_keys=True),
        json.dumps(names.data(message.components), ensure_ascii=False, sort_keys=True),
        tuple(
            sorted(
                (r.emoji, tuple(sorted(names.of(u) for u in r.user_ids))) for r in message.reactions
            )
        ),
        replied.get(int(ref_id), "<gone>") if ref_id is not None else None,
        message.pinned,
        message.edited_timestamp is not None,
        tuple(a.get("filename") for a in message.attachments),
        tuple(sorted(names.of(u) for u in message.ping_user_ids)),
        tuple(sorted(names.of(r) for r in message.ping_role_ids)),
        message.mention_everyone,
    )


def channel_items(env: Env, names: Names, channel_id: int) -> tuple[Any, ...]:
    """Every message of a channel (no ephemerals), oldest first."""
    stored = sorted(env.backend.messages.get(channel_id, {}).values(), key=lambda m: m.id)
    shown = [m for m in stored if not m.is_ephemeral]
    replied = {m.id: (names.of(m.author_id), names.text(m.content)[:80]) for m in shown}
    return tuple(message_item(names, m, replied) for m in shown)


def server(env: Env, guild_id: int, names: Names) -> dict[int, tuple[str, Any]]:
    """Every channel and thread of the server as a reader sees it (messages, reactions,
    overwrites, thread members), by id; who may read which is decided per viewer."""
    backend = env.backend
    guild = backend.guilds[guild_id]
    out: dict[int, tuple[str, Any]] = {}
    for cid in [*guild.channel_ids, *guild.thread_ids]:
        channel = backend.channels.get(cid)
        if channel is None:
            continue
        key = f"{'thread' if channel.is_thread else 'channel'}:{channel.name}"
        meta = channel.thread_metadata if channel.is_thread else None
        thread = (
            (meta.archived, meta.locked, tuple(sorted(names.of(t) for t in channel.applied_tags)))
            if meta is not None
            else None
        )
        overwrites = tuple(
            sorted(
                (names.of(o.target_id), int(o.type), o.allow, o.deny) for o in channel.overwrites
            )
        )
        members = tuple(sorted(names.of(u) for u in channel.thread_members))
        items = channel_items(env, names, cid)
        out[cid] = (key, (channel.type, thread, overwrites, members, items))
    return out


def roles_and_holders(env: Env, guild_id: int, names: Names) -> dict[str, Any]:
    """The server's roles ("roles") and its members with the roles each holds ("members"),
    ids named: what a restart or another way of acting must leave the same."""
    guild = env.backend.guilds[guild_id]
    roles = tuple(
        sorted((r.name, r.permissions, r.mentionable, r.hoist) for r in guild.roles.values())
    )
    members = tuple(
        sorted(
            (
                names.of(m.user_id),
                m.nick,
                tuple(sorted(names.of(r) for r in m.role_ids)),
                m.timed_out_until,
            )
            for m in guild.members.values()
        )
    )
    return {"roles": roles, "members": members}


def visible(
    env: Env, guild_id: int, viewer: MemberActor, names: Names, channels: dict[int, tuple[str, Any]]
) -> dict[str, Any]:
    """What `viewer`'s client shows of the server: the channels and threads they can read, the
    roles and who holds them."""
    backend = env.backend
    seen: dict[str, Any] = {
        key: item
        for cid, (key, item) in channels.items()
        if channel_accessible(backend, cid, viewer.id, history=True)
    }
    seen.update(roles_and_holders(env, guild_id, names))
    return seen


def answer_item(names: Names, result: InteractionResult | list[Any]) -> Any:
    """An interaction's answer (or autocomplete's choices), ids named."""
    if isinstance(result, list):
        return ("choices", names.data(result))
    out: list[Any] = ["answer", result.ephemeral, names.data(result.modal)]  # a form: whole
    for message in [result.response, *result.followups]:
        if message is None:
            continue
        out.append(
            (
                names.text(message.content or ""),
                json.dumps(
                    names.data([e.to_dict() for e in message.embeds]),
                    ensure_ascii=False,
                    sort_keys=True,
                ),
                json.dumps(
                    names.data(message.components),  # dicts, as simcord keeps them
                    ensure_ascii=False,
                    sort_keys=True,
                ),
            )
        )
    return tuple(out)


# -- one game ----------------------------------------------------------------------------------------


@dataclass
class Play:
    """A game on its own simcord world: a game channel, a moderator who does not play, members who
    join (one holds the moderator role, one Manage Server: moderators who play), a spectator.
    With `forum`, the game is hosted there: `/game new` is asked in `channel` and the forum's new
    main post becomes the game's channel; votes are posted in the day's newest 投票帖."""

    env: Env
    guild_id: int
    channel: ChannelHandle
    moderator: MemberActor
    members: dict[str, MemberActor]
    spectator: MemberActor
    pair: tuple[int, int] | None = None
    """Game B: the swapped seats; a power step by one of them is made by the other."""
    forum: ChannelHandle | None = None
    game_id: int = 0
    names: Names = field(init=False)

    def __post_init__(self) -> None:
        self.names = Names(self.env, self.guild_id)

    @property
    def bot(self) -> FaguanBot:
        bot = self.env.bot
        assert isinstance(bot, FaguanBot)
        return bot

    async def state(self) -> GameState:
        return await self.bot.runtime.service.state(self.game_id)

    def holder(self, state: GameState, seat: int) -> MemberActor:
        user = int(state.seat(Seat(seat)).player)
        return next(m for m in self.members.values() if m.id == user)

    def acting(self, seat: int) -> int:
        """The card a power step is made by here: the same role's seat."""
        if self.pair is None or seat not in self.pair:
            return seat
        a, b = self.pair
        return b if seat == a else a

    async def observe(self, state: GameState, observers: list[str]) -> Observed:
        """Everything the observers see now, with their engine views."""
        channels = server(self.env, self.guild_id, self.names)
        public = {
            "spectator": visible(self.env, self.guild_id, self.spectator, self.names, channels)
        }
        views: dict[str, tuple[PlayerView, ...]] = {}
        for name in observers:
            member = self.members[name]
            cards = state.seats_of(str(member.id))
            if cards:
                views[name] = tuple(view_for(state, c) for c in cards)
                public[name] = visible(self.env, self.guild_id, member, self.names, channels)
        return Observed(public=public, answers={}, views=views, public_view=view_for(state, None))

    def vote_place(self) -> ChannelHandle:
        """Where votes are posted: the game channel, or a forum game's newest 投票帖 (the main
        post before the first day's is open: a vote posted there counts for nothing)."""
        if self.forum is None:
            return self.channel
        posts = [t for t in self.forum.threads if "投票帖" in (t.name or "")]
        return max(posts, key=lambda t: t.id) if posts else self.channel

    def option(self, value: Any) -> Any:
        """A slash option as this game names it (a member, a message id)."""
        if isinstance(value, Someone):
            return self.members[value.name]
        if value == LAST_VOTE_POST:
            posts = [m for m in self.vote_place().history() if not m.author.bot]
            return str(posts[-1].id) if posts else "1"
        return value

    def member(self, who: str) -> MemberActor:
        if who == "spectator":
            return self.spectator
        if who == "moderator":
            return self.moderator
        return self.members[who]

    async def do(self, step: Step, answers: dict[str, list[Any]]) -> None:
        """Make one step; the answers observers get are kept under their names."""
        args = dict(step.args)
        if step.kind == "power":
            state = await self.state()
            seat = self.acting(step.seat)
            member = self.holder(state, seat)
            card = {"card": seat} if args.pop("cards", 1) > 1 else {}
            name = "pass" if args.pop("passed", False) else "act"
            await member.slash(self.channel, name, **args, **card)
        elif step.kind == "slash":
            name = args.pop("command")
            args = {k: self.option(v) for k, v in args.items()}
            if name == "game new" and self.forum is not None:
                args["forum"] = self.forum
            result = await self.member(step.who).slash(self.channel, name, **args)
            answers.setdefault(step.who, []).append((name, answer_item(self.names, result)))
            if name == "game new" and self.forum is not None:  # the sign-up: the new main post
                (self.channel,) = self.forum.threads
        elif step.kind == "autocomplete":
            command, option = args.pop("command"), args.pop("option")
            choices = await self.member(step.who).autocomplete(
                self.channel, command, option, "", **args
            )
            answers.setdefault(step.who, []).append(
                (command, option, tuple(args.items()), answer_item(self.names, choices))
            )
        elif step.kind == "post":
            with contextlib.suppress(BackendError):  # barred from posting: the same in both games
                await self.member(step.who).send(self.vote_place(), args["text"])
            await self.env.settle()
        elif step.kind == "lastwords":
            member = self.member(step.who)
            shown = await member.slash(self.channel, "lastwords")
            if shown.modal is not None:
                await member.submit_modal(shown, {"words": args["words"]})
        elif step.kind == "block":
            user = self.member(step.who).user
            self.env.inject_error(
                "POST",
                f"/channels/{user.dm_channel.id}/messages",
                status=403,
                code=CANNOT_DM,
                message="Cannot send messages to this user",
                times=None,
            )
        elif step.kind == "lock":
            jobs = [j for j in self.bot.runtime.scheduler.jobs() if j.id.endswith(":deadline")]
            assert jobs, "no deadline scheduled"
            when = min(j.when for j in jobs)
            now = self.env.now()
            if when > now:
                await self.env.advance_time((when - now).total_seconds())
            await self.bot.runtime.scheduler.run_due()
            await self.env.settle()
        elif step.kind == "wait":
            await self.env.advance_time(args["seconds"])
        else:  # pragma: no cover - a bug in the script
            raise AssertionError(step)


def delta(before: dict[str, Any] | None, now: dict[str, Any]) -> dict[str, Any]:
    """What changed for one viewer since the previous step: channels and threads that appeared,
    vanished or changed (their type, overwrites and members in full; their messages as the new
    ones and the old ones that changed), and the roles and members if they changed. Comparing
    the two games' deltas step by step compares everything, and a difference is reported once,
    at the step that made it, not again at every later step."""
    before = before or {}
    out: dict[str, Any] = {}
    for key in sorted(set(before) | set(now)):
        old, new = before.get(key), now.get(key)
        if old == new:
            continue
        if new is None or old is None or not key.startswith(("channel:", "thread:")):
            out[key] = new if new is not None else "<gone>"
            continue
        *head_old, items_old = old
        *head_new, items_new = new
        count = len(items_old)
        changed = sorted(
            repr(x) for x, y in zip(items_new[:count], items_old, strict=False) if x != y
        )
        out[key] = {
            "head": tuple(head_new) if head_new != head_old else None,
            "new": items_new[count:],
            "changed": changed,
        }
    return out


def first_difference(a: Any, b: Any, path: str = "") -> str | None:
    """Where two observations differ, with both values (short), or None."""
    if a == b:
        return None
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            if key not in a or key not in b:
                return f"{path}/{key}: only in {'A' if key in a else 'B'}: {str(a.get(key, b.get(key)))[:300]}"
            found = first_difference(a[key], b[key], f"{path}/{key}")
            if found:
                return found
    if isinstance(a, tuple | list) and isinstance(b, tuple | list):
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            found = first_difference(x, y, f"{path}[{i}]")
            if found:
                return found
        if len(a) != len(b):
            extra = a[len(b) :] if len(a) > len(b) else b[len(a) :]
            return f"{path}: only in {'A' if len(a) > len(b) else 'B'}: {str(extra)[:400]}"
    return f"{path}:\n      A: {str(a)[:400]}\n      B: {str(b)[:400]}"


def same_knowledge(a: tuple[PlayerView, ...], b: tuple[PlayerView, ...]) -> bool:
    """The engine lets this member know the same in both games."""
    return a == b


__all__ = [
    "LAST_VOTE_POST",
    "Observed",
    "Play",
    "Someone",
    "Step",
    "dealing",
    "delta",
    "first_difference",
    "quick_settle",
    "same_knowledge",
    "swapped",
]
