"""Every slash command, option and description has a zh-CN translation; autocomplete offers only
valid targets."""

from __future__ import annotations

from discord import Locale, app_commands
from gamebot import Driver, Table, by_role

from bot.discord.translator import FaguanTranslator
from bot.records.i18n import render


def _strings(
    command: app_commands.Command | app_commands.Group | app_commands.ContextMenu,
) -> list[str]:  # type: ignore[type-arg]
    if isinstance(command, app_commands.ContextMenu):  # a name only (判为无效, 替补, 移出游戏)
        return [command.name]
    found = [command.name, str(command.description)]
    if isinstance(command, app_commands.Group):
        for child in command.commands:
            found += _strings(child)
    else:
        for param in command.parameters:
            found.append(param.name)
    return found


async def test_every_command_name_and_description_is_translated(table: Table) -> None:
    translator = FaguanTranslator()
    missing = []
    for command in table.bot.tree.get_commands():
        for text in _strings(command):  # type: ignore[arg-type]
            got = await translator.translate(app_commands.locale_str(text), Locale.chinese, None)  # type: ignore[arg-type]
            if got is None:
                missing.append(text)
    assert missing == []


async def test_act_autocomplete_offers_only_valid_targets(table: Table) -> None:
    d = Driver(table, "basic")
    roles = await d.start()
    police = [s for s, r in roles.items() if r == "police"]
    choices = await table.player(police[0]).autocomplete(
        table.channel, "act", "target", "", power="check"
    )
    offered = {c["value"] for c in choices}
    assert offered == {s for s in range(1, 9) if s not in police}  # police may not check police
    powers = await table.player(police[0]).autocomplete(table.channel, "act", "power", "")
    assert [c["value"] for c in powers] == ["check"]


async def test_an_english_game_reads_as_english_is_written(table: Table) -> None:
    """An English game, played on: the sign-up says when windows close (not a bare 「1h」), the
    票型 counts "4 votes", a /vote refused in a run-off names the tied seats as every text names
    seats (it said 「(1,3)」), an abstention by /vote is posted as 「弃权 (abstain)」 (it read
    「投 弃权 (abstain) (vote)」), and a finished game's status gives no deadline (it read
    "deadline (no deadline set)")."""
    t = table
    d = Driver(t, "v2", tie="revote", language="en")
    roles = await d.start()
    assert "night powers close 1 h after the window opens" in t.public()[0]
    await d.quiet_night()
    a, b, *rest = by_role(roles, "civilian") + by_role(roles, "police") + by_role(roles, "killer")
    await d.post_vote(a, f"投 {b}", b)
    await d.post_vote(b, f"投 {a}", a)
    for i, voter in enumerate(rest):
        await d.post_vote(voter, f"投 {(a, b)[i % 2]}", (a, b)[i % 2])
    await d.lock()
    ctx = await t.bot.runtime.contexts.context(d.game_id, locale="en")
    assert any("(4 votes)" in m for m in t.public())

    refused = await t.player(rest[0]).slash(t.channel, "vote", target=str(rest[1]))
    assert refused.response is not None
    assert refused.response.content == render(
        "en", "vote.not_candidate", {"candidates": ctx.seats(f"{min(a, b)},{max(a, b)}")}
    )
    await d.slash_vote(rest[0], None)
    assert f"{ctx.seat(rest[0])}: 弃权 (abstain)" in t.public()

    await t.moderator.slash(t.channel, "mod end", winner="draw")
    status = await t.player(a).slash(t.channel, "game status")
    assert status.response is not None
    assert status.response.content.splitlines()[0] == f"Game {d.game_id} · v2 · over"


def test_a_sign_up_says_when_windows_close_with_the_timezone() -> None:
    """The sign-up said 「夜间截止 22:00」 / "night deadline 22:00": in which timezone, and is
    「1h」 a time or a length? A daily time names its zone, a length says it runs from the
    window's opening."""
    import datetime as dt
    from zoneinfo import ZoneInfo

    from bot.config import DailyAt, WindowLength
    from bot.discord.cogs.game import deadline_rule_text

    zone = ZoneInfo("Asia/Shanghai")
    daily, length = DailyAt(dt.time(22, 0)), WindowLength(dt.timedelta(hours=24))
    assert deadline_rule_text("en", daily, zone) == "daily at 22:00 (Beijing time)"
    assert deadline_rule_text("zh-CN", daily, zone) == "每天 22:00（北京时间）"
    assert deadline_rule_text("en", length, zone) == "24 h after the window opens"
    assert deadline_rule_text("zh-CN", length, zone) == "每轮开始后 24小时"
    assert deadline_rule_text("en", daily, ZoneInfo("UTC")) == "daily at 22:00 (UTC)"
