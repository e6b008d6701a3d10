"""Small helpers to script games in tests: players p1..pN, roles by seat, one call per action."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engine.commands import Command, Lock, PostVote, SubmitPower
from engine.effects import Effect
from engine.events import Event
from engine.game import apply, new_game, replay_events, start_events
from engine.model import Instant, Power, Seat
from engine.publish import effects_for
from engine.state import GameState


class Game:
    """A game being scripted; keeps every event so tests can replay them."""

    def __init__(
        self,
        ruleset: str,
        roles: Sequence[str],
        *,
        options: Mapping[str, object] | None = None,
        seed: str = "test-seed",
    ) -> None:
        self.players = [f"p{i}" for i in range(1, len(roles) + 1)]
        created = new_game(
            ruleset=ruleset,
            players=self.players,
            seed=seed,
            options=options,
            roles=dict(zip(self.players, roles, strict=True)),
        )
        self.events: list[Event] = start_events(created)
        self.state: GameState = replay_events(self.events)
        self._post = 0

    def do(self, command: Command) -> list[Event]:
        self.state, events = apply(self.state, command)
        self.events.extend(events)
        return events

    def effects(self, command: Command) -> list[Effect]:
        """The effects of one command (what the shell would perform)."""
        before = self.state
        return effects_for(before, self.do(command))

    def power(
        self, seat: int, power: str, target: int | None = None, *, at: int | None = None
    ) -> None:
        self.do(
            SubmitPower(
                player=f"p{seat}",
                power=Power(power),
                target=None if target is None else Seat(target),
                passed=target is None and power != "confess",
                at=None if at is None else Instant(at),
            )
        )

    def vote(self, seat: int, target: int | None, *, at: int | None = None) -> None:
        self._post += 1
        self.do(
            PostVote(
                player=f"p{seat}",
                post_id=str(self._post),
                target=None if target is None else Seat(target),
                abstain=target is None,
                at=None if at is None else Instant(at),
            )
        )

    def lock(self, at: int | None = None) -> None:
        self.do(Lock(at=None if at is None else Instant(at)))

    def night(self, *actions: tuple[int, str, int]) -> None:
        """Submit each (seat, power, target) and lock."""
        for seat, power, target in actions:
            self.power(seat, power, target)
        self.lock()

    def day(self, votes: Mapping[int, int | None]) -> None:
        """Each seat votes (None: abstain), then lock."""
        for seat, target in votes.items():
            self.vote(seat, target)
        self.lock()

    @property
    def alive(self) -> list[int]:
        return [int(s) for s in self.state.alive()]

    @property
    def last(self) -> object:
        return self.state.history[-1]


class CardGame(Game):
    """A game where each player holds two cards (5.0 双身份): players p1..pN, the roles listed
    card by card (p1's two, then p2's…); every call names the card (seat) acting or voting."""

    def __init__(
        self,
        roles: Sequence[str],
        *,
        ruleset: str = "v5",
        options: Mapping[str, object] | None = None,
        seed: str = "test-seed",
    ) -> None:
        self.players = [f"p{i}" for i in range(1, len(roles) // 2 + 1)]
        created = new_game(
            ruleset=ruleset,
            players=self.players,
            seed=seed,
            options=options,
            roles={f"p{i // 2 + 1}#{i % 2 + 1}": r for i, r in enumerate(roles)},
        )
        self.events = start_events(created)
        self.state = replay_events(self.events)
        self._post = 0

    def power(
        self, seat: int, power: str, target: int | None = None, *, at: int | None = None
    ) -> None:
        self.do(
            SubmitPower(
                player=self.state.seat(Seat(seat)).player,
                power=Power(power),
                target=None if target is None else Seat(target),
                passed=target is None,
                at=None if at is None else Instant(at),
                seat=Seat(seat),
            )
        )

    def vote(self, seat: int, target: int | None, *, at: int | None = None) -> None:
        self._post += 1
        self.do(
            PostVote(
                player=self.state.seat(Seat(seat)).player,
                post_id=str(self._post),
                target=None if target is None else Seat(target),
                abstain=target is None,
                at=None if at is None else Instant(at),
            )
        )
