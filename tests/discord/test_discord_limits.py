"""What the bot sends Discord fits Discord's limits at the largest tables, under display names of
Discord's longest made of Markdown's special characters (64 characters each once escaped).

simcord refuses, as Discord does, a message over 2,000 characters, an embed, a select or a
button past its limits, a modal past its own, a forum post's title over 100; it does not check
a thread's or a channel's name, autocomplete choices, nor the commands' declarations: those are
checked here against Discord's limits. A post too long for one message goes out as several, in
order, each after the first marked as a continuation; performed again (a retry after one of
them failed, a restart before the effect was marked done), none of them is posted twice."""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from envclock import EnvClock
from faultkit import drain, fail_once
from gamebot import Driver, Table, by_role, make_bot, running_table

from bot.discord.interactions import respond
from bot.records.i18n import render
from bot.records.render import plain
from bot.store import OutboxItem
from engine import codec
from engine.effects import Whisper
from engine.model import Seat, Team
from engine.rulesets import RULESETS

MARKDOWN = "*_~|`>#-[]()<:\\"
LIMIT = 2000
MARK = re.compile(r"^（续 (\d+)/(\d+)）")


def worst_name(n: int) -> str:
    """A display name of 32 characters, its own (two digits first), the rest Markdown-special."""
    return f"{n:02d}" + "".join(MARKDOWN[(n + i) % len(MARKDOWN)] for i in range(30))


@contextlib.asynccontextmanager
async def worst_table(
    tmp_path: Path, players: int, *, check_errors: bool = True
) -> AsyncIterator[Table]:
    """A started bot, a guild with a moderator and `players` players named `worst_name`: a
    table of none from `running_table`, the players joining once the bot is up."""
    async with running_table(tmp_path / "g.db", 0, EnvClock()) as t:
        t.env.check_errors = check_errors
        t.names = [worst_name(i) for i in range(1, players + 1)]
        t.players = [t.guild.add_member(t.env.create_user(name)) for name in t.names]
        await t.env.settle()
        yield t


def bot_posts(t: Table) -> list[str]:
    """The bot's public messages in the game channel, oldest first."""
    bot_id = t.bot.user.id if t.bot.user else 0
    return [
        m.content for m in t.channel.history() if m.author.id == bot_id and not m.flags.ephemeral
    ]


def seat(card: int, cards: int = 1, locale: str = "zh-CN") -> str:
    """A card as the bot names it in a post: `5号 ` (`#5 `) and its holder's name, escaped."""
    number = f"{card}号" if locale == "zh-CN" else f"#{card}"
    return f"{number} {plain(worst_name((card + cards - 1) // cards))}"


def runs(posts: list[str], head: str) -> list[list[str]]:
    """Each post starting with `head` and the messages that continue it (「（续 k/n）」)."""
    found: list[list[str]] = []
    for i, post in enumerate(posts):
        if post.startswith(head):
            run = [post]
            for later in posts[i + 1 :]:
                mark = MARK.match(later)
                if mark is None:
                    break
                run.append(later)
            found.append(run)
    return found


def complete(run: list[str]) -> bool:
    """Every message of a split post, in order: marked 2/n … n/n after the first."""
    marks = [MARK.match(m) for m in run[1:]]
    n = len(run)
    return all(m is not None and (int(m[1]), int(m[2])) == (i, n) for i, m in enumerate(marks, 2))


async def a_long_day(d: Driver, t: Table, after_lock: Any = None) -> None:
    """v2, 16 players, after a quiet night: each player posts two votes that cannot be read
    (void, each listed with its poster's name), then 15 vote each for the next (a 15-way tie)
    and the 16th abstains; the run-off ties the same way, so the second run-off names the 15
    candidates and the same 15 barred."""
    await d.quiet_night()
    for seat in range(1, 17):
        for _ in range(2):
            await d.post_vote(seat, "投 阿猫", None)
    for _ in range(2):  # the day's vote, then the first run-off
        for seat in range(1, 16):
            await d.post_vote(seat, f"投 {seat % 15 + 1}", seat % 15 + 1)
        await d.post_vote(16, "弃权", None)
        await d.lock()
        if after_lock is not None:
            await after_lock(t)


async def test_long_posts_go_out_in_several_messages_in_order(tmp_path: Path) -> None:
    """The day's 票型 with its void posts (about 3,800 characters), the second run-off's post
    (2,043) and the end of the game revealing every role (about 2,340): each goes out as
    messages Discord takes, the later ones marked, nothing left out; the game plays on."""
    async with worst_table(tmp_path, 16) as t:
        d = Driver(t, "v2", tie="revote")
        await d.start()
        await a_long_day(d, t)
        await t.moderator.slash(t.channel, "mod end", winner="draw")
        await t.env.settle()
        assert await t.bot.runtime.service.repo.undone_effects() == []
        posts = bot_posts(t)
        assert all(len(p) <= LIMIT for p in posts)
        tally = runs(posts, "第1天票型")
        assert len(tally) == 1 and len(tally[0]) >= 2 and complete(tally[0])
        assert "\n".join(tally[0]).count("无法识别") == 32
        runoff = runs(posts, "第1天第2次 PK")
        assert len(runoff) == 1 and len(runoff[0]) == 2 and complete(runoff[0])
        shown = "\n".join(runoff[0])
        for card in range(1, 16):  # a candidate, and barred
            assert shown.count(seat(card)) == 2
        over = runs(posts, "【终局】")
        assert len(over) == 1 and len(over[0]) >= 2 and complete(over[0])
        shown = "\n".join(over[0])
        for card in range(1, 17):  # its role, and its score
            assert shown.count(seat(card)) == 2


async def test_a_long_post_performed_again_sends_each_of_its_messages_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The 票型's second message fails once: the retry sends it, not the first again. The end of
    the game is posted, then the bot stops before marking it done: started again, it performs
    the post again and finds each of its messages already there."""
    async with worst_table(tmp_path, 16, check_errors=False) as t:
        d = Driver(t, "v2", tie="revote")
        await d.start()
        failed = fail_once(t, "（续 2/")
        await a_long_day(d, t, after_lock=drain)
        assert failed
        posts = bot_posts(t)
        (tally,) = runs(posts, "第1天票型")
        assert complete(tally) and all(posts.count(m) == 1 for m in tally)
        assert posts.index(tally[0]) + 1 == posts.index(tally[1])  # in order, none between

        repo = t.bot.runtime.service.repo
        monkeypatch.setattr(repo, "mark_done_soon", lambda outbox_id: None)  # the crash
        await t.moderator.slash(t.channel, "mod end", winner="draw")
        await t.env.settle()
        before = bot_posts(t)
        (over,) = runs(before, "【终局】")
        assert len(over) >= 2 and complete(over)
        await t.env.restart_bot(make_bot(t.db, t.clock))  # type: ignore[attr-defined]
        await t.env.settle()
        await drain(t)
        after = bot_posts(t)
        assert [p for p in after if p in over] == over


async def test_a_long_private_message_goes_out_in_several_dms(tmp_path: Path) -> None:
    """A substitute told the checks of forty nights (a private message of about 3,000
    characters): several DMs in order, every check in them."""
    async with worst_table(tmp_path, 16) as t:
        d = Driver(t, "v2")
        roles = await d.start()
        police = by_role(roles, "police")[0]
        checks = ";".join(f"{night}:{night % 16 + 1}:good" for night in range(1, 41))
        history = Whisper(seat=Seat(police), key="check.history", params=(("checks", checks),))
        item = OutboxItem(
            id=10**9,
            game_id=d.game_id,
            seq=None,
            payload=codec.dump(history),
            attempts=0,
            last_error=None,
            done_at=None,
        )
        await t.bot.effects(item)
        await t.env.settle()
        dms = [m.content for m in t.dms(t.player(police))]
        told = [m for m in dms if m.startswith("你接替的座位") or MARK.match(m)]
        assert len(told) >= 2 and complete(told)
        assert all(len(m) <= LIMIT for m in told)
        shown = "\n".join(told)
        for night in range(1, 41):
            assert f"第{night}夜验 {seat(night % 16 + 1)}：" in shown


async def test_answers_naming_every_card_of_the_largest_5_0_table(tmp_path: Path) -> None:
    """5.0 at 16 players: 32 cards. `/game status` names the 32 cards alive and `/mod pending`
    the 32 whose role is not confirmed (over 2,200 characters each under the worst names):
    each answer comes as several private messages. The power menus and the role embeds sent at
    the start are within their limits (simcord would refuse them), and the `/vote` and `/act`
    suggestions within autocomplete's: at most 25, each name at most 100 characters."""
    async with worst_table(tmp_path, 16) as t:
        d = Driver(t, "v5")
        roles = await d.start()
        assert len(roles) == 32
        status = await t.player(1).slash(t.channel, "game status")
        pending = await t.moderator.slash(t.channel, "mod pending")
        for result, line in ((status, "In the game: "), (pending, "Role (身份) not confirmed: ")):
            assert result.response is not None
            answers = [result.response, *result.followups]
            messages = [m.content for m in answers]
            assert len(messages) >= 2 and all(len(m) <= LIMIT for m in messages)
            assert all(m.ephemeral for m in answers)
            shown = "\n".join(messages)
            assert line in shown
            for card in range(1, 33):  # in the asker's language (simcord's: en-US)
                assert seat(card, cards=2, locale="en") in shown
        killer = by_role(roles, "killer")[0]
        member = d.member(killer)
        for option, typed in (("target", ""), ("target", "3")):
            choices = await member.autocomplete(t.channel, "act", option, typed, power="kill")
            assert 0 < len(choices) <= 25
            assert all(len(str(c["name"])) <= 100 and len(str(c["value"])) <= 100 for c in choices)
        choices = await member.autocomplete(t.channel, "vote", "target", "")
        assert 0 < len(choices) <= 25 and all(len(str(c["name"])) <= 100 for c in choices)


async def test_commands_and_thread_names_are_within_discords_limits(tmp_path: Path) -> None:
    """What simcord does not check: the commands as registered (names up to 32 characters,
    descriptions and their zh-CN translations up to 100, at most 25 choices of up to 100), and
    the names the bot gives threads, channels and roles (up to 100) for any game id."""
    async with worst_table(tmp_path, 1) as t:
        registered = [c for scope in t.env.backend.commands.values() for c in scope.values()]
        assert registered
        problems: list[str] = []

        def check(entry: dict[str, Any], path: str) -> None:
            names = [entry["name"], *(entry.get("name_localizations") or {}).values()]
            texts = [entry.get("description") or "",
                     *(entry.get("description_localizations") or {}).values()]  # fmt: skip
            problems.extend(f"{path}: name {n!r}" for n in names if not 1 <= len(n) <= 32)
            problems.extend(f"{path}: description {s!r}" for s in texts if len(s) > 100)
            choices = entry.get("choices") or []
            if len(choices) > 25 or any(len(c["name"]) > 100 for c in choices):
                problems.append(f"{path}: choices")
            for option in entry.get("options") or []:
                check(option, f"{path} {option['name']}")

        for command in registered:
            check(command, command["name"])
        assert problems == []

    game = 10**15  # far past any server's games
    from bot.discord.start_effects import role_name
    from bot.discord.team_threads import team_thread_name

    names = []
    for locale in ("zh-CN", "en"):
        names.append(role_name(game, locale))
        names.extend(team_thread_name(game, team, locale) for team in Team)
        for rules in RULESETS.values():
            shown = f"{rules.id} {rules.name_zh}"
            names.append(render(locale, "forum.main_title", {"game": game, "ruleset": shown}))
            names.append(render(locale, "forum.lobby_title", {"ruleset": shown}))
        for day in (1, 99):
            names.append(render(locale, "forum.vote_post_title", {"day": day, "game": game}))
    assert all(1 <= len(name) <= 100 for name in names), max(names, key=len)


class _Answers:
    """An interaction's answer channels as `respond` uses them, recording each message."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []
        self.response = self
        self.followup = self
        self.extras: dict[str, Any] = {}

    def is_done(self) -> bool:
        return bool(self.sent)

    async def send_message(self, text: str, **kwargs: Any) -> None:
        self.sent.append((text, kwargs))

    async def send(self, text: str, **kwargs: Any) -> None:
        self.sent.append((text, kwargs))


async def test_a_long_private_answer_carries_its_view_on_its_last_message_only() -> None:
    """An answer in several messages: each is private and keeps its mentions muted; what it
    carries besides its text (a menu) comes once, with the last, not with every part."""
    answers = _Answers()
    menu, quiet = object(), object()
    long_text = "\n".join(f"{n}号 " + "名" * 60 for n in range(1, 80))
    await respond(answers, long_text, view=menu, allowed_mentions=quiet)  # type: ignore[arg-type]
    assert len(answers.sent) > 1
    assert all(kw["ephemeral"] and kw["allowed_mentions"] is quiet for _, kw in answers.sent)
    assert [kw.get("view") for _, kw in answers.sent] == [None] * (len(answers.sent) - 1) + [menu]
    assert all(len(text) <= 2000 for text, _ in answers.sent)
