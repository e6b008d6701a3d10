"""Shared by the fault tests: a fixed short game, draining retries, and comparing a faulty game's
record with the engine's replay of the same actions."""

from __future__ import annotations

from typing import Any

from gamebot import Driver, Table

from bot.replay import run

COMPARED = ("phase", "number", "revote", "left", "checks", "tally", "abstained", "invalid", "tie", "last_words")
"""The fields of a phase that must match: what happened, not when or through which post."""


def roles_of(roles: dict[int, str], role: str) -> list[int]:
    return [s for s, r in sorted(roles.items()) if r == role]


async def drain(t: Table) -> None:
    """Let the retries run until the outbox is empty (the fault has cleared)."""
    for _ in range(20):
        if not await t.bot.service.repo.undone_effects():
            return
        jobs = [j for j in t.bot.scheduler.jobs() if j.id.endswith(":retry")]
        if jobs:
            await t.advance(max(0.0, (min(j.when for j in jobs) - t.env.now()).total_seconds()))
        await t.bot.scheduler.run_due()
        await t.env.settle()
    raise AssertionError("effects still undone")


def assert_same_game(faulty: dict[str, Any], d: Driver, roles: dict[int, str], seed: str) -> None:
    """The game played with faults has the record of the same actions replayed without any."""
    clean = run(d.replay_input(roles, seed)).record
    for key in ("phases", "result", "roles"):
        mine, theirs = faulty[key], clean[key]
        if key == "result":
            mine = {k: v for k, v in mine.items() if k != "reason"}
            theirs = {k: v for k, v in theirs.items() if k != "reason"}
        if key == "phases":
            mine = [{k: p.get(k) for k in COMPARED} for p in mine]
            theirs = [{k: p.get(k) for k in COMPARED} for p in theirs]
        assert mine == theirs, key
