"""Every recorded game under tests/games/ replays to its expected record (like perft files).

Expected files may leave keys out (only the keys present are compared, recursively for objects;
lists and scalars exactly). Conventions of hand-written records: "__SHA256__" stands for the
commitment of the game's seed; "__LOTS__" for a player drawn by lots, or for a tie settled by lots;
`result.reason` and `rejected[].reason` are free text and not compared.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from bot.records.replay import replay_file
from engine.rulesets import RULESETS

GAMES = Path(__file__).resolve().parents[1] / "games"
CASES = sorted(GAMES.rglob("*.toml"))


def _compare(actual: Any, expected: Any, path: str, seed: str, errors: list[str]) -> None:
    if expected == "__SHA256__":
        expected = hashlib.sha256(seed.encode()).hexdigest()
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            errors.append(f"{path}: expected an object, got {actual!r}")
            return
        if list(expected) != [k for k in actual if k in expected] and path.endswith(
            ("tally", "roles", "scores")
        ):
            errors.append(f"{path}: keys not in seat order: {list(actual)}")
        for key, value in expected.items():
            if key == "reason" and (path.endswith("result") or "rejected" in path):
                continue
            if key not in actual:
                errors.append(f"{path}.{key}: missing")
                continue
            _compare(actual[key], value, f"{path}.{key}", seed, errors)
    elif isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            errors.append(f"{path}: expected {expected!r}, got {actual!r}")
            return
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            _compare(a, e, f"{path}[{i}]", seed, errors)
    elif expected == "__LOTS__":
        if not (
            isinstance(actual, str) or (isinstance(actual, dict) and actual.get("then") == "lots")
        ):
            errors.append(f"{path}: expected a player drawn by lots, got {actual!r}")
    elif actual != expected:
        errors.append(f"{path}: expected {expected!r}, got {actual!r}")


def test_there_are_recorded_games_for_every_ruleset() -> None:
    rulesets = {p.parent.name for p in CASES}
    assert set(RULESETS) <= rulesets, sorted(set(RULESETS) - rulesets)


@pytest.mark.parametrize("game", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_recorded_game(game: Path) -> None:
    expected_file = game.with_suffix(".expected.json")
    assert expected_file.exists(), f"{game.name} has no expected record"
    expected = json.loads(expected_file.read_text("utf-8"))
    record = replay_file(game).record
    errors: list[str] = []
    _compare(record, expected, "record", record["seed"], errors)
    assert not errors, "\n".join(errors)
