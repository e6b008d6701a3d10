"""The `faguan` command: run the bot, replay and verify games, list rulesets."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from bot.forum_text import forum_text
from bot.replay import ReplayFileError, replay_file
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
    for rules in RULESETS.values():
        print(f"{rules.id:<8} {rules.name_zh:<14} {rules.min_players}–{rules.max_players} players")
    return 0


def _run(args: argparse.Namespace) -> int:
    print(
        "faguan run: the Discord bot is not built yet (see the open issue “The bot on Discord”).\n"
        "What works today: faguan replay GAME.toml [--json], faguan verify RECORD.json, "
        "faguan rulesets.",
        file=sys.stderr,
    )
    return 1


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = argparse.ArgumentParser(
        prog="faguan", description="法官: the judge of play-by-post 杀人游戏 games."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run the Discord bot")
    run.add_argument(
        "--config", default="config.toml", help="the configuration file (default: config.toml)"
    )
    run.set_defaults(func=_run)
    replay = sub.add_parser("replay", help="play a game file without Discord and print its record")
    replay.add_argument("game", help="a replay file (TOML, RULES.md §6)")
    replay.add_argument("--json", action="store_true", help="print the record as JSON")
    replay.set_defaults(func=_replay)
    verify = sub.add_parser("verify", help="recompute the deal and every lot of a finished game")
    verify.add_argument("record", help="the game record (JSON) with its published seed")
    verify.set_defaults(func=_verify)
    rulesets = sub.add_parser("rulesets", help="list the rulesets")
    rulesets.set_defaults(func=_rulesets)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `faguan` console script."""
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
