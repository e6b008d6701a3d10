"""The restart and shard benches' games (`bench.seeding`): copies of games played through the bot
are real active games a restart rebuilds, each into its template's state with players, channels
and an id of its own, and schedules; the check that says so fails when a copy is not its own."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from sqlalchemy import text
from sqlalchemy.engine import make_url

from bench import restart
from bench.seeding import TEMPLATES, Played, copy_games, play_templates
from bench.stores import DEFAULT_PG_URL, SERVER_ID, Bench, open_bench
from engine.state import GameState


@pytest_asyncio.fixture(params=["sqlite", "postgresql"])
async def bench(request: pytest.FixtureRequest) -> AsyncIterator[Bench]:
    """A fresh bench database of each backend (PostgreSQL: on the tests' server)."""
    pg_url = DEFAULT_PG_URL
    if request.param == "postgresql":
        server = request.getfixturevalue("pg_server")
        pg_url = server.url(make_url(server.admin_url).database)
    async with open_bench(request.param, pg_url) as opened:
        yield opened


async def rebuilt_states(bench: Bench) -> dict[int, GameState | None]:
    """Every active game as a restarted bot rebuilds it (a fresh service)."""
    service = await bench.new_service()
    assert await service.recover() == {}
    return {g: service.cached_state(g) for g in await bench.repo.active_game_ids()}


async def seat_users(bench: Bench, game_id: int) -> set[str]:
    async with bench.db.engine.connect() as conn:
        rows = await conn.execute(
            text("SELECT user_id FROM seats WHERE game_id = :g"), {"g": game_id}
        )
        return {str(user_id) for (user_id,) in rows}


async def test_copies_rebuild_into_their_templates_states_with_their_own_players(
    bench: Bench,
) -> None:
    templates = await play_templates(bench, 2, windows=3, posts=6)
    assert len(templates) == 2
    copies = await copy_games(bench, [(templates[c % 2], SERVER_ID) for c in range(3)])
    assert [c.template for c in copies] == [templates[0], templates[1], templates[0]]
    rebuilt = await rebuilt_states(bench)
    assert set(rebuilt) == {*templates, *(c.game for c in copies)}
    assert Played(bench.service, copies).unlike(rebuilt) == []
    channels = set()
    for copy in copies:
        state, template = rebuilt[copy.game], rebuilt[copy.template]
        assert state is not None and template is not None
        players = {seat.player for seat in state.seats}
        assert players.isdisjoint(seat.player for seat in template.seats)
        assert await seat_users(bench, copy.game) == players
        assert (state.window, state.deadline) == (template.window, template.deadline)
        assert state != template
        info = await bench.repo.get_game(copy.game)
        channels |= {info.channels["game"], info.channels["vote"]}
    assert len(channels) == 2 * len(copies)  # and none a template's
    assert not channels & {(await bench.repo.get_game(t)).channels["game"] for t in templates}


async def test_a_restart_rebuilds_and_schedules_every_copy(bench: Bench) -> None:
    games = TEMPLATES + 2
    played = await restart.seed(bench, games, windows=2, posts=4)
    assert len(played.copies) == 2
    for snapshots in (True, False):
        _, count, _ = await restart.rebuild(bench, played, snapshots=snapshots)
        assert count == games
    seconds, _, caught_up = await restart.ready(bench, games)  # raises unless 10 deadline jobs
    assert 0 < seconds <= caught_up


async def test_a_copy_rebuilt_with_its_templates_players_is_told(bench: Bench) -> None:
    (template,) = await play_templates(bench, 1, windows=3, posts=4)
    first, second = await copy_games(bench, [(template, SERVER_ID), (template, SERVER_ID)])
    async with bench.db.engine.begin() as conn:  # the second copy's snapshots: the template's
        await conn.execute(text("DELETE FROM snapshots WHERE game_id = :c"), {"c": second.game})
        await conn.execute(
            text(
                "INSERT INTO snapshots (game_id, seq, version, state, created_at) "
                "SELECT :c, seq, version, state, created_at FROM snapshots WHERE game_id = :t"
            ),
            {"c": second.game, "t": template},
        )
    rebuilt = await rebuilt_states(bench)
    assert Played(bench.service, [first, second]).unlike(rebuilt) == [second.game]
    del rebuilt[first.game]
    assert Played(bench.service, [first, second]).unlike(rebuilt) == [first.game, second.game]


async def test_copies_take_new_ids_after_the_largest_and_games_made_later_follow(
    bench: Bench,
) -> None:
    (template,) = await play_templates(bench, 1, windows=1, posts=1)
    copies = await copy_games(bench, [(template, SERVER_ID)] * 2)
    assert [c.game for c in copies] == [template + 1, template + 2]
    later = await play_templates(bench, 1, windows=1, posts=1)
    assert max(later) == template + 3
