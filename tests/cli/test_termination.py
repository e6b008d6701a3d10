"""SIGTERM (`systemctl stop`, `docker stop`) stops `faguan run` as Ctrl-C does: the bot's work is
cancelled and the code after it — the bot's close, then the claim's release — still runs, in a
real process receiving the real signal. Ctrl-C stays an interruption."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = """
import asyncio
from bot.runtime.termination import until_terminated

async def work():
    print("ready", flush=True)
    try:
        await asyncio.sleep(60)
    finally:
        print("work cancelled", flush=True)

async def main():
    try:
        stopped = await until_terminated(work())
        print("stopped", stopped, flush=True)
    finally:
        print("closed", flush=True)  # the bot's close and the claim's release stand here

try:
    asyncio.run(main())
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""


def run_until(sig: signal.Signals) -> tuple[int, list[str]]:
    process = subprocess.Popen(
        [sys.executable, "-c", SCRIPT], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "ready"
    process.send_signal(sig)
    out, _ = process.communicate(timeout=30)
    return process.returncode, out.split("\n")[:-1]


def test_sigterm_cancels_the_work_and_what_follows_it_runs() -> None:
    code, lines = run_until(signal.SIGTERM)
    assert (code, lines) == (0, ["work cancelled", "stopped True", "closed"])


def test_ctrl_c_is_still_an_interruption_that_closes_on_its_way_out() -> None:
    code, lines = run_until(signal.SIGINT)
    assert (code, lines) == (0, ["work cancelled", "closed", "interrupted"])
