"""Effects performed again (a retry after a failure part-way, recovery after a crash before the
done mark) post nothing twice and leave nothing out:

- a repeat looks for its own earlier send from the effect's record time on: an older message
  with the same text (a second identical confirmation) is no sign of it, and a busy channel's
  30 newest messages are no limit;
- the notices that a player does not accept DMs are marked sent only once they are out;
- a team thread made before its id was stored is found, not made again."""

from __future__ import annotations

from typing import Any

import pytest
from faultkit import drain, fail_once
from gamebot import Driver, Table, by_role, close_dms, make_bot
from test_faults import SEED

pytestmark = pytest.mark.table(seed=SEED)


async def test_a_confirmation_like_an_earlier_one_is_sent_on_its_retry(table: Table) -> None:
    """The police pass, check a killer, then pass again: the third confirmation's DM fails
    once; its retry sends it (the first, with the same text, is older than its record)."""
    t = table
    d = Driver(t, "v2")
    roles = await d.start()
    police, killer = by_role(roles, "police")[0], by_role(roles, "killer")[0]
    await d.power_by_menu(police, "check", None)
    await t.advance(60)
    await d.power_by_menu(police, "check", killer)
    await t.advance(60)
    failed = fail_once(t, "不行使")
    await d.power_by_menu(police, "check", None)
    await drain(t)
    texts = [m.content for m in t.dms(t.player(police)) if m.content.startswith("已收到")]
    assert failed and len(texts) == 3 and texts[0] == texts[2] != texts[1]


async def test_a_lock_performed_again_after_a_busy_outage_posts_once(
    table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Night 1's lock was performed, its done marks lost (a crash); 31 messages are posted while
    the bot is down; the restart performs it again: one 看表帖, not two."""
    t = table
    d = Driver(t, "v2")
    await d.start()
    repo = t.bot.runtime.service.repo
    monkeypatch.setattr(repo, "mark_done_soon", lambda outbox_id: None)  # the crash
    await d.lock()  # day 1 opens: its posts out, none marked done
    clock_posts = [p for p in t.public() if p.startswith("【看表】")]
    await t.bot.ws.close()
    for i in range(31):
        await t.player(1 + i % 8).send(t.channel, f"聊天 {i}")
    await t.advance(600)
    await t.env.restart_bot(make_bot(t.db, t.clock, seed=SEED))  # type: ignore[attr-defined]
    await t.env.settle()
    assert [p for p in t.public() if p.startswith("【看表】")] == clock_posts


async def test_the_notice_of_closed_dms_is_sent_when_its_first_try_fails(table: Table) -> None:
    """A player's DMs are closed: the moderators are told, and the table (a deal's role DM);
    the public notice fails once; its retry sends it (the mark is written once it is out)."""
    t = table
    seat = 3
    user = await t.bot.fetch_user(t.player(seat).user.id)
    close_dms(t, (await user.create_dm()).id)
    failed = fail_once(t, "无法私信")
    d = Driver(t, "v2")
    await d.start()
    await drain(t)
    public = [p for p in t.public() if "无法私信" in p]
    told = [m.content for m in t.dms(t.moderator) if "无法私信" in m.content]
    assert failed and len(public) == 1 and len(told) == 1


async def test_a_team_thread_made_before_its_id_was_stored_is_not_made_again(
    table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    t = table
    d = Driver(t, "v2")
    service = t.bot.runtime.service
    set_channels = service.set_channels
    failed: list[str] = []

    async def away_once(game_id: int, channels: dict[str, Any]) -> None:
        if not failed and any(key.startswith("thread_") for key in channels):
            failed.append(next(iter(channels)))
            raise ConnectionError("the database is away")
        await set_channels(game_id, channels)

    monkeypatch.setattr(service, "set_channels", away_once)
    await d.start()
    await drain(t)
    names = [thread.name for thread in t.channel.threads]
    assert failed and len(names) == len(set(names))
