"""`faguan bench` runs end to end at tiny sizes and prints its table (no timing is asserted)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.engine_speed import GAMES_DIR
from bench.ingest import FLOOR_GAMES
from bot.cli import main

ROOT = Path(__file__).resolve().parents[2]
RULESET_DIRS = sorted(p.name for p in (ROOT / "tests" / "games").iterdir() if p.is_dir())

TINY = [
    "--backends", "sqlite", "--posts", "12", "--games", "1,2", "--raw-rows", "8",
    "--restart-games", "3", "--timers", "6", "--day-posts", "30", "--night-submissions", "30",
    "--spread", "0.3", "--engine-seconds", "0.05",
]  # fmt: skip
SECTIONS = ("ingest", "deadlines", "restart", "day", "discord", "engine")


def test_bench_prints_one_table(capsys: pytest.CaptureFixture[str]) -> None:
    # 100 games at once: the size from which the context baselines run too (FLOOR_GAMES), and
    # the later sections then rebuild the games they wrote into
    assert main(["bench", *TINY, "--games", f"1,2,{FLOOR_GAMES}"]) == 0
    out = capsys.readouterr().out
    print(out)  # the table, for whoever runs the tests with -s
    assert out.startswith("Machine: ")
    table = [line for line in out.splitlines() if line.startswith("| ")]
    assert table[0].startswith("| section ")
    for section in SECTIONS:
        assert any(line.startswith(f"| {section} ") for line in table), section
    assert any("the Python floor" in line for line in table)
    assert any("the bot's rows by C sqlite3" in line for line in table)
    assert any("the engine floor" in line for line in table)
    assert any("one night of 30 power submissions" in line for line in table)  # in `day`


def test_bench_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", *TINY, "--only", "engine,ingest", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert {"nproc", "cpu", "python", "sqlite"} <= set(report["machine"])
    sections = {row["section"] for row in report["rows"]}
    assert sections == {"ingest", "engine"}
    ingest = next(row for row in report["rows"] if row["section"] == "ingest")
    assert ingest["values"]["posts"] > 0 and ingest["ratio"] is not None


def test_an_unknown_section_or_backend_is_one_line_naming_the_known_ones(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["bench", "--only", "engine,bogus"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        "faguan bench: --only: unknown bogus (known: ingest, restart, deadlines, day, shards, discord, engine)\n"
    )
    assert main(["bench", "--backends", "mysql", "--only", "ingest"]) == 2
    assert capsys.readouterr().err == (
        "faguan bench: --backends: unknown mysql (known: sqlite, postgresql)\n"
    )
    assert main(["bench", "--spread", "15,soon", "--only", "deadlines"]) == 2
    assert capsys.readouterr().err == "faguan bench: --spread: not numbers: 15,soon\n"
    assert main(["bench", "--spread", "15,0", "--only", "deadlines"]) == 2
    assert capsys.readouterr().err == (
        "faguan bench: --spread: seconds above 0, comma-separated: 15,0\n"
    )


def _without_simcord(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`faguan bench` in a fresh interpreter where simcord cannot be imported (the runtime install)."""
    code = (
        "import sys; sys.modules['simcord'] = None; "
        "from bot.cli import main; sys.exit(main(sys.argv[1:]))"
    )
    return subprocess.run(
        [sys.executable, "-c", code, "bench", *args],
        capture_output=True, text=True, timeout=300, cwd=cwd, check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip


def test_without_the_bench_extra_the_discord_section_names_it_and_the_rest_runs(
    tmp_path: Path,
) -> None:
    refused = _without_simcord(tmp_path, *TINY)
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr == (
        "faguan bench: the discord section needs simcord, the faguan[bench] extra: "
        "pip install -c constraints.txt -e '.[bench]' "
        "(or leave it out: --only ingest,restart,deadlines,day,shards,engine)\n"
    )
    ran = _without_simcord(tmp_path, *TINY, "--only", "engine", "--json")
    assert ran.returncode == 0, ran.stderr
    rows = json.loads(ran.stdout)["rows"]
    replayed = next(row for row in rows if row["what"].startswith("recorded games replayed"))
    assert replayed["values"]["games"] == len(RULESET_DIRS)  # bench's own copies, not tests/games


def test_the_benchmark_games_are_copies_of_recorded_games_one_per_ruleset() -> None:
    copies = sorted(GAMES_DIR.glob("*/*.toml"))
    assert sorted(path.parent.name for path in copies) == RULESET_DIRS
    for copy in copies:
        original = ROOT / "tests" / "games" / copy.parent.name / copy.name
        assert copy.read_bytes() == original.read_bytes(), (
            f"{copy} differs from {original}: copy it again"
        )
