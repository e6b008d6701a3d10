"""A game played in English differs from the same game played in Chinese only in its words.

The bot must behave the same whatever a game's language: the same messages to the same people in
the same places at the same moments, with the same embeds, buttons, menus and forms, the same
permission changes; only the words differ. So the restart test's scripted game
(`test_rb_restart_anywhere.Script`: votes posted and by /vote, night powers, last words, a tied
first day's run-off and a victim's choice, an extend, a pause, `/mod replace`, a modkill, a void,
a penalty, an advance, reminders, maybe a player's DMs closed), with more on top (`LocaleScript`:
roles confirmed by the DM's button, powers used by the DM's menu, a modkill, a replacement or a
void by right-click and its form, an override log, a join and a leave at the sign-up, a vote no
one can read, /vote for no seat, a vote post edited, a deadline shortened, and the game played to
its end and its record asked for), is played with the game language zh-CN and every client
speaking zh-CN, then replayed step for step on a fresh world (the same seed: the same deal) with
the game language en and every client speaking en (simcord's own en-US). The bot's configured
language stays zh-CN in both: a post in it in the English game would be one in the wrong
language.

After every step, what changed since the step before must have the same *shape* in both
(`Shaper`, compared by `nikit.delta` and `nikit.first_difference`): per channel, thread and DM,
the messages, their authors, reactions, pins, edit marks, attachments, pings, the embeds and
components (types, custom_ids, option values, styles, disabled flags); the overwrites, the
thread members and states, the roles and who holds them; and each answer (ephemeral or not,
its form's inputs, its messages, embeds and components, the autocomplete's choice values).

A text's shape (`Shaper.text`) is what of it no language may change: empty or not, its line
breaks and bold marks (every catalog key has as many in both languages), its mentions and
timestamps and the players it names (multisets), and its numbers as a *set*, not a multiset: the
English glosses repeat a number (`第{game}局 (game {game})`, `第{day}天 投票帖 (day {day} vote
post …)`), so how often a number is written legitimately differs; digits of the catalog's own
wording (`不到1分钟` / "under a minute", `只剩3人` / "Three players are left") are left out
(`literal_digits`). Channel, thread and role names are in the game's language (the players'
role, the team threads, forum posts): they are known by their place in creation order
(`NeutralNames`), their names compared by their shape. A reply names the message it answers by
its author only (the quoted start is cut at a length the words decide). A person's own message
is compared whole.

Every text the bot shows in either world is read too (`text_problems`): no `{placeholder}` left,
no raw catalog key (`notice.foo`); a zh-CN text has Chinese and no English word the zh-CN catalog
itself does not write outside a gloss (`faguan`, `Discord`, …: `zh_words`); an en text has no
Chinese outside its glosses — a Chinese term with an English gloss in brackets, or an English
term with its Chinese in brackets or quotes (“投 N”) — beyond what the en catalog itself writes so
(`傻根`: `en_terms`). Before reading, what is not the bot's wording is taken out: mentions,
links, code spans, slash commands, player names and what players and moderators typed (votes,
last words, reasons, the ruleset's id). Calibrating on the catalogs keeps the heuristic quiet on
their own wording and loud on a text of the other language (or a key one catalog lacks).

Default: four games, two rulesets hosted in a text channel and two in a forum (about 25 s with
`-n 2` on two busy cores). FAGUAN_LOCALE_GAMES=all plays every ruleset hosted both ways (38
games, about 2 minutes).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import os
import random
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import simcord.interactions
from nikit import Names, Play, Step, answer_item, delta, first_difference
from rbkit import LOCALES
from simcord import BackendError, ChannelHandle, MemberActor

# isort: split
from test_rb_noninterference import size
from test_rb_restart_anywhere import RestartPlay, Run, Script, Scripted, everything, place_of

from bot.records.i18n import catalog
from engine.model import PhaseKind
from engine.rulesets import RULESETS
from engine.state import GameState

SEED = "locales-4d1f"
DEFAULT_GAMES = [("v2", "text"), ("tianxia", "text"), ("v3m", "forum"), ("v5", "forum")]
"""2.0 (police, killers' thread, a victim's choice), 天下无贼 (untargeted powers, 傻根), 3.0M in
a forum (秘匪, a 投票帖 a day), 5.0 in a forum (two cards a player)."""
GAMES = (
    [(r, h) for r in sorted(RULESETS) for h in ("text", "forum")]
    if os.environ.get("FAGUAN_LOCALE_GAMES", "") == "all"
    else DEFAULT_GAMES
)
ENDING_PHASES = 8
"""After the script's plan, phases played on until the game ends (else a moderator ends it)."""
WARMUP = {"tianxia"}
"""Played with a 游戏热身 (warm-up) discussion before the first night."""
VICTIMS_CHOOSE = {"v2"}
"""Played with `tie:victim_choice` (the others: `revote`)."""


@contextlib.contextmanager
def clients_speaking(tag: str) -> Iterator[None]:
    """Every interaction carries this client language (Discord's `locale`; simcord sends en-US):
    the bot answers a person in theirs."""
    original = simcord.interactions.base_payload

    def payload(backend: Any, **kwargs: Any) -> Any:
        record, built = original(backend, **kwargs)
        built["locale"] = tag
        return record, built

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(simcord.interactions, "base_payload", payload)
        yield


# -- the world, known by what no language changes -------------------------------------------------


@dataclass
class NeutralNames(Names):
    """A role or a channel by its place in creation order (`role#3`, `channel#7`): their names
    are in the game's language. Users keep their names (the same in both worlds)."""

    def of(self, ident: int) -> str:
        if ident in self.cache:
            return self.cache[ident]
        backend = self.env.backend
        roles = backend.guilds[self.guild_id].roles
        for kind, known in (("role", roles), ("channel", backend.channels)):
            if ident in known:
                self.cache[ident] = f"{kind}#{sorted(known).index(ident)}"
                return self.cache[ident]
        return super().of(ident)


def world(play: Play) -> dict[str, Any]:
    """Everything in the world (`everything`), channels and threads keyed by their place in
    creation order, their names (and the roles') kept apart as `names`."""
    backend = play.env.backend
    guild = backend.guilds[play.guild_id]
    seen = everything(play)
    # everything() begins with nikit.server()'s channels and threads, in its order
    ids = [cid for cid in [*guild.channel_ids, *guild.thread_ids] if cid in backend.channels]
    names: dict[str, str] = {}
    for cid, key in zip(ids, list(seen)[: len(ids)], strict=True):
        name = backend.channels[cid].name or ""
        assert key.partition(":")[2].rstrip("'") == name, (key, name)
        neutral = f"{key.partition(':')[0]}:{play.names.of(cid)}"
        names[neutral] = name
        seen[neutral] = seen.pop(key)
    del seen["roles"]  # by name: kept as each role's, below
    for rid, role in guild.roles.items():
        names[play.names.of(rid)] = role.name
        seen[play.names.of(rid)] = (role.permissions, role.mentionable, role.hoist)
    seen["names"] = names
    return seen


# -- shapes: what of a world no language may change -----------------------------------------------

MENTION = re.compile(r"<[^<>\s]*>")
"""A mention, a timestamp or a custom emoji, as `Names.text` leaves it (`<@user:玩家1>`)."""
NUMBER = re.compile(r"\d+")
EMBED_TEXT = frozenset({"title", "description", "name", "value", "text"})
"""An embed's keys that hold words (a field's name and value, the footer's text …)."""
COMPONENT_TEXT = frozenset({"label", "placeholder", "description"})
"""A component's keys that hold words (an option's `value` is an id: compared as it is)."""
FORM_TEXT = frozenset({"title", *COMPONENT_TEXT})
"""A form's (a modal's) keys that hold words: its title, its inputs' labels."""


@functools.cache
def literal_digits() -> tuple[str, ...]:
    """The pieces of catalog wording that write a digit of their own (`不到1分钟`, `只剩3人且其中有
    杀手`, `投 5 (vote for seat 5)`): the other language may spell it or leave it out."""
    pieces = {
        piece
        for locale in LOCALES
        for text in catalog(locale).values()
        for piece in PLACEHOLDER.split(text)
        if NUMBER.search(piece)
    }
    return tuple(sorted(pieces, key=len, reverse=True))


PLACEHOLDER = re.compile(r"\{[^{}]*\}")


@dataclass(frozen=True)
class Shaper:
    """Shapes texts of one world: who the players are (names are counted, not read)."""

    people: tuple[str, ...]
    bot: str
    """The bot's author name (`user:…`): only its messages are shaped, a person's stay whole."""
    shaped: dict[tuple[Any, ...], tuple[Any, ...]] = field(default_factory=dict)

    @functools.cached_property
    def person(self) -> re.Pattern[str]:
        return re.compile("|".join(map(re.escape, sorted(self.people, key=len, reverse=True))))

    def text(self, text: str) -> tuple[Any, ...]:
        """Empty or not; its lines and bold marks (the catalogs' texts of a key have as many
        in both languages); mentions and players named (multisets); numbers (a set)."""
        mentions = sorted(MENTION.findall(text))
        rest = MENTION.sub(" ", text)
        people = sorted(self.person.findall(rest))
        rest = self.person.sub(" ", rest)
        for piece in literal_digits():
            rest = rest.replace(piece, " ")
        return (
            bool(text),
            text.count("\n"),
            text.count("**"),
            tuple(mentions),
            tuple(people),
            tuple(sorted(set(NUMBER.findall(rest)))),
        )

    def data(self, value: Any, words: frozenset[str]) -> Any:
        """JSON data (embeds, components) with the texts under `words` shaped."""
        if isinstance(value, dict):
            return {
                k: self.text(v) if k in words and isinstance(v, str) else self.data(v, words)
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [self.data(v, words) for v in value]
        return value

    def message(self, item: tuple[Any, ...]) -> tuple[Any, ...]:
        """`shaped_message`, once per item (a world is shaped whole after every step)."""
        found = self.shaped.get(item)
        if found is None:
            found = self.shaped[item] = self.shaped_message(item)
        return found

    def shaped_message(self, item: tuple[Any, ...]) -> tuple[Any, ...]:
        """A message item (`nikit.message_item`): the bot's words shaped; a reply named by the
        author it answers (its quoted start is cut at a length that depends on the words)."""
        author, kind, content, embeds, components, reactions, replied, *rest = item
        if isinstance(replied, tuple):
            replied = replied[0]
        if author != self.bot:
            return (author, kind, content, embeds, components, reactions, replied, *rest)
        return (
            author,
            kind,
            self.text(content),
            self.data(json.loads(embeds), EMBED_TEXT),
            self.data(json.loads(components), COMPONENT_TEXT),
            reactions,
            replied,
            *rest,
        )

    def world(self, seen: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in seen.items():
            if key == "names":
                out[key] = {k: self.text(v) for k, v in value.items()}
            elif key.startswith(("channel:", "thread:")):
                *head, items = value
                out[key] = (*head, tuple(self.message(i) for i in items))
            else:
                out[key] = value
        return out

    def answer(self, value: Any) -> Any:
        """Answers (`nikit.answer_item`, nested in what `Play.do` keeps), their words shaped."""
        if isinstance(value, tuple) and value[:1] == ("answer",):
            kind, ephemeral, form, *messages = value
            return (
                kind,
                ephemeral,
                self.data(form, FORM_TEXT),
                *(
                    (
                        self.text(content),
                        self.data(json.loads(embeds), EMBED_TEXT),
                        self.data(json.loads(components), COMPONENT_TEXT),
                    )
                    for content, embeds, components in messages
                ),
            )
        if isinstance(value, tuple) and value[:1] == ("choices",):
            return ("choices", self.data(value[1], frozenset({"name"})))
        if isinstance(value, tuple | list):
            return tuple(self.answer(v) for v in value)
        if isinstance(value, dict):
            return {k: self.answer(v) for k, v in value.items()}
        return value


# -- reading every text ---------------------------------------------------------------------------

CJK = "\u3400-\u4dbf\u4e00-\u9fff"
NOT_WORDING = re.compile(
    r"<[^<>\s]*>|https?://\S+|`[^`]*`|/(?:game|mod) [a-z]+|/[a-z]+|(?:channel|role)#\d+|user:\S+"
)
"""What is no wording of the bot's: mentions, links, code spans, slash commands, neutral names."""
ZH_GLOSS = re.compile(r"（[^（）]*）|\([^()]*\)")
"""An English term glossing Chinese in a zh-CN text: `管理频道（Manage Channels）`."""
EN_GLOSS = re.compile(
    rf"[(（\[“][^()（）\[\]“”]*[{CJK}][^()（）\[\]“”]*[)）\]”]|[{CJK}][{CJK}\d ·]*\s*\([^()]*\)"
)
"""Chinese in an en text, glossed: in brackets or quotes after its English (`out of the game
(出局)`, “投 N”), or before its English in brackets (`看表帖 (clock post)`)."""
WORD = re.compile(r"[A-Za-z]{3,}")
CHINESE = re.compile(rf"[{CJK}]+")
KEY = re.compile(r"\b([a-z_]+)\.[a-z0-9_]+\b")


def unworded(text: str, typed: tuple[str, ...]) -> str:
    """`text` without what is not the bot's wording (`NOT_WORDING`, and what people typed:
    their names, votes, last words, reasons)."""
    text = NOT_WORDING.sub(" ", text)
    for piece in typed:
        text = text.replace(piece, " ")
    return text


@functools.cache
def zh_words() -> frozenset[str]:
    """English words the zh-CN catalog itself writes outside its glosses (`faguan`, `Discord`)."""
    texts = (
        ZH_GLOSS.sub(" ", unworded(PLACEHOLDER.sub(" ", t), ())) for t in catalog("zh-CN").values()
    )
    return frozenset(w for t in texts for w in WORD.findall(t))


@functools.cache
def en_terms() -> frozenset[str]:
    """Chinese the en catalog itself writes unglossed (`傻根`, a name)."""
    texts = (
        EN_GLOSS.sub(" ", unworded(PLACEHOLDER.sub(" ", t), ())) for t in catalog("en").values()
    )
    return frozenset(w for t in texts for w in CHINESE.findall(t))


@functools.cache
def sections() -> frozenset[str]:
    return frozenset(key.partition(".")[0] for key in catalog("en"))


def text_problems(text: str, locale: str, typed: tuple[str, ...]) -> list[str]:
    """What is wrong with a text the bot shows in a `locale` game to a `locale` client."""
    rest = unworded(text, typed)
    found = [
        f"placeholder {p}" for p in PLACEHOLDER.findall(rest) if re.fullmatch(r"\{\w+(:.*)?\}", p)
    ]
    found += [f"raw key {m[0]}" for m in KEY.finditer(rest) if m[1] in sections()]
    rest = PLACEHOLDER.sub(" ", KEY.sub(" ", rest))
    if locale == "zh-CN":
        words = set(WORD.findall(ZH_GLOSS.sub(" ", rest))) - zh_words()
        found += [f"English in zh-CN: {w}" for w in sorted(words)]
        if re.search("[A-Za-z]", rest) and not CHINESE.search(rest):
            found.append("no Chinese in a zh-CN text")
    else:
        terms = set(CHINESE.findall(EN_GLOSS.sub(" ", rest))) - en_terms()
        found += [f"unglossed Chinese in en: {t}" for t in sorted(terms)]
    return found


def texts_of(data: Any, words: frozenset[str]) -> Iterator[str]:
    """The texts under `words` keys in JSON data (embeds, components, choices)."""
    if isinstance(data, dict):
        for k, v in data.items():
            if k in words and isinstance(v, str):
                yield v
            else:
                yield from texts_of(v, words)
    elif isinstance(data, list):
        for v in data:
            yield from texts_of(v, words)


def world_texts(
    seen: dict[str, Any], bot: str, given: set[str], done: set[Any]
) -> Iterator[tuple[str, str]]:
    """(place, text) for every text the bot wrote: messages (those not `done`: they are added),
    their embeds and components, and the names of channels, threads and roles it made (those
    not among `given`)."""
    for key, value in seen.items():
        if key == "names":
            yield from ((k, v) for k, v in value.items() if v not in given)
        elif key.startswith(("channel:", "thread:")):
            for item in value[-1]:
                author, _, content, embeds, components, *_ = item
                if author == bot and item not in done:
                    done.add(item)
                    yield key, content
                    yield from ((key, t) for t in texts_of(json.loads(embeds), EMBED_TEXT))
                    yield from ((key, t) for t in texts_of(json.loads(components), COMPONENT_TEXT))


def answer_texts(value: Any) -> Iterator[str]:
    """Every text of the answers (`nikit.answer_item`, nested)."""
    if isinstance(value, tuple) and value[:1] == ("answer",):
        yield from texts_of(value[2], FORM_TEXT)
        for content, embeds, components in value[3:]:
            yield content
            yield from texts_of(json.loads(embeds), EMBED_TEXT)
            yield from texts_of(json.loads(components), COMPONENT_TEXT)
    elif isinstance(value, tuple) and value[:1] == ("choices",):
        yield from texts_of(value[1], frozenset({"name"}))
    elif isinstance(value, tuple | list):
        for v in value:
            yield from answer_texts(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from answer_texts(v)


# -- the two worlds -------------------------------------------------------------------------------


@dataclass
class Found:
    """Differences and bad texts, the first of each kind (where, and after which step)."""

    items: list[str] = field(default_factory=list)
    kinds: set[str] = field(default_factory=set)
    read: set[tuple[str, str]] = field(default_factory=set)
    done: dict[str, set[Any]] = field(default_factory=dict)
    """Per language, the messages whose texts were read."""
    compared: int = 0

    def add(self, kind: str, text: str) -> None:
        if kind not in self.kinds:
            self.kinds.add(kind)
            self.items.append(text)

    def read_texts(
        self, texts: Iterator[tuple[str, str]], locale: str, typed: tuple[str, ...], when: str
    ) -> None:
        for place, text in texts:
            if (locale, text) in self.read:
                continue
            self.read.add((locale, text))
            for problem in text_problems(text, locale, typed):
                self.add(
                    f"{locale} {problem}", f"{when}, {locale} {place}: {problem} in {text[:300]!r}"
                )


FORMS = {"mod void": "Void this vote", "mod modkill": "Modkill", "mod replace": "Replace"}
"""The moderator commands also made by a right-click menu and its form."""
LOBBY = "<lobby>"
"""A slash option naming the text channel the game was asked for (its override log)."""


class LocalePlay(RestartPlay):
    """`RestartPlay` that also clicks what the bot DMs (a role confirmed by its button, a power
    used by its menu), right-clicks as a moderator (and fills in the form) and edits a vote
    post; a slash option may name the lobby (`LOBBY`)."""

    lobby: ChannelHandle | None = None
    """The text channel `/game new` was asked in (a forum game's channel is its main post)."""

    async def do(self, step: Step, answers: dict[str, list[Any]]) -> None:
        if step.kind == "confirm":
            member = self.member(step.who)
            message = self.dm_with(member, "faguan:confirm:")
            assert message is not None, f"{step.who} has no role DM"
            result = await member.user.click(message)
            answers.setdefault(step.who, []).append(("confirm", answer_item(self.names, result)))
        elif step.kind == "edit":
            member = self.member(step.who)
            mine = [m for m in self.vote_place().history() if m.author.id == member.id]
            with contextlib.suppress(BackendError):  # barred from posting: the same in both
                await member.edit(mine[-1], dict(step.args)["text"])
            await self.env.settle()
        elif step.kind == "chat":  # in the game's channel (a forum game's main post)
            with contextlib.suppress(BackendError):
                await self.member(step.who).send(self.channel, dict(step.args)["text"])
            await self.env.settle()
        elif step.kind == "form":
            answers.setdefault("moderator", []).append(await self.form(step))
        elif step.kind == "menu":
            args = dict(step.args)
            state = await self.state()
            member = self.holder(state, step.seat)
            custom_id = self.menu_id(state, step.seat, args["power"])
            message = self.dm_with(member, custom_id)
            assert message is not None, f"no DM with {custom_id}"
            result = await member.user.select(message, [args["value"]], custom_id=custom_id)
            who = next(k for k, m in self.members.items() if m.id == member.id)
            answers.setdefault(who, []).append(("menu", answer_item(self.names, result)))
        else:
            await super().do(step, answers)

    async def form(self, step: Step) -> tuple[str, Any]:
        """A moderator's right-click menu on a vote post or a seat's holder, its form filled in."""
        args = dict(step.args)
        menu, mod = args["menu"], self.moderator
        if menu == "Void this vote":
            where = self.vote_place()
            target: Any = [m for m in where.history() if not m.author.bot][-1]
        else:
            where, target = self.channel, self.holder(await self.state(), args["seat"])
        shown = await mod.context_menu(where, menu, target)
        got = [answer_item(self.names, shown)]
        if shown.modal is not None:
            values = {"reason": args["reason"]}
            if "member" in args:
                values["substitute"] = [self.option(args["member"])]
            got.append(answer_item(self.names, await mod.submit_modal(shown, values)))
        return menu, tuple(got)

    def option(self, value: Any) -> Any:
        return self.lobby if value == LOBBY else super().option(value)

    def menu_id(self, state: GameState, seat: int, power: str) -> str:
        """The custom_id of tonight's menu of a seat's power (its first page)."""
        assert state.window is not None
        return f"faguan:act:{self.game_id}:{state.window.number}:{power}:{seat}"

    @staticmethod
    def dm_with(member: MemberActor, custom_id: str) -> Any:
        """The newest DM to `member` with a component whose custom_id starts so (None: there is
        none, their DMs are closed)."""
        channel = member.user.dm_channel
        if channel is None:
            return None
        for message in reversed(list(channel.history())):
            for row in message.components:
                for child in getattr(row, "children", []):
                    if str(getattr(child, "custom_id", "")).startswith(custom_id):
                        return message
        return None


@dataclass
class LocaleScript(Script):
    """The restart test's script, each step's world kept by `world` (names apart); some powers
    used by the DM's menu, some roles confirmed by the DM's button, more said at the sign-up
    and by day (`sign_up`, `day`), and played on to the end (the results, the roles shown, the
    record)."""

    signed_up: bool = False

    async def step(self, step: Step) -> None:
        if dict(step.args).get("command") == "game start" and not self.signed_up:
            self.signed_up = True
            await self.sign_up()
        step = await self.variant(step)
        seen, answers = await made(self.play, step)
        self.steps.append(Scripted(step, seen, answers, frozenset()))

    async def variant(self, step: Step) -> Step:
        """Half the powers on a target chosen in the DM's menu instead (where one was sent),
        half the modkills, replacements and voids by right-click and form; a warm-up first
        (`WARMUP`)."""
        args = dict(step.args)
        play = self.play
        assert isinstance(play, LocalePlay)
        if step.kind == "power" and "target" in args and self.rnd.random() < 0.5:
            state = await play.state()
            member = play.holder(state, step.seat)
            if play.dm_with(member, play.menu_id(state, step.seat, args["power"])) is not None:
                menu = (("power", args["power"]), ("value", str(args["target"])))
                return Step("menu", seat=step.seat, args=menu)
        if args.get("command") == "game new" and self.ruleset in WARMUP:
            return Step(step.kind, step.who, args=(*step.args, ("options", "warmup=30")))
        if args.get("command") in FORMS and self.rnd.random() < 0.5:
            form = {"menu": FORMS[args.pop("command")], "reason": "挂机", **args}
            return Step("form", "moderator", args=tuple(form.items()))
        return step

    async def setup(self, language: str, deals: list[Any]) -> None:
        await super().setup(language, deals)
        play = self.play
        assert isinstance(play, LocalePlay)
        for name in self.seated(await play.state()):
            if self.rnd.random() < 0.6 and play.dm_with(play.members[name], "faguan:confirm:"):
                await self.step(Step("confirm", name))

    async def sign_up(self) -> None:
        """Before the start: an override log asked for, an outsider joining and leaving, a
        player joining twice, reminders turned off, the sign-up's status."""
        joined, outsider = self.order[0], self.order[self.n]
        for who, args in [
            ("moderator", (("command", "mod log-channel"), ("channel", LOBBY))),
            (outsider, (("command", "game join"),)),
            (outsider, (("command", "game leave"),)),
            (joined, (("command", "game join"),)),
            (joined, (("command", "remind"), ("state", "off"))),
            ("spectator", (("command", "game status"),)),
        ]:
            await self.step(Step("slash", who, args=args))

    async def day(self, state: GameState) -> None:
        """Also, now and then: a vote no one can read, /vote for no seat, /lastwords by one who
        has none, a deadline shortened, a vote posted in the game's channel (a forum game's
        main post: the wrong place), a word from one out of the game, a vote post edited."""
        alive = [self.name_of(int(state.seat(s).player)) for s in state.alive()]
        out = [self.name_of(int(s.player)) for s in state.seats if not s.alive] or alive
        rnd = self.rnd
        extras = [
            Step("chat", rnd.choice(alive), args=(("text", "投 1号"),)),
            Step("chat", rnd.choice(out), args=(("text", "我还有话说"),)),
            Step("post", rnd.choice(alive), args=(("text", "投 谁"),)),
            Step("slash", rnd.choice(alive), args=(("command", "vote"), ("target", "99"))),
            Step("lastwords", rnd.choice(alive), args=(("words", "我是好人"),)),
            Step("slash", "moderator", args=(("command", "mod shorten"), ("minutes", 5))),
        ]
        for step in rnd.sample(extras, rnd.randint(1, 3)):
            await self.step(step)
        await super().day(state)
        posted = [r.step.who for r in self.steps[-8:] if r.step.kind == "post"]
        if posted and posted[-1] != "spectator" and rnd.random() < 0.5:
            await self.step(Step("edit", posted[-1], args=(("text", "投 1号"),)))

    async def run(self) -> None:
        await super().run()
        for _ in range(ENDING_PHASES):
            state = await self.play.state()
            if state.over:
                break
            await self.last_words(state, ["我是好人"])
            state = await self.play.state()
            assert state.window is not None
            if state.window.kind is PhaseKind.NIGHT:
                await self.night(state)
            else:
                await self.day(state)
            await self.step(Step("lock"))
        if not (await self.play.state()).over:
            await self.step(
                Step("slash", "moderator", args=(("command", "mod end"), ("winner", "draw")))
            )
        for who in ("spectator", self.seated(await self.play.state())[0]):
            await self.step(Step("slash", who, args=(("command", "game record"),)))


async def made(play: Play, step: Step) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    """Make a step: the world after it (`world`) and the answers people got."""
    answers: dict[str, list[Any]] = {}
    await play.do(step, answers)
    if not play.game_id:
        play.game_id = play.bot.runtime.routes.channel_games.get(play.channel.id, 0)
    return world(play), answers


def in_language(step: Step, language: str) -> Step:
    """The step as the other world makes it: `/game new` in its language."""
    args = tuple((k, language if k == "language" else v) for k, v in step.args)
    return Step(step.kind, step.who, step.seat, args)


def typed_by_people(script: list[Any], people: tuple[str, ...]) -> tuple[str, ...]:
    """What people typed (names, votes, last words, reasons, a ruleset or an option as an
    id): not the bot's wording."""
    typed = {
        str(v)
        for rec in script
        for k, v in rec.step.args
        if k in ("text", "words", "reason", "ruleset", "options")
    }
    return tuple(sorted({*typed, *people}, key=len, reverse=True))


async def start(db: Path, n: int, hosting: str) -> Run:
    """A world for one language (`LocalePlay`), channels and roles named by `NeutralNames`."""
    run = await Run.start(db, n, hosting)
    kept = run.world.play
    play = LocalePlay(**{f.name: getattr(kept, f.name) for f in dataclasses.fields(kept) if f.init})
    play.lobby = kept.channel
    play.names = NeutralNames(play.env, play.guild_id)
    run.world.play = play
    return run


def shaper_of(play: Play) -> Shaper:
    """The players (and the spectator) are named in texts; the non-playing moderator never is
    (and "mod" is a piece of "moderator")."""
    bot = play.env.backend.bot_user
    return Shaper(people=(*play.members, play.spectator.name), bot=play.names.of(bot.id))


async def record(ruleset: str, hosting: str, db: Path) -> tuple[list[Any], set[str]]:
    """The script played in zh-CN by clients speaking zh-CN: its steps, and the names the
    world had before the bot made any."""
    rnd = random.Random(f"{SEED}-{ruleset}-{hosting}")
    n = size(ruleset)
    with clients_speaking("zh-CN"):
        run = await start(db, n, hosting)
        try:
            given = set(world(run.world.play)["names"].values())
            script = LocaleScript(run.world.play, run.world.order, ruleset, n, rnd)
            script.tie_policy = "victim_choice" if ruleset in VICTIMS_CHOOSE else "revote"
            await script.setup("zh-CN", [])
            await script.run()
            assert not list(run.env.errors), run.env.errors
        finally:
            await run.stop()
    return script.steps, given


async def replay(run: Run, script: list[Any], given: set[str], found: Found) -> None:
    """The same steps in en; after each, the two worlds' changes compared by shape, and every
    new text of both read. A step the en world cannot make (no menu in a DM …) ends it: the
    worlds parted before, where a difference was found."""
    play = run.world.play
    shaper = shaper_of(play)
    typed = typed_by_people(script, shaper.people)
    before: tuple[dict[str, Any], dict[str, Any]] | None = None
    for i, rec in enumerate(script):
        when = f"step {i} ({rec.step})"
        try:
            seen, answers = await made(play, in_language(rec.step, "en"))
        except Exception as error:
            found.add("the script", f"{when}: en cannot make it ({error!r})")
            return
        for locale, now, got in (("zh-CN", rec.seen, rec.answers), ("en", seen, answers)):
            done = found.done.setdefault(locale, set())
            found.read_texts(world_texts(now, shaper.bot, given, done), locale, typed, when)
            found.read_texts((("answer", t) for t in answer_texts(got)), locale, typed, when)
        shapes = (shaper.world(rec.seen), shaper.world(seen))
        diff = first_difference(
            delta(before[0] if before else None, shapes[0]),
            delta(before[1] if before else None, shapes[1]),
        )
        diff = diff or first_difference(
            {"answers": shaper.answer(rec.answers)}, {"answers": shaper.answer(answers)}
        )
        found.compared += 1
        if diff:
            found.add(f"{place_of(diff)} at {rec.step.kind}", f"{when}: zh-CN (A) ≠ en (B) {diff}")
        before = shapes


@pytest.mark.parametrize(("ruleset", "hosting"), GAMES)
async def test_a_game_in_english_differs_only_in_its_words(
    ruleset: str, hosting: str, tmp_path: Path
) -> None:
    script, given = await record(ruleset, hosting, tmp_path / "zh.db")
    found = Found()
    run = await start(tmp_path / "en.db", size(ruleset), hosting)
    try:
        await replay(run, script, given, found)
        assert not list(run.env.errors), run.env.errors
    finally:
        await run.stop()
    kinds = Counter(dict(r.step.args).get("command", r.step.kind) for r in script)
    print(f"{ruleset} ({hosting}): {len(found.read)} texts read; steps {dict(kinds)}")
    if found.items:
        pytest.fail(
            f"{ruleset} ({hosting}): zh-CN and en games differ:\n  " + "\n  ".join(found.items)
        )
    assert found.compared == len(script)


def test_a_shape_keeps_numbers_mentions_and_names_not_words() -> None:
    """The checker itself: a seat written `3号` or `#3`, a gloss repeating a number, are the same
    shape; another seat, another player, a lost mention are not."""
    shaper = Shaper(people=("玩家3", "玩家13"), bot="user:bot")
    zh = shaper.text("第2局：3号 玩家3 出局 <t:99:R>")
    assert zh == shaper.text("第2局 (game 2): #3 玩家3 is out of the game (出局) <t:99:R>")
    assert zh != shaper.text("第2局 (game 2): #4 玩家3 is out <t:99:R>")
    assert zh != shaper.text("第2局 (game 2): #3 玩家13 is out <t:99:R>")
    assert zh != shaper.text("第2局 (game 2): #3 玩家3 is out")
    assert shaper.text("不到1分钟") == shaper.text("under a minute")


def test_a_bad_text_is_named() -> None:
    """The checker itself: a placeholder, a raw key, English in zh-CN, Chinese in en are found;
    the catalogs' own glosses and what people typed are not."""
    typed = ("玩家3", "last words")
    assert text_problems("3号 玩家3 的遗言：last words <@user:玩家3>", "zh-CN", typed) == []
    assert text_problems("Last words (遗言) of #3 玩家3: last words", "en", typed) == []
    assert text_problems("看表帖 (clock post) for game 3 at <t:1:F>", "en", typed) == []
    assert text_problems("第{game}局", "zh-CN", ()) == ["placeholder {game}"]
    assert text_problems("notice.dm_closed", "en", ()) == ["raw key notice.dm_closed"]
    assert text_problems("3号 is out", "zh-CN", ()) == ["English in zh-CN: out"]
    assert text_problems("#3 出局了", "en", ()) == ["unglossed Chinese in en: 出局了"]
