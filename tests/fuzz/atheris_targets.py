"""Coverage-guided fuzzing (atheris, i.e. libFuzzer) of the readers of outside input: a vote post,
a replay file (`faguan replay`), a game record (`faguan verify`), the configuration file.

hypothesis (tests/robustness/) generates inputs of the shapes we thought of; libFuzzer mutates
bytes towards the branches no one thought of, guided by the coverage of our own code. Each target
states what must hold; anything else (an unexpected exception, a broken invariant, a hang past
libFuzzer's -timeout) is a crash, saved by libFuzzer as a reproducer file.

    python tests/fuzz/atheris_targets.py TARGET [libFuzzer flags] [CORPUS_DIR ...]
    python tests/fuzz/atheris_targets.py replay -max_total_time=600 /tmp/replay-corpus tests/games/v2

TARGET is one of: vote_post, replay, verify, config. tests/robustness/test_rb_atheris.py runs
each for a bounded number of inputs from the project's own seeds.
"""

from __future__ import annotations

import json
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path

import atheris

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

with atheris.instrument_imports(include=["engine", "bot"]):
    from bot.config import ConfigError, Settings, load
    from bot.records.forum_text import forum_text
    from bot.records.replay import Replay, ReplayFileError, parse, run
    from engine.verify import Finding, verify_record
    from engine.voteparse import Abstain, NotAVote, UnknownTarget, VoteFor, parse_vote_post

NAMES = {"玩家1": 1, "阿猫": 2, "Bob": 3, "小明明": 4, "12号": 5, "三": 6, "投": 7, "弃权王": 8}
MENTIONS = {1_300_000_000_000_000_001: 1, 1_300_000_000_000_000_002: 2, 42: 9}
SEATS = set(NAMES.values()) | set(MENTIONS.values())


def text_of(data: bytes) -> str | None:
    """The bytes as UTF-8 text, or None (every reader refuses undecodable bytes up front)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def vote_post(data: bytes) -> None:
    """Any post is read as one of the four outcomes, the same each time; a vote names a seat
    that the table knows or a number the post wrote."""
    text = data.decode("utf-8", "replace")
    parsed = parse_vote_post(text, names=NAMES, mentions=MENTIONS)
    assert isinstance(parsed, VoteFor | Abstain | UnknownTarget | NotAVote), parsed
    assert parse_vote_post(text, names=NAMES, mentions=MENTIONS) == parsed
    if isinstance(parsed, VoteFor):
        assert parsed.seat in SEATS or parsed.seat >= 0, parsed


def replay(data: bytes) -> None:
    """A replay file plays to a record or is refused with a `ReplayFileError` that says why;
    the record is plain JSON, the same each time, and prints as forum text (the default)."""
    try:
        doc = parse(data, "game.toml")  # as `faguan replay` reads a file
        result = run(doc)
    except ReplayFileError as exc:
        assert str(exc).strip(), "a refusal must say why"
        return
    assert isinstance(result, Replay) and isinstance(result.record, dict)
    out = json.dumps(result.record, allow_nan=False, ensure_ascii=False)  # plain JSON
    assert json.dumps(run(parse(data, "game.toml")).record, ensure_ascii=False) == out
    forum_text(result.record)


def verify(data: bytes) -> None:
    """Any JSON object given to `faguan verify` gets findings, never an exception."""
    text = text_of(data)
    if text is None:
        return
    try:
        record = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return  # `faguan verify` reports that it cannot read the file
    if not isinstance(record, dict):
        return
    findings = verify_record(record)
    assert isinstance(findings, list) and all(isinstance(f, Finding) for f in findings)


def config(data: bytes) -> None:
    """A configuration file loads to `Settings` or to a `ConfigError` listing each problem."""
    text = text_of(data)
    if text is None:
        return
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return  # `load` reports the TOML error with its line
    try:
        settings = load(raw, env={})
    except ConfigError as exc:
        assert exc.problems and all(p.strip() for p in exc.problems), exc
        return
    assert isinstance(settings, Settings)


TARGETS: dict[str, Callable[[bytes], None]] = {
    "vote_post": vote_post,
    "replay": replay,
    "verify": verify,
    "config": config,
}


def main(argv: list[str]) -> None:
    if len(argv) < 2 or argv[1] not in TARGETS:
        sys.exit(f"usage: {argv[0]} {{{','.join(TARGETS)}}} [libFuzzer flags] [corpus dirs]")
    target = TARGETS[argv[1]]
    atheris.Setup([argv[0], *argv[2:]], target)
    atheris.Fuzz()


if __name__ == "__main__":
    main(sys.argv)
