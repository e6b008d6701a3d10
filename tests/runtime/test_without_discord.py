"""The runtime's own tests need neither Discord nor simcord: they pass with both unimportable."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

BLOCKED_PYTEST = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("discord", "simcord"):
            raise ModuleNotFoundError(f"{name} is blocked: the runtime runs without it", name=name)
        return None
sys.meta_path.insert(0, Block())
import pytest
sys.exit(pytest.main(sys.argv[1:]))
"""


def test_the_runtime_tests_pass_with_discord_and_simcord_blocked() -> None:
    run = subprocess.run(
        [sys.executable, "-c", BLOCKED_PYTEST, "-q", "-p", "no:cacheprovider", "-p", "no:simcord",
         str(HERE / "test_runtime.py"), str(HERE / "test_timing.py")],
        capture_output=True, text=True, timeout=300, cwd=HERE.parents[1], check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "blocked" not in run.stdout + run.stderr
