"""`faguan replay` on a file whose keys are there but hold the wrong kind of value, or a value out
of range: one line that names the key, what it must be, and what it is (not "missing key")."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.cli import main

HEAD = """ruleset = "v2"
seed = "s"
players = ["A", "B", "C", "D", "E", "F", "G", "H"]
[roles]
A = "killer"
B = "killer"
C = "police"
D = "police"
"""


def _step(body: str) -> str:
    return HEAD + "[[steps]]\n" + body + "\n"


CASES = [
    (
        'ruleset = "v2"\nseed = 5\nplayers = ["A","B","C","D","E","F","G","H"]\n',
        "seed must be text, not 5 (an integer)",
    ),
    (
        'ruleset = 2\nseed = "s"\nplayers = ["A","B","C","D","E","F","G","H"]\n',
        'ruleset must be a ruleset id (text, such as "v2"), not 2 (an integer)',
    ),
    (
        'ruleset = "v2"\nseed = "s"\nplayers = "ABCDEFGH"\n',
        'players must be an array of names, not "ABCDEFGH" (text)',
    ),
    (
        'ruleset = "v2"\nseed = "s"\nplayers = ["A","B","C","D","E","F","G",8]\n',
        "players[8] must be a name (non-empty text), not 8 (an integer)",
    ),
    (
        'ruleset = "v2"\nseed = "s"\nplayers = ["A","B","C","D","E","F","G",""]\n',
        'players[8] must be a name (non-empty text), not "" (text)',
    ),
    (HEAD.replace('A = "killer"', "A = 1"), "roles.A must be a role id (text), not 1 (an integer)"),
    (
        HEAD.replace("[roles]", "options = [1]\n[roles]"),
        "options must be a table, not [1] (an array)",
    ),
    (
        HEAD.replace("[roles]", "steps = 3\n[roles]"),
        "steps must be an array of tables, not 3 (an integer)",
    ),
    (
        _step('do = "vote"\nby = 5\ntarget = "A"'),
        "step 1: by must be a player's name (text), not 5 (an integer)",
    ),
    (
        _step('do = "vote"\nby = "C"\ntarget = "A"\nid = 1.5'),
        "step 1: id must be a post id (text or a whole number), not 1.5 (a float)",
    ),
    (
        _step('do = "power"\nby = "A"\npower = "kill"\npass = "no"'),
        'step 1: pass must be true or false, not "no" (text)',
    ),
    (
        _step('do = "power"\nby = "A"\npower = 1\ntarget = "E"'),
        "step 1: power must be a power id (text), not 1 (an integer)",
    ),
    (
        _step('do = "last_words"\nby = "A"\ntext = 5'),
        "step 1: text must be the last words (text), not 5 (an integer)",
    ),
    (
        _step('do = "lock"\nat = -5'),
        "step 1: at must be a time between 1970 and 9999 (ISO 8601 text or a TOML date-time), not -5 (an integer)",
    ),
    (
        _step('do = "lock"\nat = 1960-01-01T00:00:00+08:00'),
        "step 1: at must be a time between 1970 and 9999 (ISO 8601 text or a TOML date-time), not 1960-01-01T00:00:00+08:00 (a date-time)",
    ),
    (
        _step('do = "lock"\nat = "yesterday"'),
        'step 1: at must be a time between 1970 and 9999 (ISO 8601 text or a TOML date-time), not "yesterday" (text)',
    ),
    (
        _step('do = "lock"\nwindow = 0'),
        "step 1: window must be a whole number from 1, not 0 (an integer)",
    ),
    (
        _step('do = "mod"\ncommand = "extend"\nminutes = "ten"'),
        'step 1: minutes must be a number of minutes, not "ten" (text)',
    ),
    (
        _step('do = "mod"\ncommand = "shorten"\nminutes = -5'),
        "step 1: minutes must be a finite number of minutes above 0, not -5 (an integer)",
    ),
    (
        _step('do = "mod"\ncommand = "extend"\nminutes = true'),
        "step 1: minutes must be a number of minutes, not true (a boolean)",
    ),
    (
        _step('do = "mod"\ncommand = "pause"\nat = 5'),
        "step 1: at must be a time between 1970 and 9999 (ISO 8601 text or a TOML date-time), not 5 (an integer)",
    ),
    (
        _step('do = "mod"\ncommand = "void"\npost = [1]'),
        "step 1: post must be a post id (text or a whole number), not [1] (an array)",
    ),
    (
        _step('do = "mod"\ncommand = "void"\npost = 1\nreason = 5'),
        "step 1: reason must be text, not 5 (an integer)",
    ),
    (
        _step('do = "mod"\ncommand = "advance"\nby = 5'),
        "step 1: by must be the moderator's name (text), not 5 (an integer)",
    ),
    (
        _step('do = "mod"\ncommand = "penalty"\nteam = "x"'),
        'step 1: team must be a team (killers, police, good_thieves, bad_thieves), not "x" (text)',
    ),
    (
        _step('do = "mod"\ncommand = "end"\nwinner = 5'),
        "step 1: winner must be a camp (good, killers, draw, good_thieves, bad_thieves), not 5 (an integer)",
    ),
]


@pytest.mark.parametrize(("content", "message"), CASES)
def test_a_wrong_value_is_one_line_saying_what_it_must_be(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    game = tmp_path / "bad.toml"
    game.write_text(content, "utf-8")
    assert main(["replay", str(game), "--json"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"faguan replay: {message}\n"


@pytest.mark.parametrize(
    ("content", "key"),
    [
        ('seed = "s"\nplayers = ["A","B","C","D","E","F","G","H"]\n', "ruleset"),
        ('ruleset = "v2"\nplayers = ["A","B","C","D","E","F","G","H"]\n', "seed"),
        ('ruleset = "v2"\nseed = "s"\n', "players"),
    ],
)
def test_a_key_that_is_not_there_is_still_called_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, key: str
) -> None:
    game = tmp_path / "bad.toml"
    game.write_text(content, "utf-8")
    assert main(["replay", str(game)]) == 2
    assert capsys.readouterr().err.startswith(f"faguan replay: missing key “{key}”")
