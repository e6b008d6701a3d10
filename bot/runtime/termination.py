"""SIGTERM as a clean stop: `systemctl stop` and `docker stop` send it, and Python's default for
it ends the process on the spot, like a crash (safe — the store survives one — but the deliveries
under way are cut and their done marks lost, so the next owner performs those effects again under
the same keys). Here it ends the bot's work as Ctrl-C does: the work is cancelled and the caller's
`async with` closes the bot (deliveries finished, done marks written) before the shard's claim is
released.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Awaitable


async def until_terminated(work: Awaitable[None]) -> bool:
    """Run `work` until it ends, or until the process gets SIGTERM: then cancel it and return
    True (a stop asked for, not an error). Where no signal handler can be set (not the main
    thread, or no Unix signals), `work` simply runs."""
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(work)
    terminated = False

    def terminate() -> None:
        nonlocal terminated
        terminated = True
        task.cancel()

    with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
        loop.add_signal_handler(signal.SIGTERM, terminate)
    try:
        await task
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if not terminated or (current is not None and current.cancelling()):
            raise  # cancelled from outside (Ctrl-C): not ours to swallow
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.remove_signal_handler(signal.SIGTERM)
    return terminated
