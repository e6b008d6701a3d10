"""Fuzzing the replay file reader (hypothesis): `bot.replay.run(data)` returns a record or raises
`ReplayFileError` naming the step or key; `faguan replay FILE` exits 2 with that message.
Never another exception, and the parsed document is never modified.

Inputs: arbitrary TOML documents; structurally plausible replay files (every `do` and key, with
wrong types, unknown names, bad and extreme times, non-finite numbers); and mutations of the
recorded games in tests/games."""

from __future__ import annotations

import contextlib
import copy
import datetime as dt
import functools
import io
import json
import random
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rbkit import ROOT, examples, toml_document

from bot.cli import main as faguan
from bot.records.forum_text import forum_text
from bot.records.replay import TOP_KEYS, ReplayFileError, run
from engine.model import Camp, Power
from engine.rulesets import RULESETS

GAMES = sorted((ROOT / "tests" / "games").rglob("*.toml"))


def _corpus() -> list[dict[str, Any]]:
    """The recorded games (skipping any file that is not a whole game, e.g. being written)."""
    docs = []
    for path in GAMES:
        try:
            doc = tomllib.loads(path.read_text("utf-8"))
        except (OSError, ValueError):
            continue
        steps_, players = doc.get("steps"), doc.get("players")
        whole = isinstance(steps_, list) and steps_ and all(isinstance(s, dict) for s in steps_)
        if whole and isinstance(players, list) and all(isinstance(p, str) for p in players):
            docs.append(doc)
    return docs


CORPUS = _corpus()

# -- values --------------------------------------------------------------------------------------

offsets = st.integers(-23 * 60 - 59, 23 * 60 + 59).map(
    lambda m: dt.timezone(dt.timedelta(minutes=m))
)
naive_times = st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 12, 31))
aware_times = st.datetimes(
    min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 12, 31), timezones=offsets
)
plausible_times = st.datetimes(
    min_value=dt.datetime(2026, 1, 1), max_value=dt.datetime(2026, 1, 9)
) | st.datetimes(
    min_value=dt.datetime(2026, 1, 1), max_value=dt.datetime(2026, 1, 9), timezones=offsets
)
texts = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
scalars = st.one_of(
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(),
    texts,
    naive_times,
    aware_times,
    st.dates(),
    st.times(),
)
toml_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=12,
)
iso_texts = st.one_of(
    plausible_times.map(lambda t: t.isoformat()),
    naive_times.map(lambda t: t.isoformat()),
    aware_times.map(lambda t: t.isoformat()),
    st.sampled_from(["", "22:00", "2026-13-01T00:00", "2026-01-01T25:99", "yesterday", "T"]),
)
extreme_times = st.sampled_from(
    [
        dt.datetime(1, 1, 1),
        dt.datetime(9999, 12, 31, 23, 59, 59, 999999),
        dt.datetime(1, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=23, minutes=59))),
        dt.datetime(9999, 12, 31, 23, 59, tzinfo=dt.timezone(dt.timedelta(hours=-23, minutes=-59))),
        dt.date(1, 1, 1),
        "0001-01-01T00:00:00",
        "9999-12-31T23:59:59-12:00",
    ]
)
any_time = st.one_of(
    extreme_times, plausible_times, naive_times, aware_times, st.dates(), iso_texts, toml_values
)

KEYS = {
    "power": ("by", "power", "target", "pass", "at"),
    "vote": ("by", "target", "id", "at"),
    "lock": ("at",),
    "last_words": ("by", "text"),
    "choose": ("by", "target", "at"),
    "mod": ("command", "by", "minutes", "at", "target", "player", "post", "reason", "winner"),
}
MOD_COMMANDS = (
    "extend", "shorten", "set_deadline", "pause", "resume", "advance", "replace", "modkill",
    "void", "end",
)  # fmt: skip


ODD_NAMES = st.sampled_from(["ghost", "", "abstain", "P1"]) | texts
WRONG: dict[str, st.SearchStrategy[Any]] = {
    "by": ODD_NAMES | toml_values,
    "target": ODD_NAMES | toml_values,
    "player": ODD_NAMES | toml_values,
    "power": st.sampled_from(["KILL", "fly", ""]) | toml_values,
    "at": any_time,
    "command": st.sampled_from(["explode", "EXTEND", ""]) | toml_values,
    "minutes": st.one_of(
        st.sampled_from([float("inf"), float("-inf"), float("nan"), 1e308, -1e308, 1e-300]),
        st.integers(-(2**63), 2**63 - 1),
        st.floats(),
        toml_values,
    ),
    "winner": st.sampled_from(["nobody", "", "GOOD"]) | toml_values,
}
MOD_KEYS = {
    "extend": ("minutes",), "shorten": ("minutes",), "set_deadline": ("at",), "pause": ("at",),
    "resume": ("at",), "advance": ("at",), "replace": ("target", "player"), "modkill": ("target",),
    "void": ("post", "reason"), "end": ("winner",),
}  # fmt: skip


@functools.cache
def plausible_values(names: tuple[str, ...]) -> dict[str, st.SearchStrategy[Any]]:
    """Values that make sense for each step key in a game with these players."""
    who = st.sampled_from(names) if names else texts
    return {
        "by": who,
        "target": who,
        "player": st.sampled_from(["sub1", "sub2", *names[:1]]),
        "power": st.sampled_from([p.value for p in Power]),
        "pass": st.booleans(),
        "at": plausible_times,
        "id": st.integers(0, 50).map(str),
        "text": texts,
        "command": st.sampled_from(MOD_COMMANDS),
        "minutes": st.integers(-600, 600),
        "post": st.integers(0, 50).map(str),
        "reason": texts,
        "winner": st.sampled_from([c.value for c in Camp]),
    }


@st.composite
def key_value(draw: st.DrawFn, key: str, names: list[str], junk: int = 3) -> Any:
    """A value for one step key: plausible, or (one time in `junk` + 1) wrong or anything."""
    if draw(st.integers(0, junk)) < junk:
        return draw(plausible_values(tuple(names))[key])
    return draw(WRONG.get(key, toml_values))


@st.composite
def steps(
    draw: st.DrawFn, names: list[str], junk: int = 3, do: str | None = None
) -> dict[str, Any]:
    known = st.sampled_from(list(KEYS)) if do is None else st.just(do)
    do = draw(known if draw(st.integers(0, junk)) < junk else st.just("explode") | toml_values)
    step: dict[str, Any] = {"do": do}
    for key in KEYS.get(do, ()) if isinstance(do, str) else ():
        if key == "at" and do != "mod" and draw(st.booleans()):
            continue  # `at` is optional
        if draw(st.integers(0, 3 * junk)) < 3 * junk:  # sometimes a key is missing
            step[key] = draw(key_value(key, names, junk))
    if do == "power" and step.get("pass"):
        step.pop("target", None)
    if do == "vote" and draw(st.integers(0, 5)) == 0:
        step["target"] = "abstain"
    if draw(st.integers(0, 3 * junk)) == 3 * junk:
        step[draw(texts)] = draw(toml_values)  # an unknown key
    return step


def random_script(rnd: random.Random, names: list[str]) -> list[dict[str, Any]]:
    """A plausible game script (night powers, lock, votes, overrides, lock), built quickly."""
    base = dt.datetime(2026, 1, 1, 20, 0)

    def at() -> dict[str, Any]:
        return (
            {"at": base + dt.timedelta(minutes=rnd.randint(0, 9000))} if rnd.random() < 0.4 else {}
        )

    def mod() -> dict[str, Any]:
        command = rnd.choice(MOD_COMMANDS)
        step: dict[str, Any] = {"do": "mod", "command": command, "by": "mod"}
        if command in ("extend", "shorten"):
            step["minutes"] = rnd.choice([rnd.randint(1, 600), rnd.random() * 90])
        elif command in ("set_deadline", "pause", "resume"):
            step["at"] = base + dt.timedelta(minutes=rnd.randint(0, 9000))
        elif command in ("replace", "modkill"):
            step["target"] = rnd.choice(names)
            step["player"] = rnd.choice(["sub1", "sub2", names[0]])
        elif command == "void":
            step["post"] = str(rnd.randint(0, 60))
            step["reason"] = "r"
        elif command == "end":
            step["winner"] = rnd.choice([c.value for c in Camp])
        return step

    script: list[dict[str, Any]] = []
    for _ in range(rnd.randint(1, 8)):
        for _ in range(rnd.randint(0, 4)):
            step = {"do": "power", "by": rnd.choice(names), "power": rnd.choice(list(Power)).value}
            if rnd.random() < 0.2:
                step["pass"] = True
            else:
                step["target"] = rnd.choice(names)
            script.append({**step, **at()})
        script.append({"do": "lock"})
        for _ in range(rnd.randint(0, 12)):
            target = "abstain" if rnd.random() < 0.15 else rnd.choice(names)
            script.append({"do": "vote", "by": rnd.choice(names), "target": target, **at()})
        for _ in range(rnd.randint(0, 2)):
            kind = rnd.choice(["last_words", "choose", "mod", "mod"])
            if kind == "mod":
                script.append(mod())
            elif kind == "choose":
                script.append(
                    {"do": "choose", "by": rnd.choice(names), "target": rnd.choice(names)}
                )
            else:
                script.append({"do": "last_words", "by": rnd.choice(names), "text": "遗言"})
        script.append({"do": "lock", **at()})
    return script


@st.composite
def plausible_files(draw: st.DrawFn) -> dict[str, Any]:
    odd = draw(st.integers(0, 9)) == 0  # one file in ten is wrong at the top level
    ruleset = draw(texts if odd and draw(st.booleans()) else st.sampled_from(sorted(RULESETS)))
    rules = RULESETS.get(ruleset)
    if rules is not None and not (odd and draw(st.booleans())):
        n = draw(st.integers(rules.min_players, rules.max_players))
    else:
        n = draw(st.integers(0, 20))
    names = [f"p{i}" for i in range(1, n + 1)]
    doc: dict[str, Any] = {"ruleset": ruleset, "seed": draw(texts), "players": names}
    if draw(st.booleans()):
        doc["options"] = {"tie": draw(st.sampled_from(["lots", "revote", "none", "victim_choice"]))}
        if draw(st.booleans()):
            doc["options"]["warmup"] = draw(st.sampled_from([0, 1, 30, 600]))
    if odd and draw(st.booleans()):
        doc["options"] = draw(
            st.dictionaries(
                st.sampled_from(["tie", "self_vote", "composition", "mine_side", "warmup", "x"]),
                st.sampled_from(["lots", "revote", "none", "victim_choice", "good", "killers"])
                | toml_values,
                max_size=3,
            )
        )
    if odd and draw(st.booleans()):
        doc["roles"] = draw(
            st.dictionaries(
                st.sampled_from([*names, "ghost"]) if names else texts,
                st.sampled_from(["killer", "police", "civilian", "doctor", "wizard"]) | toml_values,
                max_size=3,
            )
        )
    script = random_script(draw(st.randoms(use_true_random=False)), names or ["nobody"])
    doc["steps"] = script
    inject_faults(draw, doc, names)
    if odd and draw(st.booleans()):
        doc[draw(st.sampled_from(sorted(TOP_KEYS)) | texts)] = draw(toml_values)
    return doc


def inject_faults(draw: st.DrawFn, doc: dict[str, Any], names: list[str]) -> dict[str, Any]:
    """Replace, remove or add a few step values (or whole steps), anywhere in the file."""
    known = {k for keys in KEYS.values() for k in keys}
    for _ in range(draw(st.integers(1, 3))):
        if doc["steps"] and draw(st.integers(0, 3)) > 0:
            step = draw(st.sampled_from(doc["steps"]))
            keys = KEYS.get(step["do"], ()) if isinstance(step.get("do"), str) else ()
            key = draw(st.sampled_from(sorted({*step, *keys, "do"})))
            if draw(st.integers(0, 4)) == 0:
                step.pop(key, None)
            else:
                step[key] = draw(key_value(key, names, 0) if key in known else toml_values)
        else:
            index = draw(st.integers(0, len(doc["steps"])))
            doc["steps"].insert(index, draw(steps(names, 1)))
    return doc


@st.composite
def mutated_games(draw: st.DrawFn) -> dict[str, Any]:
    """A recorded game with a few of its values replaced, removed or added."""
    doc = copy.deepcopy(draw(st.sampled_from(CORPUS)))
    names = [p for p in doc.get("players", []) if isinstance(p, str)]
    inject_faults(draw, doc, names)
    if draw(st.integers(0, 9)) == 0:
        doc[draw(st.sampled_from(sorted(TOP_KEYS)))] = draw(toml_values)
    return doc


# -- the contract --------------------------------------------------------------------------------

STEP = re.compile(r"\bstep (\d+)\b")
WORDS = ("ruleset", "seed", "player", "option", "role", "step", "top-level", "toml")


def check_run(data: dict[str, Any]) -> str | None:
    """Run a parsed file; return the error message (None for a record). Asserts the contract."""
    before = copy.deepcopy(data)
    try:
        replay = run(data)
    except ReplayFileError as exc:
        message = str(exc)
        found = STEP.search(message)
        if found:
            steps_ = data.get("steps")
            assert isinstance(steps_, list) and 1 <= int(found.group(1)) <= len(steps_), message
        else:
            assert any(w in message.lower() for w in WORDS), f"names no key or step: {message}"
        result: str | None = message
    else:
        assert isinstance(replay.record, dict)
        json.dumps(replay.record, ensure_ascii=False)  # the --json contract
        forum_text(replay.record)
        forum_text(replay.record, "en")
        result = None
    assert data == before, "the reader changed its input"
    return result


@settings(max_examples=examples(60), deadline=None)
@given(st.dictionaries(st.sampled_from(sorted(TOP_KEYS)) | texts, toml_values, max_size=6))
def test_arbitrary_documents(doc: dict[str, Any]) -> None:
    check_run(doc)


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plausible_files())
def test_plausible_files_with_wrong_values(doc: dict[str, Any]) -> None:
    check_run(doc)


@settings(max_examples=examples(50), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_games())
def test_mutated_recorded_games(doc: dict[str, Any]) -> None:
    check_run(doc)


@st.composite
def one_wrong_value(draw: st.DrawFn) -> dict[str, Any]:
    """A recorded game with one step (of any kind, anywhere) holding one wrong value."""
    doc = copy.deepcopy(draw(st.sampled_from(CORPUS)))
    names = list(doc["players"])
    do = draw(st.sampled_from(["mod", *sorted(KEYS)]))
    step = draw(steps(names, 10**6, do))
    keys = KEYS[do]
    if do == "mod":
        step["command"] = draw(st.sampled_from(MOD_COMMANDS))
        keys = ("command", "by", *MOD_KEYS[step["command"]])
    key = draw(st.sampled_from([*keys, "note"]))
    step[key] = draw(WRONG.get(key, toml_values))
    doc["steps"].insert(draw(st.integers(0, len(doc["steps"]))), step)
    return doc


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(one_wrong_value())
def test_one_wrong_value_in_any_key_of_any_step(doc: dict[str, Any]) -> None:
    check_run(doc)


def _cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = faguan(list(args))
    return code, out.getvalue(), err.getvalue()


@settings(
    max_examples=examples(25),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(plausible_files() | mutated_games())
def test_faguan_replay_exits_cleanly(tmp_path: Path, doc: dict[str, Any]) -> None:
    path = tmp_path / "game.toml"
    path.write_text(toml_document(doc), "utf-8")
    expected = check_run(tomllib.loads(path.read_text("utf-8")))
    for extra in ((), ("--json",)):
        code, out, err = _cli("replay", str(path), *extra)
        if expected is None:
            assert code == 0 and out and not err
            if extra:
                json.loads(out)
        else:
            assert code == 2 and not out
            assert err.strip() == f"faguan replay: {expected}"


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(b"\xff\xfe not utf-8", id="not-utf8"),
        pytest.param(b'ruleset = "v2"\nruleset = "v3"\n', id="duplicate-key"),
        pytest.param(b"steps = [[", id="truncated"),
        pytest.param(b"", id="empty"),
        pytest.param(b"\x00", id="nul"),
    ],
)
def test_unreadable_files(tmp_path: Path, text: bytes) -> None:
    path = tmp_path / "bad.toml"
    path.write_bytes(text)
    code, out, err = _cli("replay", str(path))
    assert code == 2 and not out and err.startswith("faguan replay: ")


def test_a_missing_file_and_a_directory(tmp_path: Path) -> None:
    for path in (tmp_path / "missing.toml", tmp_path):
        code, out, err = _cli("replay", str(path))
        assert code == 2 and not out and str(path) in err


BASE = {"ruleset": "v2", "seed": "s", "players": [f"p{i}" for i in range(1, 10)]}


@pytest.mark.parametrize(
    ("step", "named"),
    [
        pytest.param(
            {"do": "mod", "command": "extend", "minutes": float("inf")}, "minutes", id="minutes-inf"
        ),
        pytest.param(
            {"do": "mod", "command": "shorten", "minutes": float("nan")},
            "minutes",
            id="minutes-nan",
        ),
        pytest.param({"do": "lock", "at": dt.datetime(1, 1, 1)}, "at", id="year-1"),
        pytest.param({"do": "lock", "at": "9999-12-31T23:59:59-12:00"}, "at", id="year-9999-west"),
        pytest.param(
            {"do": "mod", "command": "pause", "at": "0001-01-01T00:00:00+05:00"},
            "at",
            id="year-1-east",
        ),
        pytest.param(
            {"do": "mod", "command": "set_deadline", "at": dt.time(22, 0)}, "at", id="a-time-only"
        ),
    ],
)
def test_found_by_fuzzing(step: dict[str, Any], named: str) -> None:
    """Each of these once escaped as OverflowError or ValueError."""
    with pytest.raises(ReplayFileError) as refused:
        run({**BASE, "steps": [{"do": "lock"}, step]})
    assert str(refused.value).startswith("step 2") and named in str(refused.value)


def test_mod_step_values_of_every_toml_type_reach_the_json_record() -> None:
    """A mod step's extra values (a date, a time) once made `faguan replay --json` crash."""
    doc = {
        **BASE,
        "steps": [
            {"do": "mod", "command": "end", "winner": "good", "note": dt.date(2026, 1, 1),
             "when": [dt.time(1, 2)], "at": dt.datetime(2026, 1, 1, 12)},
        ],
    }  # fmt: skip
    json.dumps(run(doc).record)
