"""The `faguan` command: run the bot, replay and verify games, list rulesets."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from bench.cli import add_arguments as add_bench_arguments
from bot.config import ConfigError, Settings, load
from bot.forum_text import forum_text
from bot.replay import ReplayFileError, replay_file
from bot.store.migrate import main_db_upgrade
from engine.rulesets import RULESETS
from engine.verify import verify_record


def _replay(args: argparse.Namespace) -> int:
    try:
        replay = replay_file(args.game)
    except ReplayFileError as exc:
        print(f"faguan replay: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(replay.record, ensure_ascii=False, indent=2))
    else:
        print(forum_text(replay.record))
    return 0


def _verify(args: argparse.Namespace) -> int:
    try:
        record = json.loads(Path(args.record).read_text("utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        print(f"faguan verify: cannot read {args.record}: {exc}", file=sys.stderr)
        return 2
    if not isinstance(record, dict):
        print(f"faguan verify: {args.record} is not a game record (a JSON object)", file=sys.stderr)
        return 2
    findings = verify_record(record)
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


def _rulesets(args: argparse.Namespace) -> int:
    width = max(len(r.id) for r in RULESETS.values())
    for rules in RULESETS.values():
        # CJK characters take two columns: pad by display width, not by length
        name_width = sum(2 if ord(ch) > 0x2E7F else 1 for ch in rules.name_zh)
        name = rules.name_zh + " " * max(0, 18 - name_width)
        print(f"{rules.id:<{width}}  {name}{rules.min_players}–{rules.max_players} players")
    return 0


def _settings(path: str, explicit: bool) -> Settings:
    """The configuration: the file if there is one (it must exist when named), else defaults."""
    if Path(path).exists():
        return load(path)
    if explicit:
        raise ConfigError(
            [f"{path}: no such file; copy config.example.toml to {path}"], source=path
        )
    return load(None)


def _run(args: argparse.Namespace) -> int:
    try:
        settings = _settings(args.config, args.config_given)
        token = settings.require_token()
    except ConfigError as exc:
        print(f"faguan run: {exc}", file=sys.stderr)
        return 2
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    from bot.app import create_bot

    bot = create_bot(settings)
    bot.run(token, log_handler=None)
    return 0


def _db(args: argparse.Namespace) -> int:
    def configured() -> str | None:
        try:
            return _settings(args.config, args.config_given).database.url
        except ConfigError as exc:
            print(f"faguan db: {exc}", file=sys.stderr)
            raise SystemExit(2) from None

    return main_db_upgrade(args.rest, default_url=configured)


def _bench(args: argparse.Namespace) -> int:
    from bench.cli import main as bench_main

    return bench_main(args)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = argparse.ArgumentParser(
        prog="faguan", description="法官: the judge of play-by-post 杀人游戏 games."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run the Discord bot")
    run.add_argument("--config", help="the configuration file (default: config.toml if present)")
    run.set_defaults(func=_run)
    db = sub.add_parser("db", help="database maintenance: faguan db upgrade [--database-url URL]")
    db.add_argument("action", choices=["upgrade"])
    db.add_argument("--config", help="the configuration file (default: config.toml if present)")
    db.add_argument("rest", nargs=argparse.REMAINDER)
    db.set_defaults(func=_db)
    replay = sub.add_parser("replay", help="play a game file without Discord and print its record")
    replay.add_argument("game", help="a replay file (TOML, RULES.md §6)")
    replay.add_argument("--json", action="store_true", help="print the record as JSON")
    replay.set_defaults(func=_replay)
    verify = sub.add_parser("verify", help="recompute the deal and every lot of a finished game")
    verify.add_argument("record", help="the game record (JSON) with its published seed")
    verify.set_defaults(func=_verify)
    rulesets = sub.add_parser("rulesets", help="list the rulesets")
    rulesets.set_defaults(func=_rulesets)
    bench = sub.add_parser("bench", help="measure speed against the machine's own limits")
    add_bench_arguments(bench)
    bench.set_defaults(func=_bench)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `faguan` console script."""
    args = build_parser().parse_args(argv)
    if hasattr(args, "config"):
        args.config_given = args.config is not None
        args.config = args.config or "config.toml"
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
