"""`faguan bench` runs end to end at tiny sizes and prints its table (no timing is asserted)."""

from __future__ import annotations

import json

import pytest

from bot.cli import main

TINY = [
    "--backends", "sqlite", "--posts", "12", "--games", "2", "--raw-rows", "8",
    "--restart-games", "3", "--timers", "6", "--spread", "0.3", "--engine-seconds", "0.05",
]  # fmt: skip
SECTIONS = ("ingest", "deadlines", "restart", "discord", "engine")


def test_bench_prints_one_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", *TINY]) == 0
    out = capsys.readouterr().out
    print(out)  # the table, for whoever runs the tests with -s
    assert out.startswith("Machine: ")
    table = [line for line in out.splitlines() if line.startswith("| ")]
    assert table[0].startswith("| section ")
    for section in SECTIONS:
        assert any(line.startswith(f"| {section} ") for line in table), section


def test_bench_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", *TINY, "--only", "engine,ingest", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert {"nproc", "cpu", "python", "sqlite"} <= set(report["machine"])
    sections = {row["section"] for row in report["rows"]}
    assert sections == {"ingest", "engine"}
    ingest = next(row for row in report["rows"] if row["section"] == "ingest")
    assert ingest["values"]["posts"] > 0 and ingest["ratio"] is not None
