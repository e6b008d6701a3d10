"""`faguan verify` as a new user runs it, and the `--help` of the commands that had none.

- The tests' `.expected.json` (a subset of a record) was "altered", with `setup.player_count`
  as the reason; a record without `players`, or naming a ruleset this faguan does not know, too.
  A key left out or an unknown ruleset is no alteration: status 2, one line in words.
- A game file (TOML) given to `faguan verify` was "Expecting value: line 1 column 1 (char 0)".
- `faguan verify --help`, `faguan rulesets --help` and `faguan bench --help` had no description
  and no exit statuses, unlike `run`, `db` and `replay`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bot.cli import main

ROOT = Path(__file__).resolve().parents[2]
GAME = ROOT / "tests" / "games" / "v2" / "example_whole_game.toml"
EXPECTED = GAME.with_name("example_whole_game.expected.json")


def verify(capsys: pytest.CaptureFixture[str], path: Path) -> tuple[int, str, str]:
    status = main(["verify", str(path)])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def record(capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """The example game's whole record, as docs/replay.md says to get it."""
    assert main(["replay", "--json", str(GAME)]) == 0
    whole: dict[str, Any] = json.loads(capsys.readouterr().out)
    return whole


def written(tmp_path: Path, record: dict[str, Any]) -> Path:
    path = tmp_path / "record.json"
    path.write_text(json.dumps(record, ensure_ascii=False), "utf-8")
    return path


def test_the_whole_record_matches(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], record: dict[str, Any]
) -> None:
    status, out, err = verify(capsys, written(tmp_path, record))
    assert (status, err) == (0, "")
    assert out.endswith("2 of 2 match.\n")


def test_the_tests_expected_subset_is_not_a_complete_record(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, err = verify(capsys, EXPECTED)
    assert (status, out) == (2, "")
    assert err == (
        f"faguan verify: {EXPECTED}: not a complete game record: no `players`, `options`, "
        "`deal`, `lots` (`faguan replay --json` and /game record write whole records)\n"
    )
    assert "altered" not in err and "setup." not in err


@pytest.mark.parametrize("key", ["players", "deal", "lots", "commitment", "seed"])
def test_a_key_left_out_is_status_2_not_an_alteration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], record: dict[str, Any], key: str
) -> None:
    del record[key]
    path = written(tmp_path, record)
    status, out, err = verify(capsys, path)
    assert (status, out) == (2, "")
    shown = "published `seed`" if key == "seed" else f"`{key}`"
    assert err.startswith(f"faguan verify: {path}: not a complete game record: no {shown} ")


def test_an_unknown_ruleset_is_said_in_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], record: dict[str, Any]
) -> None:
    record["ruleset"] = "v9"
    path = written(tmp_path, record)
    status, out, err = verify(capsys, path)
    assert (status, out) == (2, "")
    assert err.startswith(
        f"faguan verify: {path}: cannot recompute the deal: Unknown ruleset “v9”."
    )
    assert "Known rulesets: " in err and "v2," in err and "setup.unknown_ruleset" not in err
    record["ruleset"] = "x" * 10_000  # the record's own text is not echoed whole
    status, _, err = verify(capsys, written(tmp_path, record))
    assert status == 2 and "… (9940 more)" in err and len(err) < 1000


def test_a_setup_that_cannot_be_dealt_is_said_in_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], record: dict[str, Any]
) -> None:
    record["players"] = record["players"][:3]
    status, _, err = verify(capsys, written(tmp_path, record))
    assert status == 2
    assert err.endswith(
        ": cannot recompute the deal: Ruleset v2 is played by 8 to 16 players, not 3.\n"
    )


def test_a_real_alteration_is_still_a_mismatch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], record: dict[str, Any]
) -> None:
    record["seed"] = "another seed"
    status, out, err = verify(capsys, written(tmp_path, record))
    assert (status, err) == (1, "")
    assert out.startswith("MISMATCH commitment: ")
    assert out.endswith("1 of 2 match. The record was altered.\n")


def test_a_game_file_is_sent_to_faguan_replay(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = verify(capsys, GAME)
    assert (status, out) == (2, "")
    assert err == (
        f"faguan verify: {GAME} is not a JSON game record (`faguan replay --json` and /game "
        "record write one); a game file (TOML) is played with `faguan replay`\n"
    )
    assert "Expecting value" not in err


def test_a_file_that_cannot_be_read_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nowhere.json"
    assert verify(capsys, missing) == (
        2, "", f"faguan verify: cannot read {missing}: No such file or directory\n"
    )  # fmt: skip
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'{"seed": "\xe9"}')
    assert verify(capsys, latin)[2] == f"faguan verify: cannot read {latin}: not UTF-8 text\n"
    listed = tmp_path / "list.json"
    listed.write_text("[1, 2]", "utf-8")
    assert verify(capsys, listed)[2] == (
        f"faguan verify: {listed} is not a game record (a JSON object)\n"
    )


@pytest.mark.parametrize(
    ("command", "said"),
    [
        ("verify", ["Exit status: 0 everything matches; 1", "2 the file cannot be read"]),
        ("rulesets", ["List the rulesets", "Exit status: 0."]),
        ("bench", ["Exit status: 0 the table is printed; 2 the flags cannot run"]),
    ],
)
def test_help_describes_the_command_and_its_exit_status(
    capsys: pytest.CaptureFixture[str], command: str, said: list[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main([command, "--help"])
    assert exited.value.code == 0
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps to the terminal's width
    for words in said:
        assert words in text, text
