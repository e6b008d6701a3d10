"""Two ways of doing one thing give one game.

The bot offers several interfaces for one action, and a player or moderator must get the same
game whichever they use (README, "Playing" and "Moderators"; `docs/commands.md`):

- a vote: typed as a post in the vote place, or `/vote` in the game's channel (a forum game's
  main post), in a forum day's 投票帖 or in a DM with the bot (the bot posts it publicly); each
  spelt as people do (「投 5号」, 「投5」, 「投 玩家5」, 「投 @玩家5」, 「弃权」, 「弃票」; `/vote`
  picked from its list or typed by hand: `5`, `5号`, a name, `abstain`, 「弃票」);
- a night power: the DM's menu, or `/act` (`/pass` for the menu's pass, `/act` with no target
  for its "use") in the game's channel or in a DM;
- a moderator's void, replacement or removal: `/mod void|replace|modkill` (a void by message id
  or message link), or the right-click menus "Void this vote", "Replace" and "Modkill" and their
  forms;
- last words: `/lastwords` in the game's channel or in a DM (there is no 遗言 button).

Confirming a role has one way only, the role DM's button (`/role` shows the role and confirms
nothing): the script confirms by the button in both games.

The locale test's script (`test_rb_locales.LocaleScript`: the restart test's game — votes,
night powers, last words, a tie and its run-off or victim's choice, every moderator override —
with a sign-up, an override log, a warm-up, the game played to its end and its record asked
for) is played with each such action an *intent* (`intent_of`), carried out one way chosen at
random among those available then (`InterfacePlay.ways`, `Chooser`); then replayed step for step
on a fresh world (the same seed: the same deal) with every intent carried out another way
available, chosen at random. So each game is a mixture of interfaces, and every action is made
two ways. The games alternate zh-CN and en, and every client speaks the game's language: an
ephemeral answer is in the client's language, a DM or a post in the game's, so both read alike.

On top of the script come refusals (`InterfaceScript.refusals`), the same bad action made two
ways: a vote at night (a text game's channel is its vote channel); a night power the seat does
not hold, and one on a player out of the game; a player removed at night picked in the menu
sent before (`removed_tonight`); a replaced player's menu, or `/act`, used after the
replacement (`replaced_tonight`); a void of the bot's own post; a replacement by someone
playing (a moderator who plays, now and then), into a seat out, a removal of a seat out; the
moderators' void, removal and replacement after the end (`after_the_end`); last words asked
for by one who has none. Each must be refused alike, change nothing (no public change, the
same engine state) and tell the asker something other than "accepted". Votes for a seat that
does not exist, for a player out of the game or for one not in the run-off are posted and
recorded void both ways: they must say so alike.

After every step the two games must agree on (`compare`):

1. the engine's state (its `repr`, ids named as below), and at the end the game's record as
   `/game record` attaches it (JSON and HTML);
2. the server (`InterfacePlay.public_world`): every channel and thread (messages, embeds,
   components, reactions, replies, pins, edits, pings, attachments, overwrites, thread members
   and states), the roles and who holds them — what changed since the step before
   (`nikit.delta`), so a difference is reported once, where it was made;
3. what each person was told privately (`private_news`): the new messages of their DM and the
   messages answering their interactions, one multiset of (text, embeds, components) each: a
   DM or an ephemeral answer alike (a power chosen in the menu is confirmed by DM, `/act`'s in
   its answer; a refusal comes before a right-click's form opens, or after `/mod`);
4. what each voter learnt of their vote (`Done.outcome`): `/vote`'s answer, and for a typed
   vote what the bot said of the post in public (✅: `notice.accepted`'s text; a reply: its
   text).

What the interface itself changes, and only that, is set aside:

- a vote post is the voter's own (「投 5号」) or the bot's (「3号 玩家3：投 5号 玩家5」): both are
  shown as the intent that made them (`vote 12: 玩家3 → 5`) in place of their author, their
  text and whom the text pings (a mention in a typed vote), and a reply to either names it so;
  the bot's post is so shown only if it says exactly who voted for whom (`vote_line`), else it
  stays itself and differs. Its message id, wherever it shows (the record's `post_id`, `link`
  and a void's `post`, the state, a text), is that label too; any other message id is `<id>`
  (`nikit.Names`);
- a typed vote the engine refuses outright (no vote window: 「投 5号」 at night) is the voter's
  post, which stays, and the bot's public reply to it; `/vote` posts nothing and answers
  privately. Both are left out of the typed game's server, and the reply's text is that vote's
  outcome, as `/vote`'s answer is; `/vote`'s answer is its outcome, not a private message (a
  typed vote gets none);
- a form opening (a modal), or a click taken with no answer (a menu's: simcord shows the menu's
  own message), is no message;
- from a DM, "no game here" reads as "not a player in this game": a command in a DM names no
  game, and one who holds no seat (a player replaced out) is in none there (docs/commands.md,
  "Which game"), where the menu names its game and the game's channel is the game's;
- a replacement or removal names a seat as the right-click menu does, the player's first card
  in play (`as_menus_name`): a 5.0 player named by either card is the same player
  (docs/rulings.md), but the override records the card named.

Not switched, by design (the planned way in both games): a vote the engine voids for who the
voter is (not a player, barred from the run-off …: `bot.discord.cogs.play.VOTER_REFUSED`) or
whose target cannot be read (「投 谁」): a typed one is a post the channel holds, recorded void
and listed in the day's 票型, where `/vote` refuses it before posting. Not tried: a vote after
the end (a post then is chat, the judge answers nothing; `/vote` says the game is over), and
closed DMs (the script's closure is skipped): the menu is then out of reach, and the failure is
told at the player's next interaction, whichever it is; the restart and non-interference tests
cover closed DMs.

Default: four games, two rulesets hosted in a text channel and two in a forum (656 steps, 92
refusals; about 25 s with `-n 2`). FAGUAN_INTERFACE_GAMES=all plays every ruleset hosted both
ways (38 games, 5,362 steps, 720 refusals, 2,439 actions made two ways; about 2.5 minutes).
"""

from __future__ import annotations

import contextlib
import dataclasses
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
from nikit import (
    LAST_VOTE_POST,
    Names,
    Someone,
    Step,
    answer_item,
    delta,
    first_difference,
    message_item,
    roles_and_holders,
    server,
)
from rbkit import LOCALES
from simcord import BackendError, ChannelHandle, MemberActor

# isort: split
from test_rb_locales import (
    FORMS,
    VICTIMS_CHOOSE,
    WARMUP,
    LocalePlay,
    LocaleScript,
    clients_speaking,
)
from test_rb_noninterference import size
from test_rb_restart_anywhere import (  # noqa: F401  (a fixture)
    Differences,
    Run,
    no_deferral_for_slowness,
    place_of,
)

from bot.discord.cogs.play import VOTER_REFUSED
from bot.discord.views import valid_targets
from bot.records.i18n import render
from engine.commands import PostVote
from engine.errors import EngineError
from engine.events import VotePosted
from engine.game import decide
from engine.model import PhaseKind, Power, Seat
from engine.rulesets import RULESETS, rules_for
from engine.state import GameState
from engine.view import view_for

SEED = "interfaces-3b7e"
DEFAULT_GAMES = [("v2", "text"), ("tianxia", "text"), ("v3m", "forum"), ("v5", "forum")]
"""2.0 (police, a victim's choice), 天下无贼 (powers used on nobody: the menu's "use"), 3.0M in a
forum (a 投票帖 a day), 5.0 in a forum (two cards a player: the menus and /act's `card`)."""
GAMES = (
    [(r, h) for r in sorted(RULESETS) for h in ("text", "forum")]
    if os.environ.get("FAGUAN_INTERFACE_GAMES", "") == "all"
    else DEFAULT_GAMES
)

WAYS = {
    "vote": ("typed", "slash", "dm", "in the 投票帖"),
    "power": ("menu", "slash", "dm"),
    "void": ("slash", "menu"),
    "replace": ("slash", "menu"),
    "modkill": ("slash", "menu"),
    "lastwords": ("slash", "dm"),
}
"""The interfaces of each kind of intent: `slash` is the slash command in the game's channel (a
forum game's main post), `dm` the same in a DM with the bot, `in the 投票帖` /vote in a forum
day's 投票帖, `menu` the DM's select (a power) or the right-click menu and its form (a
moderator's action)."""
BOT_POST = "<bot post>"
"""A void's target: the bot's newest post in the vote place that is no vote (a refusal)."""
DISCORD_REFUSED = "<Discord refused the post>"
"""A typed vote's outcome where Discord did not take the post (the overwrites)."""


# -- ids named: a vote post by the intent that made it ---------------------------------------------


@dataclass
class LabelNames(Names):
    """`nikit.Names`, and a vote post's message id named by its intent (`vote 12: 玩家3 → 5`):
    the typed post in one game, the bot's /vote post in the other."""

    labels: dict[int, str] = field(default_factory=dict)

    def of(self, ident: int) -> str:
        return self.labels.get(ident) or super().of(ident)


# -- the intents: one action, several ways -----------------------------------------------------------


VOTE_TEXT = re.compile(r"投\s*(\d+)\s*号?")


def intent_of(step: Step, index: int) -> Step:
    """A planned step as an intent, where it is an action the bot offers several ways (else the
    step itself): the planner's typed vote or /vote, power, /mod void|replace|modkill, last
    words. `index` names a vote's post (`label`) in both games."""
    args = dict(step.args)
    command = args.pop("command", None)
    tag = (("refusal", args.pop("refusal")),) if "refusal" in args else ()
    intent = _intent(step, args, command, index)
    return Step(intent.kind, intent.who, intent.seat, (*intent.args, *tag))


def _intent(step: Step, args: dict[str, Any], command: str | None, index: int) -> Step:
    if step.kind == "post" or command == "vote":
        text = args.get("text", "")
        target = args["target"] if command == "vote" else typed_target(text)
        planned = "slash" if command == "vote" else "typed"
        label = f"vote {index}: {step.who} → {target}"
        return Step(
            "vote", step.who, args=(("target", target), ("planned", planned), ("label", label))
        )
    if step.kind == "power":
        return Step("power", seat=step.seat, args=tuple(args.items()))
    if step.kind == "lastwords":
        return Step("lastwords", step.who, args=tuple(args.items()))
    if command == "mod void":
        return Step(
            "void", "moderator", args=(("post", args["message_id"]), ("reason", args["reason"]))
        )
    if command in ("mod replace", "mod modkill"):
        args.setdefault("reason", "挂机")  # the forms ask for one: both ways give it
        return Step(command.removeprefix("mod "), "moderator", args=tuple(args.items()))
    return Step(step.kind, step.who, step.seat, tuple(p for p in step.args if p[0] != "refusal"))


def typed_target(text: str) -> str:
    """What a typed vote names: a seat's number, `abstain`, or the words it could not read."""
    if text.strip() in ("弃权", "弃票"):
        return "abstain"
    found = VOTE_TEXT.fullmatch(text.strip())
    return found[1] if found else text.strip().removeprefix("投").strip()


def typed_text(target: str) -> str:
    """A vote post as the planner writes it (「投 5号」, 「弃权」, 「投 谁」)."""
    if target == "abstain":
        return "弃权"
    return f"投 {target}号" if target.isdecimal() else f"投 {target}"


@dataclass
class Chooser:
    """Which way each intent is carried out in one game: at random (seeded) among those
    available; in the second game, among those available but the first game's way."""

    rnd: random.Random
    pairs: Counter[tuple[str, str, str]] = field(default_factory=Counter)

    def first(self, ways: list[str]) -> str:
        return self.rnd.choice(ways)

    def other(self, kind: str, ways: list[str], before: str) -> str:
        others = [w for w in ways if w != before]
        way = self.rnd.choice(others) if others else before
        one, other = sorted((before, way))
        self.pairs[(kind, one, other)] += 1
        return way


# -- one game, its intents carried out one way ------------------------------------------------------


@dataclass
class Done:
    """What a step did in one game: the ways it was made, and what everyone saw."""

    step: Step
    way: str
    world: dict[str, Any]
    dms: dict[str, tuple[Any, ...]]
    private: dict[str, list[Any]]
    outcome: dict[str, str]
    state: str


class InterfacePlay(LocalePlay):
    """`LocalePlay` that carries out an intent one way (`perform`), and what the server, the
    DMs and the engine show after it (`public_world`, `dms`, `engine_state`), vote posts named
    by their intent (`LabelNames`)."""

    language: str = "zh-CN"
    dropped: set[int]
    """Typed votes the engine refused outright (and the bot's replies to them): the interface's
    own trace, left out of the server (see the module's docstring)."""
    votes: list[int]
    """Every vote post of an intent, oldest first (its message id in this game)."""
    spelling: random.Random
    """Which of the ways' spellings a vote is written in (`spelt`): each game its own."""
    seen_dms: dict[str, tuple[Any, ...]]
    """Everyone's DMs after the last step (`dms`)."""
    dm_items: dict[int, tuple[Any, Any]]
    """Each DM message's item, with what it was made from (`dm_item`)."""

    @property
    def labels(self) -> dict[int, str]:
        assert isinstance(self.names, LabelNames)
        return self.names.labels

    # -- which ways an intent can take here ---------------------------------------------------------

    async def ways(self, step: Step) -> list[str]:
        """The ways this intent can be carried out now (the first: the planned one)."""
        args = dict(step.args)
        if step.kind == "vote":
            return await self.vote_ways(step.who, args)
        if step.kind == "power":
            state = await self.state()
            menu = self.menu_for(state, step.seat, args) is not None
            return [w for w in WAYS["power"] if w != "menu" or menu]
        if step.kind == "lastwords":
            seated = (await self.state()).seat_of(str(self.member(step.who).id)) is not None
            return list(WAYS["lastwords"]) if seated else ["slash"]
        if step.kind == "void":  # a right-click needs a post to click on
            found = await self.void_target(args["post"]) is not None
            return [w for w in WAYS["void"] if w != "menu" or found]
        if step.kind in ("replace", "modkill"):
            return list(WAYS[step.kind])
        return ["-"]

    async def vote_ways(self, who: str, args: dict[str, Any]) -> list[str]:
        """A vote is switched only where both ways mean the same (the module's docstring): its
        target is read, and the engine would not void it for who the voter is."""
        planned, target = args["planned"], args["target"]
        state = await self.state()
        member = self.member(who)
        if not (target == "abstain" or target.isdecimal()) or voided_for_voter(
            state, str(member.id), target
        ):
            return [planned]
        ways = ["slash"]
        if state.seat_of(str(member.id)) is not None:
            ways.append("dm")  # from a DM, a player's only game; anyone else has none there
        if self.forum is not None and self.vote_place() is not self.channel:
            ways.append("in the 投票帖")  # /vote in the day's 投票帖, not the main post
        if self.may_post(member, self.vote_place()) and (
            self.forum is None or is_voting(state)  # a forum's vote place: the day's 投票帖
        ):
            ways.insert(0, "typed")
        return sorted(ways, key=lambda w: w != planned)

    def may_post(self, member: MemberActor, place: ChannelHandle) -> bool:
        """Whether Discord lets `member` post in `place` (as `MemberActor.send` checks it)."""
        backend = self.env.backend
        perm = "send_messages_in_threads" if place.is_thread else "send_messages"
        try:
            backend.require_permissions(self.guild_id, member.id, place.id, perm)
        except Exception:
            return False
        return True

    def actor(self, state: GameState, seat: int, args: dict[str, Any]) -> MemberActor:
        """Who makes a power step: the seat's holder, or the member it names (`by`: a player
        replaced tonight, with the menu they were sent)."""
        return self.members[args["by"]] if "by" in args else self.holder(state, seat)

    def menu_for(self, state: GameState, seat: int, args: dict[str, Any]) -> tuple[Any, str] | None:
        """The DM message and select of tonight's menu for this seat's power holding the choice
        (a target, `pass`, `use`), if the holder has one."""
        if state.window is None or state.window.kind is not PhaseKind.NIGHT:
            return None
        member = self.actor(state, seat, args)
        custom_id = self.menu_id(state, seat, args["power"])
        message = self.dm_with(member, custom_id)
        if message is None:
            return None
        value = menu_value(args)
        for row in message.components:
            for child in getattr(row, "children", []):
                wanted = str(getattr(child, "custom_id", ""))
                if wanted.startswith(custom_id) and any(
                    o.value == value for o in getattr(child, "options", [])
                ):
                    return message, wanted
        return None

    # -- carrying out an intent ----------------------------------------------------------------------

    async def perform(self, step: Step, way: str) -> tuple[dict[str, list[Any]], dict[str, str]]:
        """Carry out `step` the way `way`: the answers each person got, and each voter's outcome."""
        answers: dict[str, list[Any]] = {}
        outcome: dict[str, str] = {}
        if step.kind == "vote":
            await self.vote(step, way, outcome)
        elif step.kind == "power":
            await self.power(step, way, answers)
        elif step.kind == "void":
            await self.void(step, way, answers)
        elif step.kind in ("replace", "modkill"):
            await self.moderate(step, way, answers)
        elif step.kind == "lastwords":
            await self.last_words(step, way, answers)
        else:
            await self.do(step, answers)
        if not self.game_id:
            self.game_id = self.bot.runtime.routes.channel_games.get(self.channel.id, 0)
        if way == "dm":
            answers, outcome = self.as_in_the_game(answers), self.as_in_the_game(outcome)
        return answers, outcome

    def as_in_the_game(self, value: Any) -> Any:
        """A DM's answer "no game here" as the game's own refusal "not a player in this game":
        a command in a DM names no game, and one who holds no seat (a player replaced out) is
        in none there (docs/commands.md, "Which game"); the menu names its game, and the
        game's channel is the game's. Both tell the asker the same: they play no more."""
        if isinstance(value, str):
            no_game = render(self.language, "notice.no_game", {})
            return render(self.language, "actor.not_player", {}) if value == no_game else value
        if isinstance(value, dict):
            return {k: self.as_in_the_game(v) for k, v in value.items()}
        if isinstance(value, tuple | list):
            return type(value)(self.as_in_the_game(v) for v in value)
        return value

    async def vote(self, step: Step, way: str, outcome: dict[str, str]) -> None:
        args = dict(step.args)
        who, target, label = step.who, args["target"], args["label"]
        member, place = self.member(who), self.vote_place()
        mark = max(self.env.backend.messages.get(place.id, {}) or [0])
        said = await self.spelt(target, way)
        if way == "typed":
            try:
                message = await member.send(place, said)
            except BackendError:
                outcome[who] = DISCORD_REFUSED
                await self.env.settle()
                return
            await self.env.settle()
            self.labels[message.id] = label
            if not any(p.post_id == str(message.id) for p in (await self.state()).posts):
                self.dropped.add(message.id)  # refused outright: no post recorded
            else:
                self.votes.append(message.id)
            outcome[who] = self.public_outcome(place, message.id)
            return
        line = await self.vote_line(member, target)  # what the post must say, asked now
        if way == "slash":
            result = await member.slash(self.channel, "vote", target=said)
        elif way == "dm":
            result = await member.user.slash("vote", target=said)
        else:
            result = await member.slash(place, "vote", target=said)
        shown = answer_item(self.names, result)
        outcome[who] = "\n".join(m[0] for m in shown[3:])
        bot = self.env.backend.bot_user.id
        for stored in self.env.backend.messages.get(place.id, {}).values():
            fresh = stored.id > mark and not stored.is_ephemeral and not stored.reference
            if fresh and stored.author_id == bot and stored.content == line:
                # the /vote post, saying who voted for whom: known by its intent (another
                # text would stay itself, and differ from the typed post)
                self.labels[stored.id] = label
                self.votes.append(stored.id)

    async def spelt(self, target: str, way: str) -> str:
        """The vote as this way writes it, in one of the spellings people use: a typed post
        「投 5号」, 「投5」, 「投 玩家5」 (a name), 「投 @玩家5」 (a mention), 「弃权」, 「弃票」;
        `/vote` picked from the list (`5`, `abstain`) or typed by hand (`5号`, a name,
        「弃票」). A name or a mention only where the seat's player holds one card (5.0: a vote
        names a card, `vote_posts.maps_of`)."""
        state = await self.state()
        if target == "abstain":
            spellings = ["弃权", "弃票"] if way == "typed" else ["abstain", "弃票"]
            return self.spelling.choice(spellings)
        if not target.isdecimal():
            return typed_text(target) if way == "typed" else target
        seat = int(target)
        spellings = [f"投 {seat}号", f"投{seat}"] if way == "typed" else [str(seat), f"{seat}号"]
        if 1 <= seat <= len(state.seats) and rules_for(state).cards_per_player == 1:
            holder = self.holder(state, seat)
            name = self.names.of(holder.id).removeprefix("user:")
            spellings += [f"投 {name}", f"投 {holder.mention}"] if way == "typed" else [name]
        return self.spelling.choice(spellings)

    async def vote_line(self, member: MemberActor, target: str) -> str:
        """What the bot's post of a /vote must say: the voter's seat and whom (or 弃权), as the
        game names them (`notice.vote_post`)."""
        state = await self.state()
        ctx = await self.bot.runtime.contexts.context(self.game_id, state)
        voter = state.seat_of(str(member.id))
        if target == "abstain":
            return ctx.t("notice.vote_post_abstain", who=ctx.seat(voter))
        return ctx.t("notice.vote_post", who=ctx.seat(voter), target=ctx.seat(target))

    def public_outcome(self, place: ChannelHandle, post_id: int) -> str:
        """What the bot said of a typed vote in public: its reply's text, or for ✅ the text
        `/vote` answers an accepted vote with."""
        bot = self.env.backend.bot_user.id
        stored = self.env.backend.messages.get(place.id, {})
        for message in stored.values():
            if (
                message.author_id == bot
                and int((message.reference or {}).get("message_id", 0)) == post_id
            ):
                if post_id in self.dropped:
                    self.dropped.add(message.id)
                return self.names.text(message.content)
        post = stored.get(post_id)
        if post is not None and any(r.emoji == "✅" and bot in r.user_ids for r in post.reactions):
            return render(self.language, "notice.accepted", {})
        return "<no answer>"

    async def power(self, step: Step, way: str, answers: dict[str, list[Any]]) -> None:
        args = dict(step.args)
        state = await self.state()
        member = self.actor(state, step.seat, args)
        found = self.menu_for(state, step.seat, args) if way == "menu" else None
        args.pop("by", None)
        who = next(k for k, m in self.members.items() if m.id == member.id)
        if way == "menu":
            assert found is not None, f"no menu for {step}"
            message, custom_id = found
            result = await member.user.select(message, [menu_value(args)], custom_id=custom_id)
            if result.response is not None and result.response.id == message.id:
                # a click taken and not answered (a deferred update): simcord shows the menu's
                # own message as the response; an edit of it is in the DM's changes
                answers.setdefault(who, []).append(("power", ("answer", result.ephemeral, None)))
                return
        else:
            card = {"card": step.seat} if args.pop("cards", 1) > 1 else {}
            name = "pass" if args.pop("passed", False) else "act"
            if way == "slash":
                result = await member.slash(self.channel, name, **args, **card)
            else:
                result = await member.user.slash(name, **args, **card)
        answers.setdefault(who, []).append(("power", answer_item(self.names, result)))

    async def void(self, step: Step, way: str, answers: dict[str, list[Any]]) -> None:
        args = dict(step.args)
        found = await self.void_target(args["post"])
        if way == "slash":
            message_id = str(found[0].id) if found else "1"
            if found and self.spelling.random() < 0.5:  # Copy Message Link, not the id
                message_id = (
                    f"https://discord.com/channels/{self.guild_id}/{found[1].id}/{message_id}"
                )
            result = await self.moderator.slash(
                self.channel, "mod void", message_id=message_id, reason=args["reason"]
            )
            answers.setdefault("moderator", []).append(("void", answer_item(self.names, result)))
            return
        assert found is not None, f"nothing to right-click for {step}"
        message, where = found
        shown = await self.moderator.context_menu(where, "Void this vote", message)
        got = [answer_item(self.names, shown)]
        if shown.modal is not None:
            sent = await self.moderator.submit_modal(shown, {"reason": args["reason"]})
            got.append(answer_item(self.names, sent))
        answers.setdefault("moderator", []).append(("void", tuple(got)))

    async def void_target(self, post: str) -> tuple[Any, ChannelHandle] | None:
        """The message a void names, and where it is: the newest vote post the engine recorded
        (`LAST_VOTE_POST`; none recorded this window: the newest vote post of an intent), or the
        bot's newest post in the vote place that is no vote (`BOT_POST`)."""
        if post == LAST_VOTE_POST:
            posts = (await self.state()).posts
            wanted = int(posts[-1].post_id) if posts else (self.votes[-1] if self.votes else 0)
            return self.find_message(lambda m: m.id == wanted)
        bot = self.env.backend.bot_user.id
        return self.find_message(
            lambda m: m.author_id == bot and not m.reference and m.id not in self.labels,
            places=[self.vote_place()],
        )

    def find_message(
        self, wanted: Any, places: list[ChannelHandle] | None = None
    ) -> tuple[Any, ChannelHandle] | None:
        """The newest message `wanted` accepts, as a client has it, and its channel."""
        places = places or [
            self.channel,
            self.vote_place(),
            *(self.forum.threads if self.forum else []),
        ]
        for place in places:
            stored = self.env.backend.messages.get(place.id, {})
            ids = sorted(
                (m.id for m in stored.values() if not m.is_ephemeral and wanted(m)), reverse=True
            )
            if ids:
                message = next(m for m in place.history() if m.id == ids[0])
                return message, place
        return None

    async def moderate(self, step: Step, way: str, answers: dict[str, list[Any]]) -> None:
        """/mod replace|modkill, or the right-click menu on the seat's holder and its form."""
        args = tuple((k, v) for k, v in step.args if k != "refusal")
        if way == "slash":
            await self.do(
                Step("slash", "moderator", args=(("command", f"mod {step.kind}"), *args)), answers
            )
        else:
            menu = FORMS[f"mod {step.kind}"]
            answers.setdefault("moderator", []).append(
                await self.form(Step("form", "moderator", args=(("menu", menu), *args)))
            )

    async def last_words(self, step: Step, way: str, answers: dict[str, list[Any]]) -> None:
        if way == "slash":
            await self.do(Step("lastwords", step.who, args=step.args), answers)
            return
        user = self.member(step.who).user
        shown = await user.slash("lastwords")
        got = [answer_item(self.names, shown)]
        if shown.modal is not None:
            sent = await user.submit_modal(shown, {"words": dict(step.args)["words"]})
            got.append(answer_item(self.names, sent))
        answers.setdefault(step.who, []).append(("lastwords", tuple(got)))

    # -- what everyone sees ----------------------------------------------------------------------------

    def people(self) -> dict[str, MemberActor]:
        return {"moderator": self.moderator, "spectator": self.spectator, **self.members}

    def public_world(self) -> dict[str, Any]:
        """Every channel and thread of the server (`nikit.server`), vote posts named by their
        intent and the typed votes refused outright left out (the module's docstring), the
        roles and who holds them."""
        seen: dict[str, Any] = {}
        for cid, (key, (*head, items)) in server(self.env, self.guild_id, self.names).items():
            while key in seen:  # two channels of one name: in creation order
                key += "'"
            seen[key] = (*head, self.relabelled(cid, items))
        seen.update(roles_and_holders(self.env, self.guild_id, self.names))
        return seen

    def relabelled(self, channel_id: int, items: tuple[Any, ...]) -> tuple[Any, ...]:
        """A channel's items (`nikit.channel_items`, oldest first) with each vote post of an
        intent shown as its label (author and text), a reply to one naming it so, and the typed
        votes refused outright (and the replies to them) left out."""
        stored = sorted(self.env.backend.messages.get(channel_id, {}).values(), key=lambda m: m.id)
        shown = [m for m in stored if not m.is_ephemeral]
        out = []
        for message, item in zip(shown, items, strict=True):
            answered = int((message.reference or {}).get("message_id", 0))
            if message.id in self.dropped or answered in self.dropped:
                continue
            if message.id in self.labels:  # its author, its text and whom its text pings
                label = self.labels[message.id]
                item = (label, item[1], label, *item[3:10], (), (), False)
            if answered in self.labels:
                item = (*item[:6], self.labels[answered], *item[7:])
            out.append(item)
        return tuple(out)

    def dms(self) -> dict[str, tuple[Any, ...]]:
        """Each person's DM channel with the bot, its messages as `nikit.message_item` makes
        them (each made again only when the message changed: DMs only grow, and making every
        item after every step was a third of a game's time)."""
        backend = self.env.backend
        out = {}
        for name, member in self.people().items():
            dm = backend.dm_channels.get(member.id)
            held = backend.messages.get(dm, {}) if dm is not None else {}
            stored = sorted(held.values(), key=lambda m: m.id)
            out[name] = tuple(self.dm_item(m) for m in stored if not m.is_ephemeral)
        return out

    def dm_item(self, message: Any) -> Any:
        """`nikit.message_item` of a DM message, kept while it does not change."""
        mark = (
            message.content,
            message.edited_timestamp,
            message.pinned,
            tuple((r.emoji, tuple(r.user_ids)) for r in message.reactions),
        )
        kept = self.dm_items.get(message.id)
        if kept is None or kept[0] != mark:
            kept = self.dm_items[message.id] = (mark, message_item(self.names, message, {}))
        return kept[1]

    async def engine_state(self) -> str:
        """The engine's state, ids named (`LabelNames`): the same game in both."""
        return self.names.text(repr(await self.state())) if self.game_id else ""

    def record(self) -> Any:
        """The newest record `/game record` attached (JSON, and the HTML page), ids named."""
        bot = self.env.backend.bot_user.id
        for message in sorted(self.env.backend.messages.get(self.channel.id, {}).values(),
                              key=lambda m: m.id, reverse=True):  # fmt: skip
            files = {a["filename"]: a["url"] for a in message.attachments}
            if message.author_id == bot and any(f.endswith(".json") for f in files):
                out = {}
                for name, url in files.items():
                    blob = self.env.backend.cdn.get(url)
                    assert blob is not None, name
                    data = blob.decode("utf-8")
                    out[name] = (
                        named(self.names, json.loads(data))
                        if name.endswith(".json")
                        else self.names.text(data)
                    )
                return out
        return None


def menu_value(args: dict[str, Any]) -> str:
    """The menu's option for a power step: a target's seat, `pass`, or `use` (a power on
    nobody)."""
    if args.get("passed"):
        return "pass"
    return str(args["target"]) if args.get("target") is not None else "use"


def is_voting(state: GameState) -> bool:
    return state.window is not None and state.window.kind is PhaseKind.DAY


def voided_for_voter(state: GameState, player: str, target: str) -> bool:
    """Whether the engine would record this vote void for who the voter is (not a player, out of
    the game, barred from the run-off, …): `/vote` then posts nothing, by design."""
    abstain = target == "abstain"
    command = PostVote(
        player=player, post_id="", target=None if abstain else Seat(int(target)), abstain=abstain
    )
    try:
        events = decide(state, command)
    except EngineError:
        return False  # refused outright: no post either way
    return any(isinstance(e, VotePosted) and e.post.void_reason in VOTER_REFUSED for e in events)


def named(names: Names, value: Any) -> Any:
    """JSON data with every id named (`names`), nothing dropped."""
    if isinstance(value, dict):
        return {k: named(names, v) for k, v in value.items()}
    if isinstance(value, list):
        return [named(names, v) for v in value]
    if isinstance(value, str):
        return names.text(value)
    if isinstance(value, int) and not isinstance(value, bool) and value > 10**14:
        return names.of(value)
    return value


def private_news(
    before: dict[str, tuple[Any, ...]],
    now: dict[str, tuple[Any, ...]],
    answers: dict[str, list[Any]],
) -> dict[str, list[Any]]:
    """What each person was told privately by a step: the new (and changed) messages of their
    DM and the messages of the answers they got, one sorted list each (a DM or an answer: the
    medium is the interface's; a form, opened, is no message)."""
    out: dict[str, list[Any]] = {}
    for who in sorted(set(now) | set(answers)):
        old, new = before.get(who, ()), now.get(who, ())
        told: list[Any] = [(item[2], item[3], item[4]) for item in new[len(old) :]]
        told += [("changed", repr(x)) for x, y in zip(new, old, strict=False) if x != y]
        for got in answers.get(who, []):
            told += list(answer_messages(got))
        if told:
            out[who] = sorted(told)
    return out


def answer_messages(value: Any) -> Iterator[tuple[str, str, str]]:
    """The messages of answers (`nikit.answer_item`, nested as `Play.do` keeps them)."""
    if isinstance(value, tuple) and value[:1] == ("answer",):
        yield from value[3:]
    elif isinstance(value, tuple | list):
        for v in value:
            yield from answer_messages(v)


# -- the script: intents, ways, refusals --------------------------------------------------------------


@dataclass
class InterfaceScript(LocaleScript):
    """The locale test's script, each action an intent carried out a way the `chooser` picks
    (`step`), with refusals on top (`refusals`); every step is kept with what it did."""

    chooser: Chooser | None = None
    done: list[Done] = field(default_factory=list)
    refused: set[str] = field(default_factory=set)
    """The kinds of refusal made so far (each at its first chance, then now and then)."""
    ended: bool = False
    """The moderators' actions after the end, made (`after_the_end`)."""
    replaced: bool = False
    """A power holder replaced at night, and their old menu tried (`replaced_tonight`)."""
    night_kill: bool = False
    """A removal at night and a power on the removed seat in a menu sent before it, made."""

    async def step(self, step: Step) -> None:
        if dict(step.args).get("command") == "game start" and not self.signed_up:
            self.signed_up = True
            await self.sign_up()
        if step.kind == "block":
            return  # closed DMs: not this test's (the module's docstring)
        if dict(step.args).get("command") == "game record" and not self.ended:
            self.ended = True
            await self.after_the_end()
        if dict(step.args).get("command") == "game new" and self.ruleset in WARMUP:
            step = Step(step.kind, step.who, args=(*step.args, ("options", "warmup=30")))
        step = await self.tagged(intent_of(await self.as_menus_name(step), len(self.done)))
        play = self.play
        assert isinstance(play, InterfacePlay) and self.chooser is not None
        way = self.chooser.first(await play.ways(step))
        self.done.append(await carried_out(play, step, way))

    async def tagged(self, step: Step) -> Step:
        """Last words asked for by one who has none (the locale test's script asks so now and
        then) are a refusal."""
        if step.kind != "lastwords" or dict(step.args).get("refusal"):
            return step
        state = await self.play.state()
        mine = state.seats_of(str(self.play.member(step.who).id))
        due = any(seat in state.last_words_open for seat in mine) and not state.over
        return step if due else refusal(step)

    async def after_the_end(self) -> None:
        """A moderator's void, removal and replacement once the game is over: refused alike
        (the menus say so before the form)."""
        steps = [
            mod("mod void", ("message_id", LAST_VOTE_POST), ("reason", "代投")),
            mod("mod modkill", ("seat", 1)),
        ]
        if self.subs:
            steps.append(mod("mod replace", ("seat", 1), ("member", Someone(self.subs[0]))))
        for step in steps:
            await self.step(refusal(step))

    async def as_menus_name(self, step: Step) -> Step:
        """A replacement or removal names the seat as the right-click menu does: the player's
        first card in play. (5.0: a player holds two cards, and either names the player —
        `docs/rulings.md` — but the override records the card named: /mod's the moderator's,
        the menu's the player's first card in play. The same player either way.)"""
        args = dict(step.args)
        if args.get("command") not in ("mod replace", "mod modkill") or not self.play.game_id:
            return step
        state = await self.play.state()
        seat = args["seat"]
        first = (
            state.seat_of(state.seat(Seat(seat)).player) if 1 <= seat <= len(state.seats) else None
        )
        if first is None:
            return step
        named = tuple((k, int(first) if k == "seat" else v) for k, v in step.args)
        return Step(step.kind, step.who, step.seat, named)

    async def variant(self, step: Step) -> Step:
        return step  # the ways are the chooser's

    async def night(self, state: GameState) -> None:
        await super().night(state)
        await self.refusals(await self.play.state())

    async def day(self, state: GameState) -> None:
        await self.refusals(state)
        await super().day(state)

    def due(self, kind: str) -> bool:
        """Whether to make this refusal now: at its first chance, then one time in four."""
        if kind not in self.refused or self.rnd.random() < 0.25:
            self.refused.add(kind)
            return True
        return False

    async def refusals(self, state: GameState) -> None:
        """The same bad action through two interfaces (the module's docstring): each must be
        refused alike and change nothing (a vote for a seat it cannot take: posted and void
        alike)."""
        if state.over or state.window is None or state.window.chooser is not None:
            return  # (a victim's choice: no vote window, every vote refused alike)
        night = state.window.kind is PhaseKind.NIGHT
        refused, voided = self.vote_refusals(state, night)
        if night:
            refused += self.power_refusals(state)
        refused += self.moderator_refusals(state)
        for step in refused:
            await self.step(refusal(step))
        for step in voided:
            await self.step(refusal(step, "void"))
        if night:
            await self.removed_tonight(state)
            await self.replaced_tonight(await self.play.state())

    def vote_refusals(self, state: GameState, night: bool) -> tuple[list[Step], list[Step]]:
        """At night (a text game's channel is its vote channel): a vote, refused. By day: a vote
        for no seat, for a player out of the game, for one not in the run-off: posted, void."""
        alive = list(state.alive())
        voters = [self.name_of(int(state.seat(s).player)) for s in alive]
        out = gone(state)
        who = self.rnd.choice(voters)
        if night:
            if self.play.forum is None and self.due("vote at night"):
                return [vote_post(who, int(alive[0]))], []
            return [], []
        voided: list[Step] = []
        if self.due("vote for no seat"):
            voided.append(Step("slash", who, args=(("command", "vote"), ("target", "99"))))
        if out and self.due("vote for one out"):
            voided.append(vote_post(who, int(out[0])))
        window = state.window
        assert window is not None
        free = [s for s in alive if s not in window.candidates and s not in window.barred_voters]
        if window.candidates and free and self.due("vote for one not in the run-off"):
            voter = self.name_of(int(state.seat(free[0]).player))
            voided.append(vote_post(voter, int(free[-1])))
        return [], voided

    def moderator_refusals(self, state: GameState) -> list[Step]:
        """A void of the bot's own post, a replacement by one playing (a moderator who plays,
        now and then), a replacement into and a removal of a seat out of the game."""
        alive, out = list(state.alive()), gone(state)
        last = self.name_of(int(state.seat(alive[-1]).player))
        playing = [self.name_of(int(state.seat(s).player)) for s in alive]
        playing = [p for p in playing if p != last]
        found = []
        if self.due("void of the bot's post"):
            found.append(mod("mod void", ("message_id", BOT_POST), ("reason", "不是投票帖")))
        if playing and self.due("replace by a player"):
            sub = Someone(self.rnd.choice(playing))
            found.append(mod("mod replace", ("seat", int(alive[-1])), ("member", sub)))
        if out and self.subs and self.due("replace into a seat out"):
            sub = Someone(self.subs[0])
            found.append(mod("mod replace", ("seat", int(out[0])), ("member", sub)))
        if out and self.due("modkill of a seat out"):
            found.append(mod("mod modkill", ("seat", int(out[-1]))))
        return found

    def power_refusals(self, state: GameState) -> list[Step]:
        """A power the seat does not hold; a power on a player out of the game."""
        alive, out = list(state.alive()), gone(state)
        cards = rules_for(state).cards_per_player
        found: list[Step] = []
        night_powers = [p for p in self.powers if Power(p) not in (Power.CONFESS, Power.VETO)]
        seat = self.rnd.choice(alive)
        lacking = [p for p in night_powers if Power(p) not in view_for(state, seat).powers]
        target = next(s for s in alive if s != seat)
        if lacking and self.due("a power not held"):
            args = (("power", self.rnd.choice(lacking)), ("cards", cards), ("target", int(target)))
            found.append(Step("power", seat=int(seat), args=args))
        holders = [
            (s, p) for s in alive for p in view_for(state, s).powers if p.value in night_powers
        ]
        targeted = [(s, p) for s, p in holders if p not in rules_for(state).untargeted_powers]
        if out and targeted and self.due("a power on one out"):
            s, p = self.rnd.choice(targeted)
            args = (("power", p.value), ("cards", cards), ("target", int(out[0])))
            found.append(Step("power", seat=int(s), args=args))
        return found

    async def replaced_tonight(self, state: GameState) -> None:
        """Once a game, at night: a power holder's player is replaced; they then try the power
        in the menu they were sent (or /act), refused alike (no longer playing), and the
        substitute uses it (the menu the substitute is sent, or /act)."""
        play = self.play
        assert isinstance(play, InterfacePlay)
        if self.replaced or state.over or len(self.subs) < 2:
            return
        found = next(iter(menu_holders(play, state)), None)
        if found is None:
            return
        self.replaced = True
        seat, power, choice = found
        old = self.name_of(int(state.seat(seat).player))
        sub = Someone(self.subs.pop(0))
        await self.step(mod("mod replace", ("seat", int(seat)), ("member", sub)))
        cards = rules_for(state).cards_per_player
        args = (("power", power.value), ("cards", cards), *([choice] if choice else []))
        await self.step(refusal(Step("power", seat=int(seat), args=(*args, ("by", old)))))
        if not (await play.state()).over:
            await self.step(Step("power", seat=int(seat), args=args))

    async def removed_tonight(self, state: GameState) -> None:
        """Once a game, at a night with more than six players in: a player a power holder's
        menu offers is removed, and the holder then picks them in that menu (or by /act):
        refused alike, out of the game."""
        play = self.play
        assert isinstance(play, InterfacePlay)
        if self.night_kill or state.over or len(state.alive()) <= 6:
            return
        targeted = [(s, p, c) for s, p, c in menu_holders(play, state) if c is not None]
        if not targeted:
            return
        self.night_kill = True
        seat, power, choice = self.rnd.choice(targeted)
        await self.step(mod("mod modkill", ("seat", choice[1])))
        if not (await play.state()).over:
            cards = rules_for(state).cards_per_player
            args = (("power", power.value), ("cards", cards), choice)
            await self.step(refusal(Step("power", seat=int(seat), args=args)))


def menu_holders(play: InterfacePlay, state: GameState) -> Iterator[tuple[Seat, Power, Any]]:
    """(seat, power, menu choice) for each night power a living seat holds with tonight's
    menu in its holder's DM: a target it offers, else `use`."""
    rules = rules_for(state)
    for seat in state.alive():
        for power in view_for(state, seat).powers:
            if power.value in ("confess", "veto"):
                continue
            args: dict[str, Any] = {"power": power.value, "cards": rules.cards_per_player}
            if power not in rules.untargeted_powers:
                mine = state.seats_of(state.seat(seat).player)
                targets = [t for t in valid_targets(state, seat, power) if t not in mine]
                choice = next(
                    (
                        int(t)
                        for t in targets
                        if play.menu_for(state, int(seat), {**args, "target": int(t)})
                    ),
                    None,
                )
                if choice is not None:
                    yield seat, power, ("target", choice)
            elif play.menu_for(state, int(seat), args):
                yield seat, power, None


def gone(state: GameState) -> list[Seat]:
    """The seats of players entirely out of the game (5.0: a card out of the game names its
    player while their other card plays on)."""
    return [
        s.seat
        for s in state.seats
        if not any(state.seat(c).alive for c in state.seats_of(s.player))
    ]


def vote_post(who: str, seat: int) -> Step:
    """A planned typed vote (made whichever way the chooser picks)."""
    return Step("post", who, args=(("text", f"投 {seat}号"),))


def mod(command: str, *args: tuple[str, Any]) -> Step:
    return Step("slash", "moderator", args=(("command", command), *args))


def refusal(step: Step, kind: str = "refused") -> Step:
    """The step tagged as a refusal: `refused`, it must change nothing; `void`, a vote posted
    and recorded void (as a vote post for a seat it cannot take is, `/vote`'s too)."""
    return Step(step.kind, step.who, step.seat, (*step.args, ("refusal", kind)))


async def carried_out(play: InterfacePlay, step: Step, way: str) -> Done:
    """Carry out `step` the way `way`, and what everyone saw after it."""
    dms = play.seen_dms
    clean = Step(
        step.kind, step.who, step.seat, tuple((k, v) for k, v in step.args if k != "refusal")
    )
    answers, outcome = await play.perform(clean, way)
    now = play.seen_dms = play.dms()
    return Done(
        step=step,
        way=way,
        world=play.public_world(),
        dms=now,
        private=private_news(dms, now, answers),
        outcome=outcome,
        state=await play.engine_state(),
    )


# -- the two games ------------------------------------------------------------------------------------


async def start(db: Path, n: int, hosting: str, language: str, spelling: str) -> Run:
    """A world whose play carries out intents (`InterfacePlay`), vote posts named by intent."""
    run = await Run.start(db, n, hosting)
    kept = run.world.play
    play = InterfacePlay(
        **{f.name: getattr(kept, f.name) for f in dataclasses.fields(kept) if f.init}
    )
    play.lobby = kept.channel
    play.names = LabelNames(play.env, play.guild_id)
    play.language = language
    play.dropped, play.votes, play.seen_dms, play.dm_items = set(), [], {}, {}
    play.spelling = random.Random(spelling)
    run.world.play = play
    return run


@contextlib.contextmanager
def clients_in(language: str) -> Iterator[None]:
    """Every client speaks the game's language (simcord's own is en-US)."""
    if language == "en":
        yield
        return
    with clients_speaking(language):
        yield


async def record(ruleset: str, hosting: str, db: Path) -> tuple[list[Done], str, Any]:
    """The script played with each intent carried out one way: its steps, the language, and
    the game's record as `/game record` attached it."""
    rnd = random.Random(f"{SEED}-{ruleset}-{hosting}")
    language = LOCALES[GAMES.index((ruleset, hosting)) % 2]  # the games alternate
    with clients_in(language):
        spelling = f"{SEED}-spelling-a-{ruleset}-{hosting}"
        run = await start(db, size(ruleset), hosting, language, spelling)
        try:
            script = InterfaceScript(run.world.play, run.world.order, ruleset, size(ruleset), rnd)
            script.chooser = Chooser(random.Random(f"{SEED}-ways-a-{ruleset}-{hosting}"))
            script.tie_policy = "victim_choice" if ruleset in VICTIMS_CHOOSE else "revote"
            await script.setup(language, [])
            await script.run()
            assert not list(run.env.errors), run.env.errors
            kept = script.play
            assert isinstance(kept, InterfacePlay)
            attached = kept.record()
        finally:
            await run.stop()
    return script.done, language, attached


@dataclass
class Verdict(Differences):
    chooser: Chooser = field(default_factory=lambda: Chooser(random.Random()))
    refusals: int = 0


async def replay(run: Run, script: list[Done], verdict: Verdict) -> None:
    """The same intents, each carried out another way; after each step the two games compared."""
    play = run.world.play
    assert isinstance(play, InterfacePlay)
    before: tuple[Done, Done] | None = None
    for i, rec in enumerate(script):
        ways = await play.ways(rec.step)
        way = verdict.chooser.other(rec.step.kind, ways, rec.way) if rec.way in ways else ways[0]
        now = await carried_out(play, rec.step, way)
        when = f"step {i} ({rec.step}; {rec.way} | {way})"
        compare(when, (rec, now), before, verdict)
        before = (rec, now)
    verdict.compared = len(script)


def compare(
    when: str, done: tuple[Done, Done], before: tuple[Done, Done] | None, verdict: Verdict
) -> None:
    """What the step showed in both games (the module's docstring, 1–4), and for a refusal that
    it changed nothing."""
    a, b = done
    kind = a.step.kind if a.step.kind != "slash" else dict(a.step.args)["command"]
    changes = (
        delta(before[0].world if before else None, a.world),
        delta(before[1].world if before else None, b.world),
    )
    for what, found in (
        ("server", first_difference(*changes)),
        ("private", first_difference({"private": a.private}, {"private": b.private})),
        ("outcome", first_difference({"outcome": a.outcome}, {"outcome": b.outcome})),
        ("state", text_difference(a.state, b.state)),
    ):
        if found:  # (a state that parted stays apart: said once)
            where = "" if what == "state" else f" {place_of(found)} at {kind}"
            verdict.add(f"{what}{where}", f"{when}: A ≠ B {found}")
    tag = dict(a.step.args).get("refusal")
    if tag:
        verdict.refusals += 1
        for i, (name, change) in enumerate((("A", changes[0]), ("B", changes[1]))):
            was = before[i].state if before else ""
            problem = refusal_problem(done[i], change, was) if tag == "refused" else None
            problem = problem or refusal_problem(done[i], {}, done[i].state)
            if problem:
                verdict.add(f"refusal {kind} {problem}", f"{when}: {name} {problem}")


def text_difference(a: str, b: str) -> str | None:
    """Where two long texts (states) part, with a little of each from there."""
    if a == b:
        return None
    at = next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )
    start = max(0, at - 200)
    return f"from character {at}:\n      A: …{a[start : at + 200]}\n      B: …{b[start : at + 200]}"


def refusal_problem(done: Done, change: dict[str, Any], was: str) -> str | None:
    """Why a refused step is no refusal: it changed the server or the game, or nobody was told
    why (an answer, or a vote's outcome, other than "accepted")."""
    if change:
        return f"changed the server: {str(change)[:600]}"
    if done.state != was:
        return f"changed the game: {text_difference(was, done.state)}"
    told = [m[0] for items in done.private.values() for m in items] + list(done.outcome.values())
    accepted = {render(loc, "notice.accepted", {}) for loc in ("zh-CN", "en")}
    if not any(t and t not in accepted for t in told):
        return f"refused nothing (no answer, or accepted): {done.private} {done.outcome}"
    return None


@pytest.mark.parametrize(("ruleset", "hosting"), GAMES)
@pytest.mark.usefixtures("no_deferral_for_slowness")
async def test_two_ways_of_doing_one_thing_give_one_game(
    ruleset: str, hosting: str, tmp_path: Path
) -> None:
    script, language, record_a = await record(ruleset, hosting, tmp_path / "a.db")
    verdict = Verdict(chooser=Chooser(random.Random(f"{SEED}-ways-b-{ruleset}-{hosting}")))
    with clients_in(language):
        spelling = f"{SEED}-spelling-b-{ruleset}-{hosting}"
        run = await start(tmp_path / "b.db", size(ruleset), hosting, language, spelling)
        try:
            await replay(run, script, verdict)
            play = run.world.play
            assert isinstance(play, InterfacePlay)
            record_b = play.record()
            assert not list(run.env.errors), run.env.errors
        finally:
            await run.stop()
    for name in sorted(set(record_a) | set(record_b)):
        a, b = record_a.get(name), record_b.get(name)
        found = text_difference(a, b) if isinstance(a, str) and isinstance(b, str) else None
        found = found or first_difference(a, b)
        if found:
            verdict.add(f"record {name}", f"the record {name}: A ≠ B {found}")
    pairs = {k: n for k, n in sorted(verdict.chooser.pairs.items()) if k[0] in WAYS}
    print(f"{ruleset} ({hosting}, {language}): {len(script)} steps, {verdict.refusals} refusals")
    print(f"  ways compared: {pairs}")
    if verdict.found:
        pytest.fail(
            f"{ruleset} ({hosting}): two ways gave two games:\n  " + "\n  ".join(verdict.found)
        )
    assert record_a and verdict.refusals >= 2, verdict.refusals  # the end's, at least
    if (ruleset, hosting) in DEFAULT_GAMES:  # the chosen games go the whole way
        assert verdict.refusals >= 5, verdict.refusals
        for kind in WAYS:
            assert any(k == kind and a != b for (k, a, b) in verdict.chooser.pairs), (kind, pairs)


def test_a_dm_and_an_answer_carry_the_same_news() -> None:
    """The checker itself: a confirmation by DM (the menu's) and in an answer (/act's) is the
    same news; another text, or a second message, is not."""
    text = "已收到：杀人 → 4号 玩家4。截止前可重新提交，以最后一次为准。"

    def dm(said: str) -> tuple[Any, ...]:
        return ("user:TestBot", 0, said, "[]", "[]", (), None, False, False, (), (), (), False)

    def answer(said: str) -> list[Any]:
        return [("power", ("answer", True, None, (said, "[]", "[]")))]

    by_dm = private_news({"玩家1": ()}, {"玩家1": (dm(text),)}, {})
    assert by_dm == private_news({"玩家1": ()}, {"玩家1": ()}, {"玩家1": answer(text)})
    assert by_dm != private_news({"玩家1": ()}, {"玩家1": ()}, {"玩家1": answer(text + "!")})
    assert by_dm != private_news({}, {"玩家1": (dm(text),)}, {"玩家1": answer(text)})


def test_a_refusal_changes_nothing_and_says_why() -> None:
    """The checker itself: a refused step that changed the server or the game, or told nobody
    anything but "accepted", is no refusal."""
    told = {"moderator": [("3号已出局。", "[]", "[]")]}
    done = Done(Step("modkill"), "menu", {}, {}, told, {}, state="S")
    assert refusal_problem(done, {}, "S") is None
    assert refusal_problem(done, {"channel:game": "<gone>"}, "S")
    assert refusal_problem(done, {}, "T")
    accepted = {"moderator": [(render("zh-CN", "notice.accepted", {}), "[]", "[]")]}
    assert refusal_problem(dataclasses.replace(done, private=accepted), {}, "S")
    assert refusal_problem(dataclasses.replace(done, private={}), {}, "S")
