"""docs/deploy.md followed as written (#17): this test reads the page itself — its config files,
its systemd unit, its commands, the log lines and messages it quotes, its metrics table — and
runs what it describes as real OS processes, on the tests' throwaway PostgreSQL.

What it rewrites, because it must differ on a test machine: `/etc/faguan` and `/opt/faguan` to a
temporary folder, the database URL to a scratch database, the token (a fake one in the unit's
token file), the metrics ports to free ones; and `faguan` itself to `deployfaguan.py`, which is
`bot.cli.main` with a simcord world in place of Discord's gateway. The systemd unit's
`ExecStart` runs with `%i` expanded as systemd does for `faguan@0` and `faguan@1`, with the
unit's `EnvironmentFile`. `systemctl stop` is a SIGTERM.

What it checks is what the page promises: the start log lines, the games each process owns,
the message of a process whose shards are taken (it waits, and starts when they are free), the
metrics at the configured port, and the resharding message of a process started with another
`shard_count` (it waits until every process of the old layout has stopped, then owns the games).
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from scratchdb import scratch_database  # noqa: F401 (the `database` fixture)

from bench.stores import noop_performer, player_specs, schedule
from bot.runtime.service import GameService
from bot.runtime.timing import SystemClock
from bot.store import Repository, open_database

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "deploy.md"
FAGUAN = [sys.executable, str(Path(__file__).with_name("deployfaguan.py"))]
"""The `faguan` command of the page (`/opt/faguan/.venv/bin/faguan`)."""
SHARDS = 4
SERVERS = [((k << 22) | 7) for k in (100, 104, 101, 102, 103, 107)]
"""One game on each server: shard (server >> 22) % 4 is 0, 0, 1, 2, 3, 3."""
WAIT_SECONDS = 60.0
"""How long a process may take to say what it must (an answer is normally a second away)."""


class Doc:
    """What docs/deploy.md says, taken from its text."""

    def __init__(self, text: str) -> None:
        blocks = re.findall(r"```(\w*)\n(.*?)```", text, re.S)
        tomls = [body for lang, body in blocks if lang == "toml"]
        self.shard0 = next(body for body in tomls if "[discord]" in body)
        self.metrics = next(body for body in tomls if "[metrics]" in body)
        self.unit = next(body for lang, body in blocks if lang == "ini")
        self.shell = next(body for lang, body in blocks if lang == "sh")
        self.log = next(body for lang, body in blocks if "running shards" in body)
        (self.shard1_ids,) = re.findall(r"shard-1\.toml` the same with `(shard_ids = [^`]*)`", text)
        (waiting,) = re.findall(r"logging once `(waiting to start: [^`]*?)…`", text)
        (layout,) = re.findall(r"\(`(processes with discord\.shard_count = [^`]*?)…`\)", text)
        self.waiting, self.layout = (" ".join(quote.split()) for quote in (waiting, layout))
        """The messages the page quotes (a quote may wrap across the page's lines)."""
        self.metric_names = re.findall(r"^\| `(faguan_\w+)", text, re.M)

    def line(self, start: str) -> str:
        """The unit's `Key=value` value."""
        (value,) = re.findall(rf"^{start}=(.*)$", self.unit, re.M)
        return value.strip()


class Machine:
    """The page's paths and commands on this machine."""

    def __init__(self, root: Path, doc: Doc, url: str) -> None:
        self.root, self.doc, self.url = root, doc, url
        (root / "etc" / "faguan").mkdir(parents=True)
        self.ports = [free_port(), free_port()]
        self.processes: list[tuple[subprocess.Popen[bytes], Path]] = []

    def path(self, path: str) -> str:
        return path.replace("/etc/faguan/", f"{self.root}/etc/faguan/")

    def command(self, line: str) -> list[str]:
        """A command of the page: `sudo -u faguan` dropped, its `faguan` this test's."""
        words = shlex.split(line)
        if words[:3] == ["sudo", "-u", "faguan"]:
            words = words[3:]
        assert words[0] == "/opt/faguan/.venv/bin/faguan", line
        return FAGUAN + [self.path(word) for word in words[1:]]

    def write_config(self, name: str, text: str) -> None:
        text, found = re.subn(r'^url = ".*"$', f'url = "{self.url}"', text, flags=re.M)
        assert found == 1
        (self.root / "etc" / "faguan" / name).write_text(text, "utf-8")

    def environment(self) -> dict[str, str]:
        """The unit's EnvironmentFile: the page says it holds `DISCORD_TOKEN=...`."""
        token_file = Path(self.path(self.doc.line("EnvironmentFile")))
        if not token_file.exists():
            token_file.write_text("DISCORD_TOKEN=MTIz.fake.token\n")
        env = {k: v for k, v in os.environ.items() if k != "DISCORD_TOKEN"}
        for line in token_file.read_text().splitlines():
            key, _, value = line.partition("=")
            env[key] = value
        return env

    def start(self, instance: str) -> Path:
        """`systemctl start faguan@<instance>`: the unit's ExecStart, %i expanded; its log."""
        return self.spawn(self.command(self.doc.line("ExecStart").replace("%i", instance)))

    def start_with(self, config: str) -> Path:
        """The unit's ExecStart with another of the config files; its log."""
        line = self.doc.line("ExecStart")
        assert "/etc/faguan/shard-%i.toml" in line
        return self.spawn(self.command(line.replace("shard-%i.toml", config)))

    def spawn(self, argv: list[str]) -> Path:
        log = self.root / f"process-{len(self.processes)}.log"
        with log.open("wb") as out:
            popen = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, cwd=self.root,
                                     env=self.environment())  # fmt: skip
        self.processes.append((popen, log))
        return log

    def stop(self, log: Path) -> None:
        """`systemctl stop`: SIGTERM, and wait for the end."""
        (popen,) = [p for p, path in self.processes if path == log]
        popen.send_signal(signal.SIGTERM)
        popen.wait(WAIT_SECONDS)

    def stop_all(self) -> None:
        for popen, _ in self.processes:
            if popen.poll() is None:
                popen.send_signal(signal.SIGTERM)
                popen.wait(WAIT_SECONDS)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_for(log: Path, text: str) -> str:
    """The whole log once it holds `text` (it fails after WAIT_SECONDS, showing the log)."""
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        seen = log.read_text("utf-8", errors="replace")
        if text in seen:
            return seen
        time.sleep(0.1)
    raise AssertionError(f"{log.name} never said {text!r}:\n{log.read_text()[-4000:]}")


def start_lines(doc: Doc, shards: str, count: int, owned: int) -> list[str]:
    """The page's two start lines, for a process of `shards` out of `count` owning `owned`."""
    lines = [line.strip() for line in doc.log.strip().splitlines()]
    assert len(lines) == 2 and "[0, 1] of 4" in lines[0], lines
    (shown,) = re.findall(r"resumed (\d+) active games", lines[1])
    lines[1] = lines[1].replace(f"resumed {shown} ", f"resumed {owned} ")
    return [line.replace("[0, 1] of 4", f"{shards} of {count}") for line in lines]


def owned(shards: list[int], count: int) -> int:
    return sum((server >> 22) % count in shards for server in SERVERS)


def metrics(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        body: str = answer.read().decode()
        return body


async def seed_games(url: str) -> None:
    """A started game on each of SERVERS, through the service as `/game start` makes one."""
    db = open_database(url)
    repo = Repository(db.sessions)
    service = GameService(repo, SystemClock())
    service.set_performer(noop_performer)
    try:
        for n, server in enumerate(SERVERS):
            await service.create_game(
                server_id=server,
                ruleset="v2",
                players=player_specs(n, 8),
                seed=f"deploy-{n}",
                options={"tie": "lots", "language": "zh-CN"},
                channels={"game": str(10_000 + n), "vote": str(20_000 + n)},
                schedule=schedule(),
            )
        await repo.flush()
    finally:
        await db.dispose()


def test_deployment_doc_as_written(database: str, tmp_path: Path) -> None:
    doc = Doc(DOC.read_text("utf-8"))
    machine = Machine(tmp_path, doc, database)
    # The two config files, each with its metrics port (the page's 9108 and 9109, rewritten).
    (port0,) = re.findall(r"^port = (\d+)", doc.metrics, re.M)
    assert re.search(rf"\b{int(port0) + 1} in shard-1\.toml", doc.metrics)
    shard1 = re.sub(r"^shard_ids = .*$", doc.shard1_ids, doc.shard0, flags=re.M)
    for name, text, port in (("shard-0.toml", doc.shard0, 0), ("shard-1.toml", shard1, 1)):
        block = doc.metrics.replace(f"port = {port0}", f"port = {machine.ports[port]}")
        machine.write_config(name, f"{text}\n{block}")
    assert f"shard_count = {SHARDS}" in doc.shard0

    # "Start them": the database first, then the units.
    upgrade, enable = [line for line in doc.shell.strip().splitlines() if line.strip()]
    assert subprocess.run(machine.command(upgrade), env=machine.environment()).returncode == 0
    asyncio.run(seed_games(database))
    instances = re.findall(r"faguan@(\d+)", enable)
    assert instances == ["0", "1"] and "systemctl enable --now" in enable
    try:
        logs = [machine.start(instance) for instance in instances]
        for log, shards in zip(logs, ([0, 1], [2, 3]), strict=True):
            for line in start_lines(doc, str(shards), SHARDS, owned(shards, SHARDS)):
                wait_for(log, line)

        # Each process's figures at its own port, under the names of the page's table.
        assert len(doc.metric_names) == 8
        for port, shards in zip(machine.ports, ([0, 1], [2, 3]), strict=True):
            body = metrics(port)
            for name in doc.metric_names:
                assert f"# TYPE {name} " in body, name
            assert f"faguan_games_owned {owned(shards, SHARDS)}.0" in body

        # A process started with overlapping shard_ids waits, with the page's message, and
        # starts when the process holding the shard ends (the old process of a restart).
        (shard, count) = map(int, re.findall(r"shard (\d+) of (\d+)", doc.waiting)[0])
        assert count == SHARDS
        overlap = re.sub(r"^shard_ids = .*$", f"shard_ids = [{shard}]", doc.shard0, flags=re.M)
        machine.write_config("overlap.toml", overlap)
        late = machine.start_with("overlap.toml")
        seen = wait_for(late, doc.waiting)
        assert "running shards" not in seen
        machine.stop(logs[0])
        for line in start_lines(doc, f"[{shard}]", SHARDS, owned([shard], SHARDS)):
            seen = wait_for(late, line)
        assert seen.count("waiting to start") == 1  # "logging once"

        # Resharding: a process with another shard_count waits while any of the old layout
        # runs, with the page's message, then owns the games of its shards in the new layout.
        layout = re.sub(r"= \d+ still", f"= {SHARDS} still", doc.layout)
        resharded = re.sub(r"^shard_count = .*$", "shard_count = 2", doc.shard0, flags=re.M)
        machine.write_config("reshard.toml", resharded)
        new = machine.start_with("reshard.toml")
        wait_for(new, layout)
        machine.stop(late)
        assert "running shards" not in new.read_text()  # faguan@1 still runs
        machine.stop(logs[1])
        for line in start_lines(doc, "[0, 1]", 2, len(SERVERS)):
            wait_for(new, line)
    finally:
        machine.stop_all()
