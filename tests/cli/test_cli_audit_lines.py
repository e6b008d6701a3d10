"""What an operator meets around `faguan run`, `faguan db` and `faguan bench`, where an audit
found something else than the README promises (each test failed before its fix):

- `faguan db upgrade` on a SQLite file it cannot open printed, now and then (about one run in
  ten), a thread's traceback ("Event loop is closed") after its one-line message.
- Discord closing the gateway with a code discord.py does not reconnect after — sharding
  required (4011), an invalid shard (4010), a gateway version or intents refused (4012, 4013),
  the token refused at IDENTIFY (4004) — ended `faguan run` in a traceback.
- A configuration mistake with no config file was headed "defaults", which names nothing an
  operator can look at: the problems are the environment's.
- The files the bot and `faguan db restore` leave beside a SQLite database showed in
  `git status` of a clone the bot ran in.
- `faguan bench --help` gave no defaults for its sizes, and the hint for its Discord section's
  extra left out the README's `-c constraints.txt`.
- tests/games/README.md named one document twice in a row.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from test_cli_errors import TOKEN, config, faguan, one_line, upgraded

from bot.cli import build_parser, main
from bot.operator_errors import Exit
from bot.store.backup import partial_beside

ROOT = Path(__file__).resolve().parents[2]

# ------------------------------------------------------- a SQLite file that cannot be opened

LATE_WORKER = """
import atexit, threading, time
import aiosqlite.core

_work = aiosqlite.core._connection_worker_thread
_workers = []

def _late_worker(tx):
    # aiosqlite's thread as a busy machine runs it: it takes each job after the first (the
    # open) a moment late, the main thread having run on meanwhile
    class Late:
        taken = 0
        def get(self):
            job = tx.get()
            Late.taken += 1
            if Late.taken > 1:
                time.sleep(0.3)
            return job
    _workers.append(threading.current_thread())
    _work(Late())

aiosqlite.core._connection_worker_thread = _late_worker
# The thread is a daemon: a process that exits first kills it before it can say anything. Here
# it gets its turn before the exit, as it does when the failure shows.
atexit.register(lambda: [worker.join(10) for worker in _workers])
"""


@pytest.mark.parametrize("command", ["db", "run"])
def test_a_sqlite_file_that_cannot_be_opened_is_one_line_and_no_thread_traceback(
    tmp_path: Path, command: str
) -> None:
    """aiosqlite raised the failure to open at once and only queued its thread's stop; the thread
    then posted the stop's result to the event loop, which `asyncio.run` had often closed by
    then: "RuntimeError: Event loop is closed" in a thread traceback after the one line. The
    thread is made late here (LATE_WORKER), so the race goes the wrong way on every run: before
    the fix this failed 10 runs out of 10 (the unpatched race: about 1 in 10)."""
    if command == "db":  # its folder does not exist
        url = f"sqlite+aiosqlite:///{tmp_path / 'missing' / 'f.db'}"
        args: tuple[str, ...] = ("db", "upgrade", "--database-url", url)
    else:  # a folder where the file should be (the claim's lock file beside it can be made)
        (tmp_path / "f.db").mkdir()
        args = ("run", "--config", config(tmp_path, f"sqlite+aiosqlite:///{tmp_path / 'f.db'}"))
    result = faguan(tmp_path, *args, patch=LATE_WORKER)
    line = one_line(result, Exit.DATABASE_UNREACHABLE)
    assert "Event loop is closed" not in result.stderr
    assert line.startswith(f"faguan {command}") and "cannot open the SQLite file" in line
    assert "check that its directory exists" in line


# --------------------------------------------------------------- the gateway's fatal close codes

GATEWAY_CLOSES = """
import types
import discord
from discord.gateway import DiscordWebSocket

async def login(self, token):  # as if Discord accepted the token: the set-up, no request
    await self._async_setup_hook()

class Closed:
    # a gateway connection Discord closes after IDENTIFY with CODE, as it does
    open = False
    sequence = session_id = gateway = None

    def __init__(self, shard_id):
        self.shard_id = shard_id

    async def poll_event(self):
        socket = types.SimpleNamespace(close_code=CODE)
        raise discord.ConnectionClosed(socket, shard_id=self.shard_id)

    async def close(self, code=1000):
        pass

async def from_client(cls, client, *, shard_id=None, **kwargs):
    return Closed(shard_id)

discord.Client.login = login
DiscordWebSocket.from_client = classmethod(from_client)
"""


def closing_with(code: int) -> str:
    return f"CODE = {code}\n{GATEWAY_CLOSES}"


@pytest.mark.parametrize(
    ("code", "status", "said"),
    [
        (4011, Exit.SHARDS_REFUSED, "Discord requires more shards"),
        (4010, Exit.SHARDS_REFUSED, "Discord refused a shard of this process as invalid"),
        (4012, Exit.OUTDATED, "Discord refused the gateway API version this faguan sends"),
        (4013, Exit.OUTDATED, "Discord refused the intents value this faguan sends"),
        (4004, Exit.TOKEN_REJECTED, "Discord rejected the bot token"),
        (4014, Exit.INTENTS_DISABLED, "Discord refused the privileged intents"),
    ],
)
def test_run_gateway_closed_for_good_is_one_line(
    tmp_path: Path, code: int, status: Exit, said: str
) -> None:
    path = config(tmp_path, upgraded(tmp_path / "f.db"))
    result = faguan(tmp_path, "run", "--config", path, patch=closing_with(code))
    line = one_line(result, status)
    assert line.startswith(f"faguan run: {said}"), line
    if code == 4011:  # the setting to write, in the file to write it in
        assert f"Set shard_count under [discord] in {path}" in line
        assert "docs/deploy.md" in line
    if code in (4012, 4013):
        assert "Upgrade faguan" in line
    assert TOKEN not in result.stderr + result.stdout


def test_run_sharded_with_a_shard_discord_refuses(tmp_path: Path) -> None:
    """The sharded bot (AutoShardedBot) meets the close code on its shard's own connection."""
    url = upgraded(tmp_path / "f.db")
    path = tmp_path / "config.toml"
    path.write_text(f'[discord]\nshard_count = 2\n[database]\nurl = "{url}"\n', "utf-8")
    result = faguan(tmp_path, "run", "--config", str(path), patch=closing_with(4010))
    line = one_line(result, Exit.SHARDS_REFUSED)
    assert re.match(r"faguan run: Discord refused shard [01] as invalid \(close code 4010\)", line)
    assert f"check shard_count and shard_ids under [discord] in {path}" in line


def test_run_help_names_the_new_statuses(tmp_path: Path) -> None:
    help_text = " ".join(faguan(tmp_path, "run", "--help").stdout.split())
    assert "10 Discord requires sharding or refused the shard settings" in help_text
    assert "11 Discord refused the gateway version or intents" in help_text


# --------------------------------------------------------------- no config file: the heading


# `faguan db ...` read no token, so no mistake of theirs comes from the environment alone
# (tests/cli/test_cli_env.py): only `faguan run` is left here.
@pytest.mark.parametrize("command", [["run"]])
def test_a_config_mistake_without_a_config_file_is_headed_by_the_environment(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: list[str],
) -> None:
    monkeypatch.chdir(tmp_path)  # no config.toml here
    monkeypatch.setenv("DISCORD_TOKEN", f"Bot {TOKEN}")
    status: int | str | None
    try:
        status = main(command)
    except SystemExit as exited:  # `db upgrade` reads its settings only once it needs a URL
        status = exited.code
    assert status == Exit.CONFIG
    err = capsys.readouterr().err
    heading = f"faguan {' '.join(command)}: the environment (no config file): 1 problem:\n"
    assert err.startswith(heading), err
    assert "  - DISCORD_TOKEN (environment variable): the token starts with " in err
    assert TOKEN not in err


def test_no_token_without_a_config_file_says_where_to_put_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DISCORD_TOKEN", raising=False)
    assert main(["run"]) == Exit.CONFIG
    err = capsys.readouterr().err
    assert err.startswith("faguan run: the environment (no config file): 1 problem:\n"), err
    assert "in your config file (copy config.example.toml to config.toml)" in err


# --------------------------------------------------------------- files beside a SQLite database


def test_the_files_left_beside_a_sqlite_database_are_ignored_by_git(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The files are made by the commands themselves, so their names are the ones the code writes:
    the lock file a bot (and `db restore`) holds, the database a restore replaced (and its WAL
    files), and the scratch files a backup or restore killed midway leaves."""
    database, copy = tmp_path / "f.db", tmp_path / "copy.db"
    url = f"sqlite+aiosqlite:///{database}"
    assert main(["db", "upgrade", "--database-url", url]) == 0
    assert main(["db", "backup", str(copy), "--database-url", url]) == 0
    assert main(["db", "restore", str(copy), "--database-url", url]) == 0
    capsys.readouterr()
    left = {path.name for path in tmp_path.iterdir()} - {database.name, copy.name}
    for what in ("backup", "restoring"):
        with partial_beside(database, what) as partial:
            left |= {partial.name, f"{partial.name}-wal", f"{partial.name}-journal"}
    assert f"{database.name}.faguan-lock" in left
    kept = [name for name in left if ".before-restore-" in name]
    stamped = re.compile(r"f\.db\.before-restore-\d{8}T\d{6}Z(-wal|-shm)?")
    assert kept and all(stamped.fullmatch(name) for name in kept), kept
    left |= {f"{kept[0]}-2", f"{kept[0]}-wal", f"{kept[0]}-shm"}  # a second restore that second
    beside = sorted(left)
    ignored = subprocess.run(
        ["git", "-C", str(ROOT), "check-ignore", "--no-index", *beside],
        capture_output=True,
        text=True,
        check=False,
    )
    assert ignored.returncode in (0, 1), ignored.stderr  # 1: none is ignored
    assert sorted(ignored.stdout.split()) == beside
    # and nothing else a clone holds: a file of the repository itself is not ignored
    others = ["README.md", "config.example.toml", "docs/deploy.md", "bot/store/backup.py"]
    kept_in = subprocess.run(
        ["git", "-C", str(ROOT), "check-ignore", "--no-index", *others],
        capture_output=True,
        text=True,
        check=False,
    )
    assert kept_in.returncode == 1 and kept_in.stdout == "", kept_in.stdout


# --------------------------------------------------------------- faguan bench --help


def test_bench_help_gives_each_default(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # argparse's width: one line an option
    with pytest.raises(SystemExit) as done:
        main(["bench", "--help"])
    assert done.value.code == 0
    # each option's entry: its line and the lines of its help below it
    entries = re.split(r"\n(?=  -)", capsys.readouterr().out)
    defaults = {
        "--" + dest.replace("_", "-"): value
        for dest, value in vars(build_parser().parse_args(["bench"])).items()
        if dest not in ("command", "func") and value not in (None, False)
    }
    assert {"--posts", "--timers", "--raw-rows", "--day-posts"} <= defaults.keys()
    said = {"--only": "all", "--backends": "both"}  # in words
    for option, value in defaults.items():
        entry = " ".join(next(e for e in entries if e.startswith(f"  {option} ")).split())
        shown = said.get(option, str(value))
        assert re.search(rf"\bdefault:? {re.escape(shown)}(?![\w.])", entry), entry


def test_bench_names_the_constraints_with_its_extra(tmp_path: Path) -> None:
    """The README installs with `-c constraints.txt` (the versions CI tested); so does the hint."""
    from bench.cli import EXTRA

    assert EXTRA == "pip install -c constraints.txt -e '.[bench]'"
    readme = (ROOT / "README.md").read_text("utf-8")
    assert f"`{EXTRA}`" in readme


# --------------------------------------------------------------- the documents' own text


def test_no_document_names_a_file_twice_in_a_row() -> None:
    repeated = re.compile(r"(?<![\w/.-])([\w./-]+\.(?:md|py|toml))(?:,| and) \1(?![\w/.-])")
    pages = [ROOT / "README.md", *(ROOT / "docs").rglob("*.md"), *(ROOT / "tests").rglob("*.md")]
    found = [
        f"{page.relative_to(ROOT)}: {match.group(0)}"
        for page in pages
        for match in repeated.finditer(page.read_text("utf-8"))
    ]
    assert found == []
