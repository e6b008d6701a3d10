"""Non-interference in time: a person's answer to their own command does not wait for what the
command does in private. In basic (no role shown at death) the sniper's last-act shot kills a
seat; a police seat then leaves the police's thread (a private request to Discord), a civilian
seat leaves none. Two games, the target's role swapped at the deal: the shooter's answer must
come after the same requests in both.

Failed before the fix: the answer came after the thread's request in the police game only, so
its delay told the shooter whether the shot seat was on a team."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nikit import dealing
from rbkit import EnvClock  # (puts tests/discord on the path)

# isort: split
from gamebot import BotEnv, Driver, build_table, by_role, make_bot

SEED = "last-act-timing"


async def shoot(tmp: Path, pair: tuple[int, int] | None) -> tuple[tuple[int, int], list[str]]:
    """The sniper voted out on day 1 shoots the pair's first seat (police in game A, civilian in
    game B): the pair, and the kinds of Discord writes made before the shooter's answer."""
    clock = EnvClock()
    env = BotEnv(make_bot(tmp / "g.db", clock, seed=SEED))
    clock.bind(env)
    table = build_table(env, 10)
    await env.start()
    try:
        deals: list[Any] = []
        with dealing(deals, pair):
            d = Driver(table, "basic", options="sniper=yes")
            roles = await d.start()
        if pair is None:
            pair = (by_role(roles, "police")[0], by_role(roles, "civilian")[0])
        sniper = by_role(roles, "sniper")[0]
        await d.quiet_night()
        await d.vote_out(sniper)  # the shot opens
        since = len(env.http_requests)
        await d.member(sniper).slash(table.channel, "act", power="shoot", target=pair[0])
        await env.settle()
        before: list[str] = []
        for request in list(env.http_requests)[since:]:
            if request.path.startswith(("/interactions", "/webhooks")):
                return pair, before  # the answer
            if request.method != "GET":
                before.append("thread" if "thread-members" in request.path else "post")
        raise AssertionError("the shooter got no answer")
    finally:
        await env.shutdown()


async def test_the_shooters_answer_comes_after_the_same_work_whatever_the_target_was(
    tmp_path: Path,
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    pair, police_shot = await shoot(tmp_path / "a", None)
    _, civilian_shot = await shoot(tmp_path / "b", pair)
    assert police_shot == civilian_shot
    assert "thread" not in police_shot
