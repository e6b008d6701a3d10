"""Coverage-guided fuzzing with atheris (libFuzzer) of every reader of outside input, for a
bounded number of inputs grown from the project's own files: the recorded games for the replay
reader, their expected records for `faguan verify`, config.example.toml for the config loader, and
vote posts. The targets and what each must hold are in tests/fuzz/atheris_targets.py; a crash,
a broken invariant or a hang fails the run with libFuzzer's report (and a reproducer file).

Each run is a separate process (libFuzzer exits when done). `-seed=1` makes a run repeatable; for
a longer search run the script by hand with `-max_total_time=…` (its docstring says how)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from rbkit import ROOT, examples

TARGETS = ROOT / "tests" / "fuzz" / "atheris_targets.py"
GAMES = ROOT / "tests" / "games"
VOTE_POSTS = [
    "投 3",
    "投玩家1",
    "弃权",
    "<@1300000000000000001> 投他",
    "我投12号",
    "投三号 改投 Bob",
    "vote 4",
]

RUNS = {"vote_post": 20_000, "replay": 20_000, "verify": 100_000, "config": 50_000}
"""Inputs per target: each a few seconds here (the targets run 4k–60k inputs a second)."""


def seed_corpus(target: str, into: Path) -> None:
    into.mkdir()
    if target == "replay":
        for path in sorted(GAMES.rglob("*.toml")):
            shutil.copy(path, into / f"{path.parent.name}-{path.name}")
    elif target == "verify":
        for path in sorted(GAMES.rglob("*.expected.json")):
            shutil.copy(path, into / f"{path.parent.name}-{path.name}")
    elif target == "config":
        shutil.copy(ROOT / "config.example.toml", into / "config.example.toml")
    else:
        for i, post in enumerate(VOTE_POSTS):
            (into / f"post{i}").write_text(post, "utf-8")


@pytest.mark.parametrize("target", sorted(RUNS))
def test_atheris_finds_no_crash(target: str, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    seed_corpus(target, corpus)
    runs = examples(RUNS[target])
    done = subprocess.run(
        [
            sys.executable, str(TARGETS), target,
            f"-runs={runs}", "-seed=1", "-timeout=10", "-rss_limit_mb=2048",
            f"-artifact_prefix={tmp_path}/", str(corpus),
        ],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    report = done.stderr[-6000:]
    assert done.returncode == 0, report
    assert f"Done {runs} runs" in done.stderr, report
    assert not list(tmp_path.glob("crash-*")) and not list(tmp_path.glob("timeout-*")), report
