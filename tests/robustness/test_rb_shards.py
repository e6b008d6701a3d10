"""Shard processes on one PostgreSQL, for real (#17): separate OS processes (`shardworker.py`),
each a FaguanBot in a simcord world of its own holding its shards' servers, play a game on every
server at once; one is SIGKILLed mid-game and started again, all are restarted with a new
`shard_count`, and a process whose shards overlap a running one's waits, performing nothing.

What must hold: each process recovers exactly the games of its shards; every game's stored
record equals `faguan replay` of the actions the test took; no effect is performed twice across
all processes (each worker appends the idempotency key of every effect it performed to one file;
after a SIGKILL an effect performed but not yet marked done may be performed again by the
restarted process under the *same* key: a key seen twice must be that, a game of the killed
process's, once before and once after the kill); each window is locked once (one resolution
event per window in the stored events).

It needs PostgreSQL (the tests' own throwaway server, or $FAGUAN_TEST_PG_URL's): without one it
fails, it is never skipped.
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import rbkit  # noqa: F401  (puts tests/discord on sys.path, for gamebot)
from gamebot import COMPARED, compare_with_replay
from scratchdb import scratch_database  # noqa: F401 (the `database` fixture)
from shardworker import RULESET, SEED, player_names
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from bot.records.replay import run

WORKER = Path(__file__).with_name("shardworker.py")
GUILDS = [(index, ((6000 + index) << 22) | 7) for index in range(4)]
"""(index, server id): with 2 shards, servers 0 and 2 are on shard 0; with 3, servers 0 and 3.
The low 22 bits are not zero, as in a real id (the shard is the bits above them)."""
ANSWER_SECONDS = 120


def shard_of(guild_id: int, count: int) -> int:
    return (guild_id >> 22) % count


class Process:
    """A running shard worker, talked to by JSON lines."""

    def __init__(
        self,
        folder: Path,
        url: str,
        count: int,
        ids: list[int],
        lane: int,
        at: float,
        world: Path | None = None,
    ):
        self.count, self.ids = count, ids
        config = {
            "url": url,
            "shard_count": count,
            "shard_ids": ids,
            "guilds": GUILDS,
            "lane": lane,
            "start_at": at,
            "keys": str(folder / f"keys-{lane}.txt"),
            "world": str(world) if world else None,
        }
        self.keys = folder / f"keys-{lane}.txt"
        self.errors = open(folder / f"worker-{lane}.log", "w+")  # noqa: SIM115 - closed in quit/kill
        self.popen = subprocess.Popen(
            [sys.executable, str(WORKER), json.dumps(config)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.errors,
            text=True,
            cwd=WORKER.parents[2],
        )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.recovered: list[int] | None = None
        self.now = at

    def _read(self) -> None:
        assert self.popen.stdout is not None
        for line in self.popen.stdout:
            self.lines.put(line)
        self.lines.put("")  # the end

    def said(self, seconds: float = ANSWER_SECONDS) -> dict[str, Any] | None:
        """The worker's next line, or None if it says nothing for `seconds`."""
        try:
            line = self.lines.get(timeout=seconds)
        except queue.Empty:
            return None
        if not line:
            self.errors.seek(0)
            raise AssertionError(f"worker {self.ids} ended:\n{self.errors.read()[-4000:]}")
        answer: dict[str, Any] = json.loads(line)
        if "now" in answer:
            self.now = answer["now"] - 1767225600  # seconds since simcord's epoch, 2026-01-01
        return answer

    def expect(self) -> dict[str, Any]:
        answer = self.said()
        if answer is None:
            self.popen.send_signal(signal.SIGUSR2)  # its threads' stacks to its log
            time.sleep(1)
            self.popen.send_signal(signal.SIGUSR1)  # its tasks' stacks
            time.sleep(2)
            self.errors.seek(0)
            raise AssertionError(f"worker {self.ids} did not answer:\n{self.errors.read()[-6000:]}")
        return answer

    def started(self) -> list[int]:
        """Wait for the claim and the recovery; the games it recovered."""
        assert self.expect() == {"claimed": True}
        self.recovered = self.expect()["recovered"]
        return self.recovered

    def send(self, **command: Any) -> None:
        assert self.popen.stdin is not None
        self.popen.stdin.write(json.dumps(command) + "\n")
        self.popen.stdin.flush()

    def ask(self, **command: Any) -> dict[str, Any]:
        self.send(**command)
        return self.expect()

    def quit(self) -> None:
        assert self.ask(do="quit") == {"quit": True}
        assert self.popen.wait(ANSWER_SECONDS) == 0
        self.errors.close()

    def kill(self) -> None:
        os.kill(self.popen.pid, signal.SIGKILL)
        self.popen.wait(ANSWER_SECONDS)
        self.errors.close()

    def performed(self) -> list[str]:
        return self.keys.read_text().split("\n")[:-1] if self.keys.exists() else []


class Games:
    """The games of the test: where each is (server), and the actions taken, for the replay."""

    def __init__(self) -> None:
        self.server: dict[int, int] = {}
        self.roles: dict[int, dict[int, str]] = {}
        self.steps: dict[int, list[dict[str, Any]]] = {}

    def name(self, game: int, seat: int) -> str:
        return player_names(self.server[game])[seat - 1]

    def owner(self, game: int, processes: list[Process]) -> Process:
        guild_id = dict(GUILDS)[self.server[game]]
        (process,) = [p for p in processes if shard_of(guild_id, p.count) in p.ids]
        return process

    def of(self, processes: list[Process], process: Process) -> list[int]:
        return sorted(g for g in self.server if self.owner(g, processes) is process)

    def start(self, process: Process, index: int) -> int:
        answer = process.ask(do="start", guild=index)
        game = answer["game"]
        self.server[game] = index
        self.roles[game] = {int(seat): role for seat, role in answer["roles"].items()}
        self.steps[game] = []
        return int(game)

    def seats(self, game: int, role: str) -> list[int]:
        return [seat for seat, r in sorted(self.roles[game].items()) if r == role]

    def kill(self, process: Process, game: int, target: int) -> None:
        (killer, *_) = self.seats(game, "killer")
        process.ask(do="act", guild=self.server[game], seat=killer, power="kill", target=target)
        step = {"do": "power", "by": self.name(game, killer), "power": "kill"}
        self.steps[game].append({**step, "target": self.name(game, target)})

    def vote(self, process: Process, game: int, seat: int, target: int) -> None:
        process.ask(do="vote", guild=self.server[game], seat=seat, target=target)
        self.steps[game].append(
            {"do": "vote", "by": self.name(game, seat), "target": self.name(game, target)}
        )

    def lock(self, process: Process) -> None:
        fired = process.ask(do="lock")["fired"]
        for job in fired:  # the games' deadlines (not the process's own ticks: `wakes:…`)
            if job.startswith("game:") and job.endswith(":deadline"):
                self.steps[int(job.split(":")[1])].append({"do": "lock"})

    def replayed(self, game: int) -> dict[str, Any]:
        names = player_names(self.server[game])
        return run(
            {
                "ruleset": RULESET,
                "seed": SEED,
                "players": names,
                "roles": {names[s - 1]: r for s, r in self.roles[game].items()},
                "options": {},
                "steps": self.steps[game],
            }
        ).record


def test_shard_processes_each_run_their_own_games(database: str, tmp_path: Path) -> None:
    games = Games()
    running: list[Process] = []

    def launch(count: int, ids: list[int], lane: int, at: float) -> Process:
        process = Process(tmp_path, database, count, ids, lane, at)
        running.append(process)
        return process

    try:
        # Two processes, two shards: a game on every server.
        first = [launch(2, [0], 10, 0), launch(2, [1], 11, 0)]
        assert [p.started() for p in first] == [[], []]
        for index, guild_id in GUILDS:
            games.start(first[shard_of(guild_id, 2)], index)
        victims: dict[int, int] = {}
        for game in games.server:
            victims[game] = games.seats(game, "civilian")[0]
            games.kill(games.owner(game, first), game, victims[game])
        for process in first:
            games.lock(process)
        # Day 1: some votes, then the second process is SIGKILLed mid-day and started again.
        for game in games.server:
            (killer, *_) = games.seats(game, "killer")
            voters = [s for s in games.seats(game, "civilian") if s != victims[game]][:2]
            for seat in voters:
                games.vote(games.owner(game, first), game, seat, killer)
        killed = first[1]
        killed.kill()
        again = launch(2, [1], 12, killed.now + 1)
        first[1] = again
        assert again.started() == games.of(first, again)
        for process in first:
            games.lock(process)
        for process in first:
            process.quit()

        # A new layout: three processes; each game moves to its new owner.
        at = max(p.now for p in first) + 1
        second = [launch(3, [shard], 20 + shard, at) for shard in range(3)]
        for process in second:
            assert process.started() == games.of(second, process)
        assert sorted(g for p in second for g in p.recovered or []) == sorted(games.server)
        for game in games.server:
            alive = [s for s in games.seats(game, "civilian") if s != victims[game]]
            games.kill(games.owner(game, second), game, alive[-1])

        # Overlapping shards: the newcomer waits while their owners run, performing nothing.
        late = launch(3, [0, 1], 30, max(p.now for p in second) + 1)
        assert late.said(3) is None
        assert late.performed() == []
        for process in second[:2]:
            process.quit()
        assert late.started() == sorted(games.of(second, second[0]) + games.of(second, second[1]))
        final = [late, second[2]]
        for process in final:
            games.lock(process)

        # Every game as the replay of its actions has it.
        for process in final:
            mine = games.of(final, process)
            states = process.ask(do="state", games=mine)["games"]
            for game in mine:
                stored = states[str(game)]
                assert stored["status"] == "active" and stored["phase"] == "day 2"
                compare(stored["record"], games.replayed(game))
        for process in final:
            process.quit()
    finally:
        for process in running:
            if process.popen.poll() is None:
                process.kill()

    # No effect twice across the processes. The one allowance: an effect the killed process
    # performed but whose done mark the SIGKILL lost is performed again by its successor, under
    # the same key (a key of a game of theirs, seen once in each of the two).
    performed = {p: {tuple(line.split()) for line in p.performed()} for p in running}
    keys = Counter(key for lines in performed.values() for key, _ in lines)
    assert keys, "no effect was performed"
    twice = {key for key, n in keys.items() if n > 1}
    resent = performed[killed] & performed[again]
    assert twice <= {key for key, _ in resent} and all(keys[key] == 2 for key in twice)
    assert {int(game) for _, game in resent} <= set(games.of(first, again))
    # One lock per window: each window opened is resolved once, and as often as the test locked.
    windows = asyncio.run(window_events(database))
    for game, steps in games.steps.items():
        assert windows[game].count("resolved") == sum(step["do"] == "lock" for step in steps)
        assert "resolved resolved" not in " ".join(windows[game]), windows[game]


def test_sigkill_inside_an_effect(database: str, tmp_path: Path) -> None:
    """SIGKILL after an effect's platform call and before its done mark: the restarted process
    performs it again under the same key, finds its post already there (Discord outlives the
    process: the worker puts the killed world's posts back) and posts nothing twice; the game
    then plays to its end as the replay of its actions."""
    games = Games()
    world = tmp_path / "world.json"
    running: list[Process] = []
    try:
        first = Process(tmp_path, database, 2, [0], 40, 0)
        running.append(first)
        assert first.started() == []
        game = games.start(first, 0)
        police = games.seats(game, "police")
        games.kill(first, game, police[0])
        assert first.ask(do="pause", kind="Announce", world=str(world)) == {"armed": "Announce"}
        first.send(do="lock")
        paused = first.expect()  # inside the night's announcement: posted, not marked done
        games.steps[game].append({"do": "lock"})  # committed before its effects are performed
        assert paused["game"] == game and paused["sent"], paused
        first.kill()

        again = Process(tmp_path, database, 2, [0], 41, first.now + 1, world=world)
        running.append(again)
        assert again.started() == [game]
        assert paused["paused"] in {line.split()[0] for line in again.performed()}  # again
        posts = again.ask(do="posts", guild=0)["posts"]
        for text in paused["sent"]:  # once, and that one is the killed process's post
            assert [restored for said, restored in posts if said == text] == [True], text

        # Day 1 lynches the other police: the killers win, as the replay has it.
        for seat in games.roles[game]:
            if seat not in police:
                games.vote(again, game, seat, police[1])
        games.lock(again)
        stored = again.ask(do="state", games=[game])["games"][str(game)]
        assert stored["status"] == "finished"
        compare_with_replay(stored["record"], games.replayed(game))
        assert stored["record"]["result"]["winner"] == "killers"
        again.quit()
    finally:
        for process in running:
            if process.popen.poll() is None:
                process.kill()
    assert int(paused["paused"].removeprefix("outbox:")) not in asyncio.run(undone(database))


def compare(record: dict[str, Any], replayed: dict[str, Any]) -> None:
    """The stored record equals the replay's (the bot's `record_of` against `faguan replay`),
    phase by phase (a game still in play has no result yet)."""
    assert len(record["phases"]) == len(replayed["phases"])
    for mine, theirs in zip(record["phases"], replayed["phases"], strict=True):
        for key in COMPARED:
            assert mine.get(key) == theirs.get(key), (key, mine, theirs)
    for key in ("result", "roles", "lots"):
        assert record.get(key) == replayed.get(key), key


async def undone(url: str) -> list[int]:
    """The outbox's effects not marked done."""
    engine = create_async_engine(url)
    try:
        async with engine.connect() as connection:
            rows = await connection.execute(text("SELECT id FROM outbox WHERE done_at IS NULL"))
            return [row for (row,) in rows]
    finally:
        await engine.dispose()


async def window_events(url: str) -> dict[int, list[str]]:
    """Per game, its stored windows' openings and resolutions, in order ("opened", "resolved")."""
    kinds = {"WindowOpened": "opened", "NightResolved": "resolved", "DayResolved": "resolved"}
    engine = create_async_engine(url)
    try:
        async with engine.connect() as connection:
            rows = await connection.execute(
                text("SELECT game_id, type FROM events ORDER BY game_id, seq")
            )
            found: dict[int, list[str]] = {}
            for game, kind in rows:
                if kind in kinds:
                    found.setdefault(game, []).append(kinds[kind])
            return found
    finally:
        await engine.dispose()
