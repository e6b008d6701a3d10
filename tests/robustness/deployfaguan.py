"""The `faguan` command of `test_rb_deploy.py`: `bot.cli.main` itself, with Discord's gateway
replaced by a simcord world (no servers: the process's games are in the database, and their
servers are not on this simulated Discord).

Run as `python deployfaguan.py run --config FILE` where the deployment doc says `faguan run
--config FILE`: the settings, the shard claim, the migration, the bot, its recovery, its logs and
its /metrics endpoint are the real `faguan run`'s; only `connect` (log in and serve) differs. It
serves until it is signalled (SIGTERM, as `systemctl stop` does).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script: the project

from simcord import Env

from bot.cli import main
from bot.discord.client import FaguanBot


async def simulated_discord(bot: FaguanBot, token: str) -> None:
    """Connect `bot` to an empty simcord world instead of Discord's gateway, and serve."""
    env = Env(bot, check_errors=False)
    await env.start()
    await asyncio.Event().wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], connect=simulated_discord))
