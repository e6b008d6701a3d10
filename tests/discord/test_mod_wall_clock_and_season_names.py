"""/mod set-deadline in a timezone with daylight saving, and /mod new-season with a long name, on
simcord (each test failed before its fix):

- set-deadline took a time the clocks skip (02:30 on America/New_York's spring-forward night) as
  03:30 without a word; it is refused, the gap named. A time the clocks repeat (01:30 on the
  fall-back night) is the next time they show it: the first, or the second once the first has
  passed — which could not be set at all before (the first, past, was refused).
- new-season cut a name over the limit to its first 32 characters and announced that; a name
  over the limit is refused, the limit named, nothing begun.
"""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest
from gamebot import Driver, Table
from test_moderator_audit import announced, en, private, speaking, state_of

from bot.records.i18n import render
from bot.runtime import standings

NY = ZoneInfo("America/New_York")
pytestmark = pytest.mark.table(seed="dst-seed", timezone=NY.key)


def ms(when: dt.datetime) -> int:
    return int(when.timestamp() * 1000)


async def test_a_time_the_clocks_skip_is_refused_with_the_gap(table: Table) -> None:
    t = table
    d = Driver(t, "v2")
    await d.start()
    before = (await state_of(t, d)).deadline
    said = len(announced(t))
    refused = await t.moderator.slash(t.channel, "mod set-deadline", time="2026-03-08 02:30")
    gap = {"date": "2026-03-08", "start": "02:00", "end": "03:00", "zone": NY.key}
    assert private(refused) == en("notice.skipped_time", value="2026-03-08 02:30", **gap)
    with speaking({t.moderator.id: "zh-CN"}):
        refused = await t.moderator.slash(t.channel, "mod set-deadline", time="2026-03-08 02:00")
    expected = render("zh-CN", "notice.skipped_time", {"value": "2026-03-08 02:00", **gap})
    assert private(refused) == expected
    assert "02:00" in expected and "03:00" in expected and NY.key in expected
    assert (await state_of(t, d)).deadline == before  # not 03:30, nor anything else
    assert len(announced(t)) == said
    # either side of the gap is read as the clocks show it
    accepted = await t.moderator.slash(t.channel, "mod set-deadline", time="2026-03-08 03:00")
    assert private(accepted) == en("notice.accepted")
    assert (await state_of(t, d)).deadline == ms(dt.datetime(2026, 3, 8, 7, tzinfo=dt.UTC))


async def test_a_time_the_clocks_repeat_is_the_next_time_they_show_it(table: Table) -> None:
    t = table
    d = Driver(t, "v2")
    await d.start()
    r = await t.moderator.slash(t.channel, "mod set-deadline", time="2026-11-01 01:30")
    assert private(r) == en("notice.accepted")
    first = dt.datetime(2026, 11, 1, 5, 30, tzinfo=dt.UTC)  # 01:30 EDT
    assert (await state_of(t, d)).deadline == ms(first)
    r = await t.moderator.slash(t.channel, "mod set-deadline", time="2026-11-01 03:00")
    assert private(r) == en("notice.accepted")
    # 01:10 EST, the second 1 o'clock: the first 01:30 has passed, the second is 20 minutes on
    await t.advance((dt.datetime(2026, 11, 1, 6, 10, tzinfo=dt.UTC) - t.env.now()).total_seconds())
    r = await t.moderator.slash(t.channel, "mod set-deadline", time="2026-11-01 01:30")
    assert private(r) == en("notice.accepted")
    second = dt.datetime(2026, 11, 1, 6, 30, tzinfo=dt.UTC)  # 01:30 EST
    assert (await state_of(t, d)).deadline == ms(second)


async def test_a_season_name_over_the_limit_is_refused_not_cut(table: Table) -> None:
    t = table
    repo = t.bot.runtime.service.repo
    limit = standings.SEASON_LIMIT
    long = "二〇二六年春季联赛" * 4  # 36 characters
    refused = await t.moderator.slash(t.channel, "mod new-season", name=long)
    assert private(refused) == en("standings.season_name_too_long", max=limit, length=len(long))
    with speaking({t.moderator.id: "zh-CN"}):
        refused = await t.moderator.slash(t.channel, "mod new-season", name=long)
    assert private(refused) == render(
        "zh-CN", "standings.season_name_too_long", {"max": limit, "length": len(long)}
    )
    assert standings.SEASON not in await repo.get_settings(t.guild.id)
    assert t.public() == []
    # the limit itself is a name; and its next season, one more than the limit, is refused too
    exact = "春" * limit
    begun = await t.moderator.slash(t.channel, "mod new-season", name=f" {exact} ")
    assert not begun.ephemeral
    assert await standings.current_season(repo, t.guild.id) == exact
    refused = await t.moderator.slash(t.channel, "mod new-season")
    length = len(standings.next_season_name(exact))
    assert private(refused) == en("standings.season_name_too_long", max=limit, length=length)
    assert await standings.current_season(repo, t.guild.id) == exact
