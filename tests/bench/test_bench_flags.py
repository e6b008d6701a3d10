"""`faguan bench`'s numeric flags are checked before any section runs: `--games x` was a
traceback and `--games 0` a ZeroDivisionError, found only after minutes of the sections before
the one that read the flag."""

from __future__ import annotations

import argparse
from typing import Any, NoReturn

import pytest

import bench.cli
from bot.cli import main


@pytest.fixture(autouse=True)
def no_section_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """A section that starts fails the test: a refusal comes before any."""

    async def run(*_args: Any, **_kwargs: Any) -> NoReturn:
        raise AssertionError("a bench section ran before the flags were checked")

    monkeypatch.setattr(bench.cli, "run", run)


@pytest.mark.parametrize(
    ("flags", "line"),
    [
        (["--games", "x"], "--games: not whole numbers: x"),
        (["--games", "1,two"], "--games: not whole numbers: 1,two"),
        (["--games", "0"], "--games: counts of 1 or more, comma-separated: 0"),
        (["--games", "10,-1"], "--games: counts of 1 or more, comma-separated: 10,-1"),
        (["--games", ","], "--games: counts of 1 or more, comma-separated: ,"),
        (["--posts", "0"], "--posts: a count of 1 or more, not 0"),
        (["--raw-rows", "-5"], "--raw-rows: a count of 1 or more, not -5"),
        (["--restart-games", "0"], "--restart-games: a count of 1 or more, not 0"),
        (["--shard-games", "0"], "--shard-games: a count of 1 or more, not 0"),
        (["--day-posts", "0"], "--day-posts: a count of 1 or more, not 0"),
        (["--night-submissions", "0"], "--night-submissions: a count of 1 or more, not 0"),
        (["--timers", "0"], "--timers: a count of 1 or more, not 0"),
        (["--spread", "inf"], "--spread: seconds above 0, comma-separated: inf"),
        (["--spread", "nan"], "--spread: seconds above 0, comma-separated: nan"),
        (["--engine-seconds", "0"], "--engine-seconds: seconds above 0, not 0.0"),
        (["--engine-seconds", "nan"], "--engine-seconds: seconds above 0, not nan"),
    ],
)
def test_a_number_that_cannot_run_is_one_line_and_status_2(
    capsys: pytest.CaptureFixture[str], flags: list[str], line: str
) -> None:
    # the default sections: the flag is refused before the first of them, not when it is read
    assert main(["bench", "--backends", "sqlite", *flags]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"faguan bench: {line}\n"


def test_a_count_that_is_not_a_number_is_argparses_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["bench", "--posts", "many"])
    assert exited.value.code == 2
    assert "argument --posts: invalid int value: 'many'" in capsys.readouterr().err


def test_the_defaults_and_the_smallest_sizes_are_not_refused() -> None:
    parser = argparse.ArgumentParser()
    bench.cli.add_arguments(parser)
    smallest = ["--games", "1", "--spread", "0.1", "--engine-seconds", "0.01"]
    for name in bench.cli.COUNTS:
        smallest += [f"--{name.replace('_', '-')}", "1"]
    others = ",".join(s for s in bench.cli.SECTIONS if s != "discord")  # simcord may be absent
    for argv in ([], smallest):
        assert bench.cli.refusal(parser.parse_args([*argv, "--only", others])) is None
