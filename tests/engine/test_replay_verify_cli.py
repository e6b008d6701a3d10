"""`faguan replay`, `faguan verify` and `faguan rulesets` as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli import main
from engine.rulesets import RULESETS

EXAMPLE = Path(__file__).resolve().parents[1] / "games" / "v2" / "example_whole_game.toml"

TIE_GAME = """
ruleset = "v2"
seed = "tie-seed"
players = ["A", "B", "C", "D", "E", "F", "G", "H"]
[roles]
A = "killer"
B = "killer"
C = "police"
D = "police"
[[steps]]
do = "power"
by = "A"
power = "kill"
target = "E"
[[steps]]
do = "power"
by = "B"
power = "kill"
target = "F"
[[steps]]
do = "lock"
[[steps]]
do = "vote"
by = "C"
target = "A"
[[steps]]
do = "vote"
by = "D"
target = "B"
[[steps]]
do = "lock"
"""


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_replay_json_matches_the_shared_example(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "replay", str(EXAMPLE), "--json")
    assert code == 0
    record = json.loads(out)
    expected = json.loads(EXAMPLE.with_suffix(".expected.json").read_text("utf-8"))
    assert [
        {k: p[k] for k in e} for p, e in zip(record["phases"], expected["phases"], strict=True)
    ] == expected["phases"]
    assert record["result"]["scores"] == expected["result"]["scores"]
    assert record["commitment"] == expected["commitment"]


def test_replay_text_reads_like_a_forum_judge(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "replay", str(EXAMPLE))
    assert code == 0
    assert "第1夜" in out and "出局：戊" in out and "【私密】警察验 乙：杀手" in out
    assert "票型：乙←丙、丁、己、庚、辛（5票）" in out
    assert "结果：好人（第2天）" in out and "种子：example-1" in out


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('ruleset = "v2"\nseed = \n', "not valid TOML"),
        ('ruleset = "nope"\nseed = "s"\nplayers = ["A"]\n', "Unknown ruleset"),
        ('ruleset = "v2"\nseed = "s"\nplayers = ["A", "B"]\n', "8 to 16 players"),
        (
            'ruleset = "v2"\nseed = "s"\nplayers = ["A","B","C","D","E","F","G","H"]\n[roles]\nA = "wizard"\n',
            "Unknown role",
        ),
        (
            'ruleset = "v2"\nseed = "s"\nplayers = ["A","B","C","D","E","F","G","H"]\n[[steps]]\ndo = "vote"\nby = "Z"\ntarget = "A"\n',
            "step 1: by = 'Z' is not a player",
        ),
        (
            'ruleset = "v2"\nseed = "s"\nplayers = ["A","B","C","D","E","F","G","H"]\n[[steps]]\ndo = "power"\nby = "A"\npower = "fly"\n',
            "unknown power 'fly'",
        ),
        (
            'ruleset = "v2"\nseed = "s"\nplayers = ["A","B","C","D","E","F","G","H"]\n[[steps]]\ndo = "dance"\n',
            "unknown do",
        ),
        ('ruleset = "v2"\nplayers = ["A","B","C","D","E","F","G","H"]\n', "missing key “seed”"),
    ],
)
def test_bad_files_are_clear_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    game = tmp_path / "bad.toml"
    game.write_text(content, "utf-8")
    code, out, err = run(capsys, "replay", str(game), "--json")
    assert code != 0 and out == ""
    assert message in err


def test_illegal_steps_are_rejected_not_fatal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    game = tmp_path / "g.toml"
    game.write_text(
        EXAMPLE.read_text("utf-8")
        + '\n[[steps]]\ndo = "vote"\nby = "戊"\ntarget = "甲"\n',  # after the end
        "utf-8",
    )
    code, out, _ = run(capsys, "replay", str(game), "--json")
    assert code == 0
    assert json.loads(out)["rejected"][0]["step"] == 23


def _record(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, dict]:  # type: ignore[type-arg]
    game = tmp_path / "tie.toml"
    game.write_text(TIE_GAME, "utf-8")
    code, out, _ = run(capsys, "replay", str(game), "--json")
    assert code == 0
    record = json.loads(out)
    assert len(record["lots"]) == 2  # the killers' split and the day's tie
    path = tmp_path / "record.json"
    path.write_text(out, "utf-8")
    return path, record


def test_verify_accepts_an_honest_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _ = _record(tmp_path, capsys)
    code, out, _ = run(capsys, "verify", str(path))
    assert code == 0
    assert "MISMATCH" not in out and "5 of 5 match." in out


def _tamper_seed(r: dict) -> None:  # type: ignore[type-arg]
    r["seed"] = "other"


def _tamper_deal(r: dict) -> None:  # type: ignore[type-arg]
    r["roles"]["E"], r["roles"]["C"] = r["roles"]["C"], r["roles"]["E"]
    r["deal"]["dealt"] = ["C", "E", "F", "G", "H"]


def _tamper_lot(r: dict) -> None:  # type: ignore[type-arg]
    lot = r["lots"][-1]
    lot["drawn"] = next(x for x in lot["among"] if x != lot["drawn"])


def _tamper_tie(r: dict) -> None:  # type: ignore[type-arg]
    tie = next(p["tie"] for p in r["phases"] if p.get("tie"))
    tie["drawn"] = next(x for x in tie["tied"] if x != tie["drawn"])


@pytest.mark.parametrize(
    ("tamper", "named"),
    [
        (_tamper_seed, "commitment"),
        (_tamper_deal, "deal"),
        (_tamper_lot, "lot lots|day 1"),
        (_tamper_tie, "tie of day 1 lots|day 1"),
    ],
)
def test_verify_catches_tampering(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], tamper, named: str
) -> None:  # type: ignore[no-untyped-def]
    path, record = _record(tmp_path, capsys)
    tamper(record)
    path.write_text(json.dumps(record, ensure_ascii=False), "utf-8")
    code, out, _ = run(capsys, "verify", str(path))
    assert code == 1
    assert f"MISMATCH {named}" in out and "The record was altered." in out


@pytest.mark.parametrize(
    ("key", "value", "named"),
    [
        ("roles", {"A": {"role": "killer"}}, "`roles`"),  # found by atheris: a crash before
        ("players", "ABC", "`players`"),
        ("deal", {"dealt": [1, 2]}, "`deal`"),
        ("options", [], "`options`"),
        ("lots", [7], "`lots`"),
        ("phases", {"day": 1}, "`phases`"),
    ],
)
def test_verify_names_a_malformed_record_instead_of_failing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str, value: object, named: str
) -> None:
    path, record = _record(tmp_path, capsys)
    record[key] = value
    path.write_text(json.dumps(record, ensure_ascii=False), "utf-8")
    code, out, _ = run(capsys, "verify", str(path))
    assert code == 1
    assert f"MISMATCH record: {named}" in out and "The record was altered." in out


def test_rulesets_lists_ids_names_and_ranges(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "rulesets")
    assert code == 0
    assert "mifei" in out and "秘匪版" in out and "12–16" in out
    assert len(out.strip().splitlines()) == len(RULESETS)


HEADER = """
ruleset = "v2"
seed = "s"
players = ["A", "B", "C", "D", "E", "F", "G", "H"]
[options]
tie = "victim_choice"
[roles]
A = "killer"
B = "killer"
C = "police"
D = "police"
"""


def _steps(*steps: str) -> str:
    return HEADER + "".join(f"\n[[steps]]\n{s.strip()}\n" for s in steps)


def _replay(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str) -> dict:  # type: ignore[type-arg]
    game = tmp_path / "g.toml"
    game.write_text(text, "utf-8")
    code, out, err = run(capsys, "replay", str(game), "--json")
    assert code == 0, err
    return json.loads(out)  # type: ignore[no-any-return]


def test_power_stamped_after_the_lock_is_rejected(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = _replay(
        tmp_path,
        capsys,
        _steps(
            'do = "power"\nby = "A"\npower = "kill"\ntarget = "E"\nat = "2026-12-01T22:00:00.001+08:00"',
            'do = "lock"\nat = "2026-12-01T22:00:00+08:00"',
        ),
    )
    assert [r["step"] for r in record["rejected"]] == [1]
    assert record["phases"][0]["left"] == []


def test_victim_choice_and_mod_steps(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record = _replay(
        tmp_path,
        capsys,
        _steps(
            'do = "power"\nby = "A"\npower = "kill"\ntarget = "H"',
            'do = "lock"',
            'do = "vote"\nby = "C"\ntarget = "A"',
            'do = "vote"\nby = "D"\ntarget = "B"',
            'do = "lock"',
            'do = "vote"\nby = "C"\ntarget = "A"',
            'do = "vote"\nby = "D"\ntarget = "B"',
            'do = "vote"\nby = "E"\ntarget = "B"',
            'do = "mod"\ncommand = "void"\npost = 8\nreason = "proxy"',
            'do = "lock"',
            'do = "choose"\nby = "H"\ntarget = "B"',
            'do = "lock"',
            'do = "mod"\ncommand = "replace"\ntarget = "A"\nplayer = "Z"',
            'do = "power"\nby = "Z"\npower = "kill"\ntarget = "C"',
            'do = "mod"\ncommand = "modkill"\ntarget = "G"',
            'do = "lock"',
        ),
    )
    days = [p for p in record["phases"] if p["phase"] == "day"]
    assert [d.get("revote") for d in days] == [None, 1, 2]
    assert days[1]["tie"] == {
        "tied": ["A", "B"],
        "policy": "victim_choice",
        "then": "choice",
        "chooser": "H",
    }
    assert days[1]["invalid"] == 1  # the voided post
    assert days[2]["left"] == ["B"] and days[2]["tie"]["drawn"] == "B"
    assert record["substitutes"] == {"A": ["Z"]}
    assert [o["command"] for o in record["overrides"]] == ["void", "replace", "modkill"]
    assert record["phases"][-1] == {
        "phase": "night",
        "number": 2,
        "left": ["C"],
        "checks": [],
        "last_words": [],
    }
