"""No private work between two public posts of one input: how long it takes depends on roles.

A night's police check is DMed, a dead killer leaves the team thread — requests that only some
roles cause. Were they made between the 看表帖 and the next window's post, the time between those
public posts would tell who was checked or who was a killer. So the bot makes every request of
an input's public effects first (posts, the channels' overwrites, the players' role) and only
then the private ones (DMs, team threads). Failed on the code before (the check DM and the
thread removal came before the next window's post)."""

from __future__ import annotations

from pathlib import Path

from envclock import EnvClock
from gamebot import Driver, Table, by_role, running_table

SEED = "private-after-public"


def private_places(t: Table, team_threads: list[int]) -> set[int]:
    """Channel ids only some players see: DMs and the team threads."""
    dms = {m.user.dm_channel.id for m in t.players if m.user.dm_channel is not None}
    return dms | set(team_threads)


def sorted_requests(t: Table, since: int, private: set[int]) -> list[tuple[str, str]]:
    """('public' | 'private', method path) of the bot's writes since request `since`."""
    out: list[tuple[str, str]] = []
    for entry in list(t.env.http_requests)[since:]:
        if entry.method == "GET":
            continue  # reads change nothing anyone sees
        ids = {int(part) for part in entry.path.split("/") if part.isdigit()}
        kind = "private" if ids & private or entry.path.startswith("/users/@me") else "public"
        out.append((kind, f"{entry.method} {entry.path}"))
    return out


def assert_public_first(requests: list[tuple[str, str]]) -> None:
    kinds = [kind for kind, _ in requests]
    assert "public" in kinds and "private" in kinds, requests
    last_public = max(i for i, kind in enumerate(kinds) if kind == "public")
    first_private = kinds.index("private")
    assert last_public < first_private, "\n".join(f"{k:8} {r}" for k, r in requests)


async def test_a_check_and_a_killer_leaving_come_after_every_public_post(tmp_path: Path) -> None:
    async with running_table(tmp_path / "g.db", 12, EnvClock(), SEED, "text") as t:
        d = Driver(t, "mifei")
        roles = await d.start()
        k1, k2 = by_role(roles, "killer")
        p1, p2, p3 = by_role(roles, "police")
        c1 = by_role(roles, "civilian")[0]
        await d.power_by_menu(k1, "kill", c1)
        await d.power_by_menu(p1, "check", k1)
        info = await t.bot.runtime.service.info(d.game_id)
        threads = [int(v) for k, v in info.channels.items() if k.startswith("thread_")]
        assert threads

        since = len(t.env.http_requests)
        await d.lock()  # night 1: the 看表帖, the results, day 1 opens; the check DMed
        night = sorted_requests(t, since, private_places(t, threads))
        assert_public_first(night)
        posts = [r for k, r in night if k == "public" and r.endswith("/messages")]
        assert len(posts) >= 3, night  # the 看表帖, the results, the window

        for seat in (p1, p2, p3, k2):
            await d.post_vote(seat, f"投 {k1}号", k1)
        since = len(t.env.http_requests)
        await d.lock()  # day 1: the killer is voted out and leaves the team thread
        state = await t.bot.runtime.service.state(d.game_id)
        assert not state.seat(k1).alive
        day = sorted_requests(t, since, private_places(t, threads))
        assert any("thread-members" in r for k, r in day if k == "private"), day
        assert_public_first(day)
