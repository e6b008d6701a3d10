"""The moderators' forms (right-click "Modkill", "Replace", "Void this vote"; a player's 遗言
form) on simcord: each opened form is its own, and a form opened on a player acts on that player
or on nobody.

- discord.py keeps open forms by custom id alone: two moderators' forms of one kind in one game
  once shared one, so the second replaced the first, the first moderator's submit ran the second
  one's form (its seat) and the second's submit was lost.
- A form names the player it was opened on: submitted after their seat went to a substitute, it
  is refused (``mod.seat_changed``) instead of removing or replacing the substitute, who was just
  sent the seat's role."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from gamebot import Driver, Table, by_role

from bot.records.i18n import render
from engine.model import Seat

SEED = "forms-seed"
pytestmark = pytest.mark.table(seed=SEED)


async def day_one(d: Driver) -> dict[int, str]:
    """Start the game and play night 1 (a kill) into day 1; the roles by seat."""
    roles = await d.start()
    await d.power_by_menu(by_role(roles, "killer")[0], "kill", by_role(roles, "civilian")[0])
    await d.lock()
    return roles


def private(result: Any) -> str:
    assert result.response is not None and result.ephemeral, result
    return str(result.response.content)


async def alive(t: Table, d: Driver, seat: int) -> bool:
    return (await t.bot.runtime.service.state(d.game_id)).seat(Seat(seat)).alive


async def holder(t: Table, d: Driver, seat: int) -> str:
    return (await t.bot.runtime.service.state(d.game_id)).seat(Seat(seat)).player


async def test_two_moderators_forms_open_at_once_each_act_on_their_own_player(
    table: Table,
) -> None:
    t = table
    d = Driver(t, "v2")
    roles = await day_one(d)
    x, y = by_role(roles, "civilian")[1:3]
    second = t.guild.add_member(t.env.create_user("管理乙"))
    t.env.backend.add_member_role(t.guild.id, second.id, t.mod_role.id)
    await t.env.settle()
    form_a = await t.moderator.context_menu(t.channel, "Modkill", t.player(x))
    form_b = await second.context_menu(t.channel, "Modkill", t.player(y))
    assert form_a.modal is not None and form_b.modal is not None
    assert form_a.modal["custom_id"] != form_b.modal["custom_id"]
    await t.moderator.submit_modal(form_a, {"reason": "A: 长期不发言"})
    await t.env.settle()
    assert not await alive(t, d, x) and await alive(t, d, y)  # A's form: A's player
    done_b = await second.submit_modal(form_b, {"reason": "B: 长期不发言"})
    await t.env.settle()
    assert done_b.acknowledged
    assert not await alive(t, d, y)


async def test_a_modkill_form_opened_before_a_replacement_removes_nobody(table: Table) -> None:
    t = table
    d = Driver(t, "v2")
    roles = await day_one(d)
    idle = by_role(roles, "civilian")[1]
    kill_form = await t.moderator.context_menu(t.channel, "Modkill", t.player(idle))
    replace_form = await t.moderator.context_menu(t.channel, "Replace", t.player(idle))
    assert kill_form.modal is not None and replace_form.modal is not None
    await t.moderator.submit_modal(replace_form, {"substitute": [t.outside], "reason": "掉线"})
    await t.env.settle()
    assert await holder(t, d, idle) == str(t.outside.id)
    refused = await t.moderator.submit_modal(kill_form, {"reason": "长期不发言"})
    await t.env.settle()
    assert private(refused) == render("en", "mod.seat_changed", {"seat": idle})
    assert await alive(t, d, idle)  # the substitute plays on


async def test_two_replace_forms_on_one_player_replace_them_once(table: Table) -> None:
    t = table
    d = Driver(t, "v2")
    roles = await day_one(d)
    dropped = by_role(roles, "civilian")[2]
    first = await t.moderator.context_menu(t.channel, "Replace", t.player(dropped))
    second = await t.moderator.context_menu(t.channel, "Replace", t.player(dropped))
    assert first.modal is not None and second.modal is not None
    await t.moderator.submit_modal(first, {"substitute": [t.outside], "reason": "掉线"})
    other = t.guild.add_member(t.env.create_user("路人乙"))
    await t.env.settle()
    refused = await t.moderator.submit_modal(second, {"substitute": [other], "reason": "掉线"})
    await t.env.settle()
    assert private(refused) == render("en", "mod.seat_changed", {"seat": dropped})
    assert await holder(t, d, dropped) == str(t.outside.id)
    assert t.dms(other) == []  # never sent the seat's role


async def test_a_form_or_a_dm_button_that_fails_is_answered(
    table: Table, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The store away as a Modkill form is submitted, or as a role's Confirm is pressed: the
    person is asked privately to try again (discord.py's own handlers only log, leaving the
    interaction unanswered). The log names the failure's type alone: its message may carry a
    hidden role."""
    t = table
    d = Driver(t, "v2")
    roles = await day_one(d)
    idle = by_role(roles, "civilian")[1]

    async def away(*args: Any, **kwargs: Any) -> Any:
        raise ConnectionError("玩家3 is the killer")

    form = await t.moderator.context_menu(t.channel, "Modkill", t.player(idle))
    monkeypatch.setattr(t.bot.runtime.service, "submit", away)
    failed = await t.moderator.submit_modal(form, {"reason": "长期不发言"})
    await t.env.settle()
    assert private(failed) == render("en", "notice.try_again", {})
    assert await alive(t, d, idle)
    monkeypatch.setattr(t.bot.runtime.service.repo.lobbies, "confirm", away)
    button = f"faguan:confirm:{d.game_id}:{idle}"
    pressed = await d.member(idle).user.click(d._dm_with(idle, button), custom_id=button)
    await t.env.settle()
    assert private(pressed) == render("en", "notice.try_again", {})
    logged = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert logged == [
        "ModKillForm failed: ConnectionError",
        "ConfirmButton failed: ConnectionError",
    ]


async def test_a_bot_is_no_substitute(table: Table) -> None:
    """Neither the Replace form nor /mod replace gives a seat to a bot account: refused before
    anything is submitted, and the seat stays its player's."""
    t = table
    d = Driver(t, "v2")
    roles = await day_one(d)
    dropped = by_role(roles, "civilian")[1]
    player = await holder(t, d, dropped)
    helper = t.guild.add_member(t.env.create_user("小助手", bot=True))
    await t.env.settle()
    refusal = render("en", "mod.substitute_is_bot", {"name": "小助手"})
    form = await t.moderator.context_menu(t.channel, "Replace", t.player(dropped))
    by_form = await t.moderator.submit_modal(form, {"substitute": [helper], "reason": "掉线"})
    by_command = await t.moderator.slash(t.channel, "mod replace", seat=dropped, member=helper)
    await t.env.settle()
    assert private(by_form) == refusal and private(by_command) == refusal
    assert await holder(t, d, dropped) == player
    assert t.dms(helper) == []


def form_words(form: Any) -> set[str]:
    """A form's title and its inputs' labels (in rows or in labels, as Discord shows them)."""
    if isinstance(form, dict):
        found = {str(v) for k, v in form.items() if k in ("title", "label")}
        return found.union(*(form_words(v) for v in form.values()))
    if isinstance(form, list):
        return set().union(*(form_words(v) for v in form))
    return set()


@pytest.mark.parametrize("locale", ["zh-CN", "en"])
async def test_every_form_is_worded_in_the_askers_language(table: Table, locale: str) -> None:
    """The forms read in the language of whoever opens them, as their private answers do: they
    were 「遗言 / Last words」, 「理由 / Reason」… in Chinese and English at once, whatever the
    language (the differential game of tests/robustness/test_rb_locales.py found them)."""
    from test_private_answers import speaking

    t = table
    d = Driver(t, "v2")
    roles = await day_one(d)
    out, idle, other = by_role(roles, "civilian")[:3]  # out: killed in the night
    post = await d.post_vote(idle, f"投 {other}号", other)
    speakers = {m.id: locale for m in (t.moderator, d.member(out))} if locale == "zh-CN" else {}
    with speaking(speakers):
        forms = [
            await d.member(out).slash(t.channel, "lastwords"),
            await t.moderator.context_menu(t.channel, "Modkill", t.player(idle)),
            await t.moderator.context_menu(t.channel, "Replace", t.player(idle)),
            await t.moderator.context_menu(t.channel, "Void this vote", post),
        ]
    keys = ["lastwords_msg.form_title", "lastwords_msg.form_label", "mod.modkill_form"]
    keys += ["mod.replace_form", "mod.form_substitute", "mod.void_form", "mod.form_reason"]
    assert set().union(*(form_words(f.modal) for f in forms)) == {render(locale, k) for k in keys}
