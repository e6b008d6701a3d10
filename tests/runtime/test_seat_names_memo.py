"""Seat names and the vote parser's maps are made once per seating, and again whenever what they
depend on changes: the seats (a substitute), or a name taken from the member cache."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

from bot.runtime.contexts import Contexts
from bot.runtime.vote_posts import KnownMaps, maps_of
from bot.store.values import SeatTerm
from engine.game import replay_events, start_events
from engine.setup import new_game
from engine.state import GameState

PLAYERS = [str(1_400_000_000_000_000_100 + i) for i in range(1, 9)]


class Repo:
    def __init__(self, terms: list[SeatTerm]) -> None:
        self.terms = terms
        self.reads = 0

    async def seats(self, game_id: int) -> list[SeatTerm]:
        self.reads += 1
        return self.terms


class Port:
    def __init__(self) -> None:
        self.names: dict[int, str] = {}
        self.asked = 0

    def member_name(self, server_id: int, user_id: int) -> str | None:
        self.asked += 1
        return self.names.get(user_id)


def _term(seat: int, user: str, name: str, term: int = 0) -> SeatTerm:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    return SeatTerm(seat=seat, term=term, name=name, user_id=int(user), since_seq=1, since=at)


def _state() -> GameState:
    created = new_game(ruleset="v2", players=PLAYERS, seed="names")
    return replay_events(start_events(created))


def _contexts(terms: list[SeatTerm]) -> tuple[Contexts, Repo, Port]:
    repo, port = Repo(terms), Port()

    async def info(game_id: int) -> Any:
        return SimpleNamespace(server_id=77)

    service: Any = SimpleNamespace(repo=repo, info=info)
    return Contexts(service, port, "zh-CN"), repo, port  # type: ignore[arg-type]


async def test_recorded_names_are_made_once_per_seats_tuple() -> None:
    terms = [_term(i, p, f"玩家{i}") for i, p in enumerate(PLAYERS, 1)]
    contexts, repo, port = _contexts(terms)
    state = _state()
    first = await contexts.seat_names(1, state)
    assert first == {i: f"玩家{i}" for i in range(1, 9)}
    first[1] = "changed by a caller"
    again = await contexts.seat_names(1, dataclasses.replace(state, window_index=5))
    assert again == {i: f"玩家{i}" for i in range(1, 9)} and repo.reads == 1
    sub = "1500000000000000001"
    repo.terms = [*terms, _term(3, sub, "替补", term=1)]
    seats = list(state.seats)
    seats[2] = dataclasses.replace(seats[2], player=sub)
    replaced = dataclasses.replace(state, seats=tuple(seats))
    assert (await contexts.seat_names(1, replaced))[3] == "替补" and repo.reads == 2
    assert port.asked == 0


async def test_a_name_from_the_member_cache_is_asked_for_every_time() -> None:
    terms = [_term(i, p, f"玩家{i}") for i, p in enumerate(PLAYERS, 1)]
    terms[4] = _term(5, PLAYERS[4], PLAYERS[4])  # recorded by id only
    contexts, _, port = _contexts(terms)
    state = _state()
    assert (await contexts.seat_names(1, state))[5] == PLAYERS[4]
    port.names[int(PLAYERS[4])] = "阿明"
    assert (await contexts.seat_names(1, state))[5] == "阿明"
    assert port.asked == 2


def test_known_maps_are_made_again_when_the_seats_or_names_change() -> None:
    state = _state()
    names = {i: f"玩家{i}" for i in range(1, 9)}
    maps = KnownMaps()
    first = maps.get(1, state, names)
    assert first == maps_of(state, names)
    assert maps.get(1, dataclasses.replace(state, window_index=3), dict(names)) is first
    renamed = {**names, 2: "阿明"}
    assert maps.get(1, state, renamed)[0]["阿明"] == 2
    seats = list(state.seats)
    seats[0] = dataclasses.replace(seats[0], player=PLAYERS[1])  # one player, two cards
    two_cards = dataclasses.replace(state, seats=tuple(seats))
    names_now, mentions = maps.get(1, two_cards, renamed)
    assert "玩家1" not in names_now and int(PLAYERS[1]) not in mentions
    assert maps.get(2, state, names) == first
    maps.forget(1)
    assert maps.get(1, two_cards, renamed) == (names_now, mentions)
