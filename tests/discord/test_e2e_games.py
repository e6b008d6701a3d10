"""Whole games on simcord, driven only through slash commands, menus, modals and posts, each
checked against `faguan replay` of the same actions (the engine's own verdict)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from envclock import EnvClock
from gamebot import (
    Driver,
    Table,
    assert_vote_posts,
    by_role,
    compare_with_replay,
    dump_transcript,
    running_table,
)

from bot.records.replay import run

SEED = "e2e-seed"


@pytest_asyncio.fixture(params=["text", "forum"])
async def table12(tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[Table]:
    """Each whole game is played in both hostings: text channels, and a forum channel (a main
    post and one 投票帖 per day), with the same outcomes."""
    async with running_table(tmp_path / "g.db", 12, EnvClock(), SEED, request.param) as t:
        yield t


async def test_mifei_12_whole_game(table12: Table) -> None:
    t = table12
    d = Driver(t, "mifei")
    roles = await d.start()
    k1, k2 = by_role(roles, "killer")
    p1, p2, p3 = by_role(roles, "police")
    (doc,) = by_role(roles, "doctor")
    (sk,) = by_role(roles, "secret_killer")
    c1, c2, c3, c4, c5 = by_role(roles, "civilian")

    # Night 1: the kill by menu and by command, a check, an empty needle, an explicit pass.
    await d.power_by_menu(k1, "kill", c1)
    await d.power_by_command(k2, "kill", c1)
    await d.power_by_menu(p1, "check", k1)
    await d.power_by_menu(doc, "save", c2)
    await d.power_by_command(sk, "shoot", None)
    await d.lock()
    assert any(text.startswith("【看表】第1夜截止") for text in t.public())
    assert any(f"昨夜出局：{c1}号" in text for text in t.public())
    check_dm = [m.content for m in t.dms(t.player(p1))][-1]
    assert "杀手" in check_dm and f"{k1}号" in check_dm
    await d.last_words(c1, "我是平民，3号可疑")

    # Day 1: votes by posts (digits, 号, full-width, names), by /vote; a change; an abstention.
    await d.post_vote(p1, f"投 {k1}号", k1)
    await d.post_vote(p2, f"投{k1}", k1)
    await d.slash_vote(p3, k1)
    await d.post_vote(c2, "弃权", None)
    await d.post_vote(c3, f"投 {k2}号", k2)
    await d.post_vote(c3, f"投 {chr(0xFF10 + k1) if k1 < 10 else k1}号 改票", k1)
    await d.post_vote(k1, f"vote {d.name(p1)}", p1)
    await d.post_vote(k2, f"投 {p1}", p1)
    await d.lock()
    assert any(f"{k1}号 {d.name(k1)} 出局" in text for text in t.public())

    # Night 2: the secret killer shoots a killer; the second (cumulative) needle kills.
    await d.power_by_menu(k2, "kill", p2)
    await d.power_by_menu(sk, "shoot", k2)
    await d.power_by_menu(doc, "save", c2)
    await d.power_by_menu(p1, "check", sk)
    await d.lock()

    # Day 2: the fired secret killer (now a killer) is voted out: the good side wins.
    for seat in (p1, p3, doc, c3, c4, c5):
        await d.post_vote(seat, f"投 {sk}", sk)
    await d.lock()

    state = await t.bot.runtime.service.state(d.game_id)
    assert state.result is not None and state.result.winner.value == "good"
    record = d.record(state)
    replayed = run(d.replay_input(roles, SEED)).record
    compare_with_replay(record, replayed)
    assert [p["left"] for p in replayed["phases"]][2] == [d.name(s) for s in sorted((p2, k2, c2))]
    final = t.public()[-3:]
    assert any("【终局】" in text and SEED in text for text in final)
    r = await t.player(p1).slash(t.channel, "game record")
    assert r.response is not None
    await assert_vote_posts(t, d.game_id, days=2)
    dump_transcript(t, f"mifei_12_{'forum' if t.forum else 'text'}")


async def test_v3mt_12_whole_game_with_a_run_off(table12: Table) -> None:
    t = table12
    d = Driver(t, "v3mt", tie="revote")
    roles = await d.start()
    k1, k2 = by_role(roles, "killer")
    (sk,) = by_role(roles, "secret_killer")
    p1, p2 = by_role(roles, "police")
    (sp,) = by_role(roles, "secret_police")
    (doc,) = by_role(roles, "doctor")
    c1, c2, c3, c4, c5 = by_role(roles, "civilian")

    # Night 1: the kill, a savable shot saved, an execution of a killer, a check answered after
    # the night (the fired secret killer reads as a killer).
    await d.power_by_menu(k1, "kill", c1)
    await d.power_by_menu(k2, "kill", c1)
    await d.power_by_menu(sk, "shoot", p1)
    await d.power_by_menu(doc, "save", p1)
    await d.power_by_menu(sp, "execute", k1)
    await d.power_by_menu(p1, "check", sk)
    await d.lock()
    assert [m.content for m in t.dms(t.player(p1))][-1].count("杀手") == 1

    # Day 1: a 2–2 tie goes to a run-off (PK); the run-off resolves.
    await d.post_vote(p1, f"投 {k2}", k2)
    await d.post_vote(p2, f"投 {k2}", k2)
    await d.post_vote(c2, f"投 {c3}", c3)
    await d.post_vote(c4, f"投 {c3}", c3)
    await d.lock()
    assert any("PK" in text for text in t.public())
    for seat in (p1, p2, c2, c4, c5):
        await d.post_vote(seat, f"投 {k2}", k2)
    await d.lock()

    # Night 2: the secret killer, now a killer, kills with the team; the doctor saves.
    await d.power_by_menu(sk, "kill", p2)
    await d.power_by_menu(doc, "save", p2)
    await d.power_by_menu(p1, "check", c3)
    await d.lock()

    # Day 2: the last killer is voted out.
    for seat in (p1, p2, c2, c3, c4):
        await d.post_vote(seat, f"投 {sk}", sk)
    await d.lock()

    state = await t.bot.runtime.service.state(d.game_id)
    assert state.result is not None and state.result.winner.value == "good"
    compare_with_replay(
        d.record(state),
        run(d.replay_input(roles, SEED, {"tie": "revote"})).record,
    )
    await assert_vote_posts(t, d.game_id, days=2)  # the run-off voted in day 1's 投票帖
    dump_transcript(t, f"runoff_{'forum' if t.forum else 'text'}")
