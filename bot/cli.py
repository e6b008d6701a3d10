"""The `faguan` command: run the bot, replay and verify games, list rulesets."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import json
import os
import sys
import traceback
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy.engine import URL

from bench.cli import add_arguments as add_bench_arguments
from bot.config import TOKEN_ENV, ConfigError, Settings, load
from bot.operator_errors import (
    Exit,
    OperatorError,
    check_database_url,
    configure_logging,
    database_error,
)
from bot.records.forum_text import forum_text
from bot.records.i18n import LOCALES
from bot.records.replay import ReplayFileError, replay_file, setup_refusal
from bot.runtime.termination import until_terminated
from bot.store import pg_backup
from bot.store.backup import (
    BackupRefused,
    Copy,
    Refusal,
    backup,
    database_file,
    os_reason,
    restore,
)
from bot.store.claims import Claim, Claimed, ClaimLost, claim, claim_patiently
from bot.store.db import resolve_url
from bot.store.migrate import main_db_upgrade, upgrade
from engine.rulesets import RULESETS
from engine.verify import Finding, verify_record

if TYPE_CHECKING:
    from bot.discord.client import FaguanBot

Connect = Callable[["FaguanBot", str], Awaitable[None]]
"""How `faguan run` connects its bot, with the token, and serves until the end."""


async def connect_to_discord(bot: FaguanBot, token: str) -> None:
    """Log in to Discord's gateway and serve (what `faguan run` does)."""
    await bot.start(token)


def _replay(args: argparse.Namespace) -> int:
    """Exit status: 0 the record is printed, 2 the file cannot be played (the message says
    why), 1 the record cannot be written (standard output closed or full)."""
    try:
        # the JSON record's reasons are English whatever --lang says (the public contract)
        replay = replay_file(args.game, locale="en" if args.json else args.lang)
    except ReplayFileError as exc:
        print(f"faguan replay: {exc}", file=sys.stderr)
        return 2
    if args.json:
        text = json.dumps(replay.record, ensure_ascii=False, indent=2)
    else:
        text = forum_text(replay.record, args.lang)
    try:
        _write_utf8(text + "\n")
    except OSError as exc:
        if not isinstance(exc, BrokenPipeError):  # the reader gone (`| head`) is no news
            print(f"faguan replay: cannot write the record: {exc.strerror}", file=sys.stderr)
        with contextlib.suppress(OSError):  # nor is the flush at exit to report it again
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return 0


def _write_utf8(text: str) -> None:
    """Write to standard output in UTF-8, whatever the locale's encoding (an ASCII or GBK
    terminal, a Windows pipe): the record is the same bytes everywhere."""
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:  # a text-only stream (a test's StringIO)
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    sys.stdout.flush()
    data = memoryview(text.encode("utf-8"))
    while data:  # unbuffered (`PYTHONUNBUFFERED`, `-u`), it is the raw file: it may write part
        data = data[buffer.write(data) or 0 :]
    buffer.flush()


def _verify(args: argparse.Namespace) -> int:
    """Exit status: 0 everything matches; 1 something does not (the record was altered); 2 the
    file cannot be read, or is not a complete game record faguan can recompute (one line on
    standard error says why): a key left out or a ruleset unknown is no sign of alteration."""
    try:
        text = Path(args.record).read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = (exc.strerror or str(exc)) if isinstance(exc, OSError) else "not UTF-8 text"
        print(f"faguan verify: cannot read {args.record}: {why}", file=sys.stderr)
        return 2
    try:
        record = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        print(
            f"faguan verify: {args.record} is not a JSON game record (`faguan replay --json` "
            "and /game record write one); a game file (TOML) is played with `faguan replay`",
            file=sys.stderr,
        )
        return 2
    if not isinstance(record, dict):
        print(f"faguan verify: {args.record} is not a game record (a JSON object)", file=sys.stderr)
        return 2
    findings = verify_record(record)
    unchecked = next((f for f in findings if not f.checked), None)
    if unchecked is not None:
        print(f"faguan verify: {args.record}: {_unchecked(unchecked)}", file=sys.stderr)
        return 2
    for finding in findings:
        mark = "OK      " if finding.ok else "MISMATCH"
        line = f"{mark} {finding.what}"
        if not finding.ok:
            line += f": {finding.detail}"
        print(line)
    bad = sum(not f.ok for f in findings)
    print(
        f"{len(findings) - bad} of {len(findings)} match."
        + (" The record was altered." if bad else "")
    )
    return 1 if bad else 0


def _unchecked(finding: Finding) -> str:
    """Why an item could not be checked: an engine refusal in words, as `faguan replay` says
    it, not its message key (the record's own values cut short: a 10 MB name is not echoed)."""
    if not finding.key:  # a key left out (the tests' `.expected.json` keep only some)
        return f"{finding.detail} (`faguan replay --json` and /game record write whole records)"
    return f"cannot recompute the {finding.what}: {setup_refusal(finding.key, finding.params)}"


def _rulesets(args: argparse.Namespace) -> int:
    width = max(len(r.id) for r in RULESETS.values())
    for rules in RULESETS.values():
        # CJK characters take two columns: pad by display width, not by length
        name_width = sum(2 if ord(ch) > 0x2E7F else 1 for ch in rules.name_zh)
        name = rules.name_zh + " " * max(0, 18 - name_width)
        print(f"{rules.id:<{width}}  {name}{rules.min_players}–{rules.max_players} players")
    return 0


def _settings(path: str, explicit: bool, *, running: bool = False) -> Settings:
    """The configuration: the file if there is one (it must exist when named), else defaults.
    `running`: with what only `faguan run` needs (`bot.config.load`), the token among it. The
    other commands (`faguan db ...`) never use the token: the environment's (DISCORD_TOKEN, which
    a unit's EnvironmentFile gives them as it gives `faguan run`) is not read for them, so a
    malformed one is `faguan run`'s to refuse, not theirs. The file is checked whole either way."""
    env = None if running else {k: v for k, v in os.environ.items() if k != TOKEN_ENV}
    if Path(path).exists():
        return load(path, env=env, running=running)
    if explicit:
        raise ConfigError(
            [f"{path}: no such file; copy config.example.toml to {path}"], source=path
        )
    return load(None, env=env, running=running)


def _run(args: argparse.Namespace, connect: Connect = connect_to_discord) -> int:
    try:
        settings = _settings(args.config, args.config_given, running=True)
        token = settings.require_token()
    except ConfigError as exc:
        print(f"faguan run: {exc}", file=sys.stderr)
        return Exit.CONFIG
    configure_logging(verbose=args.verbose)
    from bot.discord.startup import discord_error, silence_voice_warnings  # only `run` needs it

    silence_voice_warnings()
    url = resolve_url(settings.database.url)
    try:
        check_database_url(url, given_as=f"database.url in {settings.source}")
    except OperatorError as refused:
        return _fail("faguan run", refused, refused, verbose=args.verbose)
    from bot.discord.client import create_bot

    async def serve() -> None:
        # The claim first (one process per SQLite file, per shard), then the database: their
        # mistakes are found before Discord is contacted, and told apart from Discord's (both
        # can be an OSError).
        shards = settings.discord
        try:
            held = await claim_patiently(url, shards.shard_count, shards.shard_ids)
        except Claimed:
            raise
        except Exception as exc:
            raise _DatabaseFailed from exc
        try:
            try:
                await upgrade(url)
            except Exception as exc:
                raise _DatabaseFailed from exc
            async with create_bot(settings) as bot:  # SIGTERM, like Ctrl-C, closes it cleanly
                await until_terminated(while_claimed(held, connect(bot, token)))
        finally:
            await held.release()

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        return Exit.OK
    except ClaimLost as lost:  # its PostgreSQL session ended: a supervisor starts it again
        print(f"faguan run: {lost}", file=sys.stderr)
        return Exit.DATABASE_UNREACHABLE
    except ConfigError as exc:  # found only once the bot starts (the metrics port in use)
        print(f"faguan run: {exc}", file=sys.stderr)
        return Exit.CONFIG
    except _DatabaseFailed as failed:
        cause = failed.__cause__
        assert isinstance(cause, Exception)
        found = _sqlite_unopenable(cause, url) or database_error(cause, url)
        return _fail("faguan run", found, cause, verbose=args.verbose)
    except Exception as exc:
        failure = discord_error(exc, settings.source) or database_error(exc, url)
        return _fail("faguan run", failure, exc, verbose=args.verbose)
    return Exit.OK


async def while_claimed(held: Claim, work: Awaitable[None]) -> None:
    """Run `work` while `held` lasts. If the claim is lost (its PostgreSQL session ended, and
    another process may run these shards now), `work` is cancelled as SIGTERM cancels it — the
    caller's `async with` closes the bot: no effect starts after — and `ClaimLost` is raised."""
    task = asyncio.ensure_future(work)
    if held.lost.is_set():
        task.cancel()  # lost before the bot started: it never starts
    watch = asyncio.ensure_future(held.lost.wait())
    try:
        await asyncio.wait({task, watch}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watch.cancel()
        if not task.done():  # the claim lost, or this cancelled (SIGTERM, Ctrl-C): stop the work
            task.cancel()
            await asyncio.wait({task})
    if held.lost.is_set():
        with contextlib.suppress(asyncio.CancelledError, Exception):
            task.result()  # the work's end, whatever it was, is not the story: the lost claim is
        raise held.lost_error()
    task.result()


class _DatabaseFailed(Exception):
    """Opening or migrating the database failed (the cause says how), before Discord."""


def _sqlite_unopenable(exc: Exception, url: URL) -> OperatorError | None:
    """The claim's lock file beside a SQLite database could not be made (its folder missing or
    not writable): said as `faguan db upgrade` says a file it cannot open, not as a server that
    does not answer."""
    if url.get_backend_name() != "sqlite" or not isinstance(exc, OSError):
        return None
    return OperatorError(
        Exit.DATABASE_UNREACHABLE,
        f"cannot open the SQLite file {url.database} ({os_reason(exc)}): check that its "
        "directory exists and is writable.",
    )


def _fail(command: str, failure: OperatorError | None, exc: Exception, *, verbose: bool) -> int:
    """One line for a failure the operator can fix (and its traceback if `verbose`); a bug
    is raised again, traceback and all."""
    if failure is None:
        raise exc
    if verbose:
        traceback.print_exception(exc)
    print(f"{command}: {failure.line}", file=sys.stderr)
    return failure.code


def _db(args: argparse.Namespace) -> int:
    def configured() -> str | None:
        try:
            return _settings(args.config, args.config_given).database.url
        except ConfigError as exc:
            print(f"faguan db upgrade: {exc}", file=sys.stderr)
            raise SystemExit(Exit.CONFIG) from None

    given_as = "--database-url" if args.database_url else "database.url"
    checked: list[URL] = []

    def check(url: URL) -> None:
        check_database_url(url, given_as=given_as)
        checked.append(url)

    rest = ["--database-url", args.database_url] if args.database_url else []
    try:
        if args.database_url:  # before anything parses it
            check_database_url(args.database_url, given_as=given_as)
        return main_db_upgrade(rest, default_url=configured, check_url=check)
    except OperatorError as refused:
        return _fail("faguan db upgrade", refused, refused, verbose=args.verbose)
    except Exception as exc:
        found = database_error(exc, checked[0]) if checked else None
        return _fail("faguan db upgrade", found, exc, verbose=args.verbose)


_REFUSED_EXIT = {
    Refusal.NOT_FAGUAN: Exit.NOT_A_DATABASE,
    Refusal.DAMAGED: Exit.NOT_A_DATABASE,
    Refusal.TOO_NEW: Exit.SCHEMA_TOO_NEW,
    Refusal.IN_USE: Exit.ALREADY_RUNNING,
}
"""Exit statuses of refused backups and restores (the others are the operator's mistakes: 2)."""


def _db_copy(args: argparse.Namespace) -> int:
    """`faguan db backup FILE` and `faguan db restore FILE` (SQLite: `bot.store.backup`;
    PostgreSQL: `bot.store.pg_backup`)."""
    command = f"faguan db {args.action}"
    url: URL | None = None
    postgres = False
    file = Path(args.file)
    try:
        configured = args.database_url or _settings(args.config, args.config_given).database.url
        url = resolve_url(configured)
        given_as = "--database-url" if args.database_url else "database.url"
        check_database_url(url, given_as=given_as)
        postgres = url.get_backend_name() == "postgresql"
        if args.action == "backup":
            copy = asyncio.run(pg_backup.backup(url, file)) if postgres else backup(url, file)
            print(f"{command}: wrote {copy.path}: {_held(copy)}; checked whole")
            return Exit.OK
        if postgres:
            copy, kept_name = asyncio.run(pg_backup.restore(url, file, dt.datetime.now(dt.UTC)))
            restored = f"the database {url.database}"
            kept = f"the database {kept_name}" if kept_name else None
        else:
            copy, kept_file = asyncio.run(_restoring(url, file))
            restored = str(copy.path)
            kept = str(kept_file) if kept_file else None
    except ConfigError as exc:
        print(f"{command}: {exc}", file=sys.stderr)
        return Exit.CONFIG
    except OperatorError as refused:
        return _fail(command, refused, refused, verbose=args.verbose)
    except BackupRefused as refused:
        print(f"{command}: {refused.line}; nothing changed", file=sys.stderr)
        return _REFUSED_EXIT.get(refused.why, Exit.CONFIG)
    except Claimed:
        assert url is not None
        print(
            f"{command}: the bot is running on {url.database}: stop it first; nothing changed",
            file=sys.stderr,
        )
        return Exit.ALREADY_RUNNING
    except OSError as exc:
        if postgres and url is not None and (found := database_error(exc, url)) is not None:
            return _fail(command, found, exc, verbose=args.verbose)  # the server unreachable
        print(f"{command}: {os_reason(exc)}; nothing changed", file=sys.stderr)
        return Exit.CONFIG
    except Exception as exc:  # the server's refusal to connect, in its own words
        return _fail(command, database_error(exc, url) if url else None, exc, verbose=args.verbose)
    print(f"{command}: {restored} is now the backup {args.file}: {_held(copy)}")
    if kept is not None:
        print(f"{command}: the database it replaced is kept as {kept}")
    print(
        f"{command}: at its start the bot reads the vote channels again from the backup's point "
        "and performs the deadlines passed since; night powers and moderators' commands given "
        "after the backup are not in it: redo them (docs/deploy.md, Backups)"
    )
    return Exit.OK


async def _restoring(url: URL, backup_file: Path) -> tuple[Copy, Path | None]:
    """The restore, under the lock a running bot holds (so none is running)."""
    database_file(url)  # PostgreSQL and in-memory databases are refused before any claim
    held = await claim(url, None, None)
    try:
        return restore(url, backup_file, dt.datetime.now(dt.UTC))
    finally:
        await held.release()


def _held(copy: Copy) -> str:
    return (
        f"{copy.games} game(s), {copy.active} in play, schema {copy.revision}, "
        f"{copy.size / 1e6:.1f} MB"
    )


def _bench(args: argparse.Namespace) -> int:
    from bench.cli import main as bench_main

    return bench_main(args)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = argparse.ArgumentParser(
        prog="faguan", description="法官: the judge of play-by-post 杀人游戏 games."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    verbose = "show the traceback of a failure, not only its one-line explanation"
    run = sub.add_parser(
        "run",
        help="run the Discord bot",
        description=(
            f"Run the Discord bot. The bot token comes from the {TOKEN_ENV} environment variable "
            "(or discord.token in the config file); the database is migrated first. Exit "
            "status: 2 configuration, 3 token rejected, 4 privileged intents not enabled, "
            "5 Discord unreachable, 6 database unreachable, 7 not a database, 8 database "
            "schema newer than this faguan, 9 another process runs this SQLite file (SQLite is "
            "for one process), 10 Discord requires sharding or refused the shard settings, 11 "
            "Discord refused the gateway version or intents this faguan sends (upgrade it). "
            "Once running, a process that loses its PostgreSQL shard claim "
            "(the database restarted, the connection dropped) stops with status 6."
        ),
    )
    run.add_argument("--config", help="the configuration file (default: config.toml if present)")
    run.add_argument("--verbose", action="store_true", help=verbose)
    run.set_defaults(func=_run)
    db = sub.add_parser(
        "db",
        help="database maintenance: faguan db upgrade | backup FILE | restore FILE",
        description="Database maintenance. Exit status as for faguan run (2, 6, 7, 8, 9).",
    )
    actions = db.add_subparsers(dest="action", required=True)
    for action, about, func in (
        ("upgrade", "bring the database schema up to date", _db),
        (
            "backup",
            "copy the database to a new FILE while the bot runs: consistent as of one commit, "
            "checked whole (PostgreSQL: by pg_dump, found on PATH)",
            _db_copy,
        ),
        (
            "restore",
            "put a backup FILE in the database's place; the bot must be stopped (exit status 9 "
            "otherwise), and the database replaced is kept beside it (PostgreSQL: by "
            "pg_restore, into a new database that then takes the bot's database's name)",
            _db_copy,
        ),
    ):
        one = actions.add_parser(action, help=about, description=f"faguan db {action}: {about}.")
        if func is _db_copy:
            one.add_argument("file", help="the backup file")
        one.add_argument(
            "--config", help="the configuration file (default: config.toml if present)"
        )
        one.add_argument("--database-url", help="database URL (default: the configured one)")
        one.add_argument("--verbose", action="store_true", help=verbose)
        one.set_defaults(func=func)
    replay = sub.add_parser(
        "replay",
        help="play a game file without Discord and print its record",
        description=(
            "Play a game file (TOML, docs/replay.md) as the bot would judge it, without "
            "Discord, and print its record, in UTF-8: as a forum judge would post it, or as "
            "JSON. Exit status: 0 the record is printed; 2 the file cannot be played (one "
            "line on standard error says why: the step and the key); 1 the record cannot be "
            "written (standard output closed or full)."
        ),
    )
    replay.add_argument("game", help="the game file (TOML, docs/replay.md)")
    replay.add_argument("--json", action="store_true", help="print the record as JSON")
    replay.add_argument(
        "--lang",
        choices=LOCALES,
        default="zh-CN",
        help="the language of the forum-style record, refusals included (default: zh-CN); the "
        "JSON record is the same whatever this says",
    )
    replay.set_defaults(func=_replay)
    verify = sub.add_parser(
        "verify",
        help="recompute the deal and every lot of a finished game",
        description=(
            "Check a finished game's record (JSON, as `faguan replay --json` and /game record "
            "write it) against its published seed: recompute the commitment, the deal and every "
            "lot, and print OK or MISMATCH for each (docs/fairness.md). Exit status: 0 "
            "everything matches; 1 something does not (the record was altered); 2 the file "
            "cannot be read, or is not a complete game record faguan can recompute (a key "
            "left out, an unknown ruleset: one line on standard error says why)."
        ),
    )
    verify.add_argument("record", help="the game record (JSON) with its published seed")
    verify.set_defaults(func=_verify)
    rulesets = sub.add_parser(
        "rulesets",
        help="list the rulesets",
        description=(
            "List the rulesets: each one's id (for /game new and a game file's `ruleset`), its "
            "Chinese name and how many players it takes (docs/rules.md §3). Exit status: 0."
        ),
    )
    rulesets.set_defaults(func=_rulesets)
    bench = sub.add_parser(
        "bench",
        help="measure speed against the machine's own limits",
        description=(
            "Measure the bot's speed beside the machine's own floors (the same work by the "
            "database driver alone, the engine alone) and print one table, or JSON; the "
            "defaults take 8–9 minutes on two cores (README, Performance). Exit status: 0 "
            "the table is printed; 2 the flags cannot run (one line on standard error says "
            "why: an unknown section, a count below 1, the discord section without the bench "
            "extra)."
        ),
    )
    add_bench_arguments(bench)
    bench.set_defaults(func=_bench)
    return parser


def main(argv: Sequence[str] | None = None, *, connect: Connect | None = None) -> int:
    """Entry point of the `faguan` console script. `connect` replaces `faguan run`'s connection
    to Discord (tests/robustness/test_rb_deploy.py runs `faguan run` in a simulated Discord);
    the console script never passes it."""
    args = build_parser().parse_args(argv)
    if hasattr(args, "config"):
        args.config_given = args.config is not None
        args.config = args.config or "config.toml"
    if connect is not None and args.func is _run:
        return _run(args, connect)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
