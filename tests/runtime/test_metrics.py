"""The /metrics endpoint (issue 17, point 5): off by default; when on, counts and times of this
process's games only, in Prometheus's text format."""

from __future__ import annotations

import asyncio
import socket
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest
from fakes import FakePort, runtime_on
from test_runtime import new_game, post, to_day

from bot.runtime import metrics as metrics_module


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def scrape(port: int) -> dict[str, float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        text = answer.read().decode()
    values: dict[str, float] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            values[name] = float(value)
    return values


async def _refreshed(
    port: int, shown: Callable[[dict[str, float]], bool], within: float = 10.0
) -> dict[str, float]:
    """The figures once a refresh (every 20 ms here, a read of the database) shows what
    ``shown`` asks for; the last scrape after ``within`` seconds (a loaded machine's refresh
    can take longer than a fixed wait)."""
    deadline = asyncio.get_running_loop().time() + within
    while True:
        seen = await asyncio.to_thread(scrape, port)
        if shown(seen) or asyncio.get_running_loop().time() > deadline:
            return seen
        await asyncio.sleep(0.02)


async def test_no_endpoint_unless_a_port_is_set(tmp_path: Path) -> None:
    w = await runtime_on(tmp_path)
    try:
        assert w.runtime.metrics is None and w.runtime.service.metrics is None
    finally:
        w.runtime.close()
        await w.database.dispose()


async def test_the_endpoint_counts_inputs_games_backlog_and_lateness(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(metrics_module, "REFRESH_SECONDS", 0.02)
    port = free_port()
    w = await runtime_on(tmp_path, FakePort(), metrics={"port": port})
    try:
        game_id = await new_game(w)
        await to_day(w, game_id)  # the night's lock, taken up at its deadline
        vote = post(w, 1001, "投 3号", n=1)
        await w.runtime.votes.ingest(game_id, vote)
        await w.runtime.votes.ingest(game_id, vote)  # redelivered
        undone = await w.runtime.service.repo.undone_effects()  # no performer here: all undone
        seen = await _refreshed(port, lambda seen: seen.get("faguan_outbox_backlog") == len(undone))
        assert seen['faguan_inputs_total{outcome="accepted"}'] == 2  # the lock, the vote
        assert seen['faguan_inputs_total{outcome="duplicate"}'] == 1
        assert seen["faguan_commit_seconds_count"] == 3
        assert seen["faguan_deadline_lateness_seconds_count"] == 1
        assert seen["faguan_games_owned"] == 1
        assert undone and seen["faguan_outbox_backlog"] == len(undone)
        assert seen["faguan_discord_errors_total"] == 0
    finally:
        await w.runtime.aclose()
        await w.database.dispose()
