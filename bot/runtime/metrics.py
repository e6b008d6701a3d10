"""What an operator watches, per process: Prometheus's text format at `/metrics`.

Off unless `[metrics] port` is set (docs/deploy.md). Counts and times only: nothing here names a
game's players, seats or roles, so the endpoint can be scraped by anyone who runs the machine.
The figures are the process's own (a shard process: its shards' games).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server

log = logging.getLogger(__name__)

REFRESH_SECONDS = 15.0
"""How often the figures read from the database (games owned, outbox backlog) are refreshed."""

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0)


class Metrics:
    """The process's metrics, in a registry of their own (not the library's global one)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        reg = self.registry
        self.games_owned = Gauge(
            "faguan_games_owned", "Active games this process owns", registry=reg
        )
        self.inputs = Counter(
            "faguan_inputs",
            "Inputs to games (commands, vote posts, locks) by outcome",
            ["outcome"],
            registry=reg,
        )
        self.commit_seconds = Histogram(
            "faguan_commit_seconds",
            "From an input's arrival at its game to its events committed",
            buckets=LATENCY_BUCKETS,
            registry=reg,
        )
        self.outbox_backlog = Gauge(
            "faguan_outbox_backlog", "Effects recorded and not yet performed", registry=reg
        )
        self.deadline_lateness = Histogram(
            "faguan_deadline_lateness_seconds",
            "From a window's deadline to its lock being taken up",
            buckets=LATENCY_BUCKETS,
            registry=reg,
        )
        self.discord_errors = Counter(
            "faguan_discord_errors",
            "Effects or commands that failed (Discord or the database away), to be retried",
            registry=reg,
        )
        self.backup_taken = Gauge(
            "faguan_backup_taken_timestamp_seconds",
            "When this process last took a backup of its database ([backup]; Unix time)",
            registry=reg,
        )
        self.backups_failed = Counter(
            "faguan_backups_failed", "Backups ([backup]) tried and not taken", registry=reg
        )
        self._refresher: asyncio.Task[None] | None = None
        self._server: Any = None

    def input(self, outcome: str, seconds: float) -> None:
        """One input decided and (if accepted) committed, `seconds` after it arrived."""
        self.inputs.labels(outcome=outcome).inc()
        self.commit_seconds.observe(seconds)

    def serve(self, host: str, port: int) -> None:
        """Listen for scrapes at http://host:port/metrics (a daemon thread of the library's)."""
        self._server, _thread = start_http_server(port, addr=host, registry=self.registry)
        log.info("metrics at http://%s:%s/metrics", host, port)

    def refresh_every(
        self, read: Callable[[], Awaitable[tuple[int, int]]], seconds: float | None = None
    ) -> None:
        """Keep (games owned, outbox backlog) from `read` current, in the running loop."""
        period = REFRESH_SECONDS if seconds is None else seconds

        async def loop() -> None:
            while True:
                try:
                    owned, backlog = await read()
                    self.games_owned.set(owned)
                    self.outbox_backlog.set(backlog)
                except Exception as exc:  # the database away: the last figures stand
                    log.warning("metrics: refresh failed (%s)", type(exc).__name__)
                await asyncio.sleep(period)

        self._refresher = asyncio.get_running_loop().create_task(loop())

    def close(self) -> None:
        """Stop refreshing and listening (`aclose` also waits for a refresh under way)."""
        if self._refresher is not None:
            self._refresher.cancel()
        if self._server is not None:
            with contextlib.suppress(Exception):
                self._server.shutdown()
                self._server.server_close()
            self._server = None

    async def aclose(self) -> None:
        """`close`, then wait (briefly) for a refresh under way to end: its database work must
        not outlive the database it reads."""
        self.close()
        task, self._refresher = self._refresher, None
        if task is not None:
            with contextlib.suppress(asyncio.CancelledError, asyncio.TimeoutError, Exception):
                await asyncio.wait_for(asyncio.shield(task), timeout=5)
