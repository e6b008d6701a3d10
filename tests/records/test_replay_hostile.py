"""`faguan replay` as a stranger uses it: hostile and odd game files, the output's bytes, the exit
statuses, and the fairness check of docs/fairness.md done by hand (docs/replay.md is the
contract). Every refusal is one line on standard error and exit status 2, never a traceback."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

import pytest

from bot.cli import main
from bot.records.replay import run
from engine.rulesets import RULESETS

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "tests" / "games" / "v2" / "example_whole_game.toml"

HEAD = """ruleset = "v2"
seed = "s"
players = ["A", "B", "C", "D", "E", "F", "G", "H"]
[roles]
A = "killer"
B = "killer"
C = "police"
D = "police"
"""
V5 = 'ruleset = "v5"\nseed = "s"\nplayers = ["A", "B", "C", "D", "E", "F", "G"]\n'


def steps(*bodies: str, head: str = HEAD) -> str:
    return head + "".join(f"[[steps]]\n{body}\n" for body in bodies)


def replay(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | bytes, *extra: str
) -> tuple[int, str, str]:
    game = tmp_path / "game.toml"
    if isinstance(content, str):
        content = content.encode("utf-8")
    game.write_bytes(content)
    code = main(["replay", str(game), *extra])
    out, err = capsys.readouterr()
    return code, out, err


def refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | bytes) -> str:
    """The one line `faguan replay` refuses the file with (exit status 2, nothing printed)."""
    code, out, err = replay(tmp_path, capsys, content, "--json")
    assert (code, out) == (2, ""), err
    assert err.startswith("faguan replay: ") and err.count("\n") == 1, err
    return err.removeprefix("faguan replay: ").strip()


def played(tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str) -> dict[str, Any]:
    code, out, err = replay(tmp_path, capsys, content, "--json")
    assert code == 0, err
    return json.loads(out)  # type: ignore[no-any-return]


def faguan(*args: str, env: dict[str, str] | None = None, **kw: Any) -> subprocess.Popen[bytes]:
    """`faguan …` as its own process (the console script's `main`)."""
    return subprocess.Popen(
        [sys.executable, "-m", "bot.cli", *args],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        stdout=kw.pop("stdout", subprocess.PIPE),
        stderr=subprocess.PIPE,
        **kw,
    )


# -- the shared example ------------------------------------------------------------------------


def test_the_example_replays_to_its_expected_record_field_by_field(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Every key of the expected record, at every depth, is the replay's (`result.reason` is
    free text there, by the convention of tests/games/README.md); the replay's other keys are
    the optional ones docs/replay.md lists, so nothing undocumented hides beside them."""
    assert main(["replay", str(EXAMPLE), "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    expected = json.loads(EXAMPLE.with_suffix(".expected.json").read_text("utf-8"))
    assert record["result"].pop("reason").strip()
    del expected["result"]["reason"]
    assert set(record) - set(expected) == {"players", "options", "deal", "lots", "overrides"}
    assert set(record["result"]) - set(expected["result"]) == {"reason_key"}
    del record["result"]["reason_key"]
    for got, want in zip(record["phases"], expected["phases"], strict=True):
        optional = {"votes", "posts"} if want["phase"] == "day" else set()
        assert set(got) - set(want) == optional
        assert {k: got[k] for k in want} == want
    del record["phases"], expected["phases"]
    assert {k: record[k] for k in expected} == expected


# -- files that cannot be read ------------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(HEAD + "x = " + "[" * 3000 + "]" * 3000 + "\n", id="arrays"),
        pytest.param(HEAD + "x = " + "{a = " * 3000 + "1" + "}" * 3000 + "\n", id="inline-tables"),
        pytest.param(steps('do = "lock"\nat = ' + "[" * 900 + "]" * 900), id="in-a-step"),
    ],
)
def test_nesting_too_deep_for_the_reader_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str
) -> None:
    """Python's `tomllib` reads nesting recursively: it once escaped as a RecursionError."""
    assert refused(tmp_path, capsys, content).endswith(
        "not valid TOML here: arrays or inline tables nested too deeply"
    )


def test_a_file_over_16_mib_is_refused_unread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    big = "# " + "x" * (16 * 2**20) + "\n" + steps('do = "lock"')
    assert refused(tmp_path, capsys, big).endswith("too big: a game file holds at most 16 MiB")


def test_a_dash_is_not_standard_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["replay", "-", "--json"]) == 2
    assert capsys.readouterr() == (
        "",
        "faguan replay: -: standard input is not read: give the game file's path (or /dev/stdin)\n",
    )


def test_a_byte_order_mark_is_allowed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = EXAMPLE.read_text("utf-8")
    assert played(tmp_path, capsys, "\ufeff" + text) == played(tmp_path, capsys, text)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            steps('do = "lock"\nwindow = 18446744073709551616'),
            "step 1: window must be an integer from -2^63 to 2^63-1 (TOML's range), not an "
            "integer of 20 digits",
        ),
        (
            steps('do = "vote"\nby = "C"\ntarget = "A"\nid = 0x' + "f" * 5000),
            "step 1: id must be an integer from -2^63 to 2^63-1 (TOML's range), not an integer "
            "of over 2700 digits",
        ),
        (
            HEAD.replace("[roles]", "[options]\nwarmup = -9223372036854775809\n[roles]"),
            "options.warmup must be an integer from -2^63 to 2^63-1 (TOML's range), not an "
            "integer of 19 digits",
        ),
        (
            steps('do = "mod"\ncommand = "extend"\nminutes = ' + "9" * 5000),
            "game.toml: not valid TOML: an integer beyond 64 bits (TOML's range is -2^63 to "
            "2^63-1)",
        ),
    ],
)
def test_an_integer_beyond_64_bits_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    """TOML 1.0 holds 64-bit integers; `tomllib` reads any length. A long one escaped as an
    OverflowError (`minutes`), a ValueError (over 4300 digits), or went on to the engine."""
    assert refused(tmp_path, capsys, content).endswith(message)


# -- keys ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "key", "do"),
    [
        ('do = "power"\nby = "A"\npower = "kill"\ntaget = "E"', "taget", "power"),
        ('do = "power"\nby = "A"\npower = "kill"\npas = true', "pas", "power"),
        ('do = "vote"\nby = "C"\ntarget = "A"\ntime = 2026-01-01T00:00:00Z', "time", "vote"),
        ('do = "lock"\nwindw = 3', "windw", "lock"),
        ('do = "last_words"\nby = "A"\ntext = "bye"\nat = 2026-01-01', "at", "last_words"),
        ('do = "choose"\nby = "A"\ntarget = "B"\nid = 1', "id", "choose"),
    ],
)
def test_an_unknown_key_in_a_step_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], body: str, key: str, do: str
) -> None:
    """docs/replay.md: a file that names an unknown key is an error. A misspelt `target` once
    made a kill with no target, a misspelt `at` a late vote that counted, without a word."""
    message = refused(tmp_path, capsys, steps('do = "lock"', body))
    assert message.startswith(f'step 2: unknown key "{key}" in a {do} step (its keys: do, ')


def test_a_mod_step_keeps_its_notes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The exception: a moderator's step may carry notes, copied into `overrides`."""
    record = played(
        tmp_path,
        capsys,
        steps('do = "mod"\ncommand = "modkill"\ntarget = "H"\nreason = "idle"\nnote = [1, "x"]'),
    )
    assert record["overrides"] == [
        {"step": 1, "command": "modkill", "target": "H", "reason": "idle", "note": [1, "x"]}
    ]


# -- names --------------------------------------------------------------------------------------


def _players(*names: str) -> str:
    return 'ruleset = "v2"\nseed = "s"\nplayers = ' + json.dumps(names) + "\n"


REST = ("C", "D", "E", "F", "G", "H")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            _players("abstain", "B", *REST),
            'players[1] = "abstain" is a word of the file (a vote\'s target "abstain", "pass" '
            "among a lot's options): give the player another name",
        ),
        (_players("A", "pass", *REST), 'players[2] = "pass" is a word of the file'),
        (
            _players("A", "B\u0000", *REST),
            'players[2] = "B\\u0000" holds a control character (U+0000): a name is printable text',
        ),
        (_players("A", "B\nC", *REST[1:], "I"), "holds a control character (U+000A)"),
        (
            _players("\u200b", "B", *REST),
            'players[1] = "\\u200b" shows nothing (only spaces or invisible characters)',
        ),
        (
            _players("A", "\u3000\u200d", *REST),
            'players[2] = "\\u3000\\u200d" shows nothing (only spaces or invisible characters)',
        ),
        (
            V5.replace('"B"', '"A#1"'),
            'players[2] = "A#1" is also the name of a card: in v5 each player holds 2 cards, '
            "named name#1 … name#2",
        ),
        (
            steps('do = "mod"\ncommand = "replace"\ntarget = "A"\nplayer = "abstain"'),
            'step 1: player = "abstain" is a word of the file',
        ),
        (
            steps('do = "mod"\ncommand = "replace"\ntarget = "A"\nplayer = "  "'),
            'step 1: player = "  " shows nothing (only spaces or invisible characters)',
        ),
        (
            steps('do = "mod"\ncommand = "replace"\ntarget = "A"\nplayer = "C#2"', head=V5),
            'step 1: player = "C#2" is the name of a card of this game: a substitute needs '
            "their own",
        ),
    ],
)
def test_a_name_that_cannot_be_told_apart_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    """A player named `abstain` could not be voted for (the vote read as an abstention); in
    v5, `A#1` beside `A`, or a substitute named `C#2`, made one name two seats and the record
    ambiguous; a NUL or a line break in a name broke the forum text."""
    assert message in refused(tmp_path, capsys, content)


def test_odd_but_distinct_names_play(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Full-width, right-to-left, leading spaces, combining accents: names as written."""
    names = ["A", "Ａ", " A", "\u202eB", "é", "e\u0301", "甲", "x" * 10_000]
    record = played(tmp_path, capsys, _players(*names))
    assert record["players"] == names


def test_a_long_value_is_cut_in_the_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    long = "Z" * 1_000_000
    for content in (
        steps(f'do = "vote"\nby = "{long}"\ntarget = "A"'),
        steps(f'do = "vote"\nby = "C"\ntarget = ["{long}"]'),
        HEAD.replace('ruleset = "v2"', f'ruleset = "{long}"'),
        HEAD.replace('A = "killer"', f'A = "{long}"'),
    ):
        message = refused(tmp_path, capsys, content)
        assert len(message) < 600 and "… (999940 more)" in message, message[:600]
    # only the file's value is cut, never the list of what it may be
    message = refused(tmp_path, capsys, HEAD.replace('"v2"', f'"{long}"'))
    assert message.endswith(f"Known rulesets: {', '.join(sorted(RULESETS))}."), message


def test_what_does_not_print_is_escaped_in_the_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    message = refused(tmp_path, capsys, steps('do = "lock"\nat = "\u202e2026-01-01"'))
    assert message.startswith("step 1: at must be a time") and 'not "\\u202e2026-01-01"' in message


# -- playing ------------------------------------------------------------------------------------


def test_a_deadline_moved_beyond_the_calendar_is_told_in_ms(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A refusal naming the deadline, after a `shorten` of 1e300 minutes: an OverflowError."""
    record = played(
        tmp_path,
        capsys,
        steps(
            'do = "mod"\ncommand = "set_deadline"\nat = 2026-01-01T00:00:00Z',
            'do = "mod"\ncommand = "shorten"\nminutes = 1e300',
            'do = "mod"\ncommand = "set_deadline"\nat = 2026-01-01T00:00:00Z\n'
            "now = 2026-01-02T00:00:00Z",
        ),
    )
    [refusal] = record["rejected"]
    assert refusal["step"] == 3 and " ms from 1970-01-01 00:00 UTC" in refusal["reason"]


def test_a_post_void_at_the_lock_says_why_in_posts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/replay.md: `posts[].void` is null or why the post does not count. A post stamped
    after the deadline was counted in `invalid` and listed in `rejected`, but its `void` was
    null (it was valid when posted), so the HTML record listed it with the counted posts."""
    record = played(
        tmp_path,
        capsys,
        steps(
            'do = "lock"\nat = 2026-01-01T22:00:00+08:00',
            'do = "vote"\nby = "C"\ntarget = "A"\nat = 2026-01-02T21:00:00+08:00',
            'do = "vote"\nby = "D"\ntarget = "A"\nat = 2026-01-02T22:00:00.001+08:00',
            'do = "lock"\nat = 2026-01-02T22:00:00+08:00',
        ),
    )
    day = record["phases"][1]
    assert day["invalid"] == 1 and [r["step"] for r in record["rejected"]] == [3]
    assert [(p["by"], p["void"]) for p in day["posts"]] == [
        ("C", None),
        ("D", "vote.after_deadline"),
    ]


def _seconds(doc: dict[str, Any]) -> float:
    best = float("inf")
    for _ in range(2):
        start = time.perf_counter()
        run(doc)
        best = min(best, time.perf_counter() - start)
    return best


def test_refused_steps_do_not_slow_every_later_day() -> None:
    """The same steps in two orders: 8000 refused powers, then 2000 windows, or the other way
    round. Each day's lock once went through every refusal so far (quadratic): the first order
    took three times as long."""
    refusals = [{"do": "power", "by": "E", "power": "kill", "target": "F"}] * 8000
    locks = [{"do": "lock"}] * 2000
    head = tomllib.loads(HEAD)
    first = _seconds({**head, "steps": refusals + locks})
    last = _seconds({**head, "steps": locks + refusals})
    assert first < 1.5 * last + 0.3, (first, last)


# -- the output ---------------------------------------------------------------------------------


def test_the_help_gives_the_exit_statuses(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["replay", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "Exit status: 0 the record is printed; 2 the file cannot be played" in help_text
    assert "1 the record cannot be written" in help_text


@pytest.mark.parametrize("extra", [(), ("--json",)])
def test_the_record_is_utf8_whatever_the_locale(extra: tuple[str, ...]) -> None:
    """An ASCII locale (`LANG=C` without UTF-8 mode, an old Windows code page) once made the
    Chinese names a UnicodeEncodeError."""
    outputs = []
    for encoding in ("utf-8", "ascii"):
        done = faguan("replay", str(EXAMPLE), *extra, env={"PYTHONIOENCODING": encoding})
        out, err = done.communicate(timeout=120)
        assert done.returncode == 0 and not err, err.decode(errors="replace")
        outputs.append(out)
    assert outputs[0] == outputs[1] and "甲".encode() in outputs[0]


def test_a_reader_that_goes_away_is_no_error(tmp_path: Path) -> None:
    """`faguan replay big.toml --json | head`: once a BrokenPipeError traceback."""
    game = tmp_path / "long.toml"
    game.write_text(steps(*['do = "lock"'] * 2000), "utf-8")  # a record of some 300 kB
    done = faguan("replay", str(game), "--json")
    assert done.stdout is not None and done.stderr is not None
    assert done.stdout.read(10) == b'{\n  "rules'
    done.stdout.close()
    err = done.stderr.read()
    assert done.wait(timeout=120) == 1 and err == b""


def test_a_full_disk_is_one_line(tmp_path: Path) -> None:
    with open("/dev/full", "wb") as full:
        done = faguan("replay", str(EXAMPLE), "--json", stdout=full)
        _, err = done.communicate(timeout=120)
    assert done.returncode == 1
    assert err == b"faguan replay: cannot write the record: No space left on device\n"


def test_the_same_bytes_whatever_the_hash_seed(tmp_path: Path) -> None:
    """A game with a deal and lots (a team's split, a day's tie), in two processes."""
    game = tmp_path / "lots.toml"
    game.write_text(FAIR_GAME, "utf-8")
    outs = set()
    for hash_seed in ("0", "4242"):
        done = faguan("replay", str(game), "--json", env={"PYTHONHASHSEED": hash_seed})
        out, err = done.communicate(timeout=120)
        assert done.returncode == 0, err
        outs.add(out)
    assert len(outs) == 1


# -- docs/fairness.md, by hand --------------------------------------------------------------------

FAIR_GAME = """ruleset = "v2"
seed = "hand-check"
players = ["A", "B", "C", "D", "E", "F", "G", "H"]
[roles]
C = "police"
""" + "".join(
    f"[[steps]]\n{body}\n"
    for body in (
        'do = "power"\nby = "D"\npower = "kill"\ntarget = "E"',  # D and H are dealt the killers
        'do = "power"\nby = "H"\npower = "kill"\npass = true',
        'do = "lock"',
        'do = "vote"\nby = "A"\ntarget = "B"',
        'do = "vote"\nby = "B"\ntarget = "A"',
        'do = "lock"',
    )
)


def _draw_number(seed: str, label: str) -> int:
    """docs/fairness.md step 2, as written there."""
    digest = hmac.new(seed.encode(), label.encode(), hashlib.sha256).digest()
    return int.from_bytes(digest, "big")


def test_the_fairness_instructions_work_by_hand(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The commitment, the deal and every lot of a record, recomputed from docs/fairness.md
    alone (steps 1–4), without the engine."""
    record = played(tmp_path, capsys, FAIR_GAME)
    seed = record["seed"]
    assert hashlib.sha256(seed.encode()).hexdigest() == record["commitment"]
    # step 3: the table's roles for 8 players (docs/rules.md: police×2, killer×2, civilian×4)
    # but C's police, given in [roles]; sorted by role id; Fisher–Yates
    roles = sorted(["police", "killer", "killer", *["civilian"] * 4])
    assert record["deal"] == {"label": "deal|v2|8 players", "dealt": ["A", "B", *"DEFGH"]}
    for i in range(len(roles) - 1, 0, -1):
        j = _draw_number(seed, f"{record['deal']['label']}|{i}") % (i + 1)
        roles[i], roles[j] = roles[j], roles[i]
    assert dict(zip(record["deal"]["dealt"], roles, strict=True)) == {
        name: role for name, role in record["roles"].items() if name != "C"
    }
    # step 4: the killers' split (D chose seat 5, H passed), the day's tie between A and B
    labels = ["team|night 1|kill|pass,5", "lots|day 1|seats 1,2"]
    assert [lot["label"] for lot in record["lots"]] == labels
    for lot in record["lots"]:
        among = lot["among"]
        assert among[_draw_number(seed, lot["label"]) % len(among)] == lot["drawn"]
    kill, tie = record["lots"]
    assert record["phases"][0]["left"] == ([] if kill["drawn"] == "pass" else ["E"])
    assert record["phases"][1]["left"] == [tie["drawn"]]


V1I_01 = ROOT / "tests" / "games" / "v1_inspector" / "v1i_01_veto_last_words_good.toml"
"""Steps 11, 16 and 29 are refused (no last words to give, a veto by night, a second veto)."""


@pytest.mark.parametrize(
    ("extra", "line"),
    [
        ((), "无效操作（第16步）：D: 只能在白天进行此操作。"),
        (("--lang", "en"), "Refused (step 16): D: That can only be done during the day."),
    ],
)
def test_the_text_record_says_refusals_in_its_own_language(
    extra: tuple[str, ...], line: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The forum-style record gave the refusals' reasons in English in its zh-CN text."""
    assert main(["replay", str(V1I_01), *extra]) == 0
    assert line in capsys.readouterr().out.splitlines()


def test_the_json_record_is_the_same_whatever_the_language(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["replay", str(V1I_01), "--json"]) == 0
    english = capsys.readouterr().out
    assert main(["replay", str(V1I_01), "--json", "--lang", "zh-CN"]) == 0
    assert capsys.readouterr().out == english
    assert '"reason": "D: That can only be done during the day."' in english
