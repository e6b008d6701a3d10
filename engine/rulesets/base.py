"""The base ruleset: what every 杀人游戏 variant shares, with hooks for what differs.

Like python-chess's variants, a ruleset is a small subclass: class attributes for its tables and a
few overridden methods. Nothing in shared code names a ruleset; it asks the ruleset.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

from engine.errors import SetupError
from engine.model import Camp, CheckResult, PhaseId, Power, Reveal, Role, Team
from engine.state import GameState, SeatState

Composition = Mapping[Role, int]
NeedleRule = Literal["none", "cumulative", "consecutive"]


@dataclass(frozen=True, kw_only=True)
class LastWordsPolicy:
    """Who gets last words (RULES.md §1.8)."""

    kind: Literal["all", "first_n", "until", "none"]
    n: int = 0
    until: PhaseId | None = None
    not_if_multiple: bool = False


@dataclass(frozen=True, kw_only=True)
class WinClause:
    """One win condition: when `holds` is true the game ends with `winner`."""

    reason: str
    winner: Camp


class Ruleset:
    """A variant of the game. Subclasses set the class attributes and override hooks."""

    id: ClassVar[str]
    name_zh: ClassVar[str]
    min_players: ClassVar[int]
    max_players: ClassVar[int]
    needles: ClassVar[NeedleRule] = "none"
    third_tie: ClassVar[Literal["draw", "none"]] = "draw"
    """What a third tie under `revote` does: a drawn game, or nobody leaves that day."""
    tied_vote_in_third_window: ClassVar[bool] = False
    reveal: ClassVar[Reveal] = Reveal.NONE
    scores: ClassVar[Mapping[Role, tuple[int, int, int]]]
    """Points by original role: (good wins, killers win, draw)."""
    one_shot: ClassVar[frozenset[Power]] = frozenset({Power.SHOOT, Power.EXECUTE})
    self_target_forbidden: ClassVar[frozenset[Power]] = frozenset(
        {Power.CHECK, Power.SHOOT, Power.EXECUTE}
    )

    # -- setup ---------------------------------------------------------------------------------
    def compositions(self, players: int) -> Sequence[Composition]:
        """The role sets allowed for this many players, the default first."""
        raise NotImplementedError

    def check_player_count(self, players: int) -> None:
        """Refuse a player count the ruleset does not allow, naming the allowed range."""
        if not self.min_players <= players <= self.max_players:
            raise SetupError(
                "setup.player_count",
                ruleset=self.id,
                players=players,
                min=self.min_players,
                max=self.max_players,
            )

    def last_words(self, players: int, initial: Counter[Role]) -> LastWordsPolicy:
        """The last-words policy for a game of this size."""
        raise NotImplementedError

    # -- powers --------------------------------------------------------------------------------
    def team_of(self, seat: SeatState) -> Team | None:
        """The night team a seat acts with now (killers know killers, police know police)."""
        if seat.role is Role.KILLER:
            return Team.KILLERS
        if seat.role is Role.POLICE:
            return Team.POLICE
        return None

    def night_powers(self, seat: SeatState) -> tuple[Power, ...]:
        """Night powers a living seat holds now (spent one-shot powers excluded)."""
        powers: tuple[Power, ...] = {
            Role.KILLER: (Power.KILL,),
            Role.POLICE: (Power.CHECK,),
            Role.DOCTOR: (Power.SAVE,),
            Role.SECRET_KILLER: (Power.SHOOT,),
            Role.SECRET_POLICE: (Power.EXECUTE,),
        }.get(seat.role, ())
        return tuple(p for p in powers if p not in seat.spent)

    def day_powers(self, seat: SeatState) -> tuple[Power, ...]:
        """Powers usable by day (e.g. `confess`)."""
        return ()

    def team_power(self, power: Power) -> Team | None:
        """The team whose members choose this power's target together by majority."""
        return {Power.KILL: Team.KILLERS, Power.CHECK: Team.POLICE}.get(power)

    def target_error(
        self, state: GameState, actor: SeatState, power: Power, target: SeatState
    ) -> str | None:
        """A ruleset limit on a target (a message key), or None when allowed."""
        if power in self.self_target_forbidden and actor.seat == target.seat:
            return "target.self_forbidden"
        return None

    # -- night resolution hooks ------------------------------------------------------------------
    def kill_immune(self, seat: SeatState) -> bool:
        """Whether the killers' kill has no effect on this seat (state at the start of night)."""
        return False

    def attack_effective(self, power: Power, target: SeatState) -> bool:
        """Whether an attack by `power` would kill `target` (before any save)."""
        if power is Power.KILL:
            return not self.kill_immune(target)
        return True

    def savable(self, power: Power) -> bool:
        """Whether the doctor's treatment cancels an attack by this power."""
        return True

    def role_after_spending(self, seat: SeatState, power: Power) -> Role | None:
        """The role a seat turns into after spending a one-shot power, if it changes."""
        return None

    def needle_kills(self, seat: SeatState, night: int) -> bool:
        """Whether a new needle on `night` kills this seat (its earlier needles in `seat`)."""
        if self.needles == "cumulative":
            return seat.role is not Role.DOCTOR and len(seat.needles) >= 1
        if self.needles == "consecutive":
            return (night - 1) in seat.needles
        return False

    def check_answer(self, seat: SeatState) -> CheckResult:
        """What the police are told of `seat` (its state after the night's actions)."""
        return CheckResult.KILLER if seat.role is Role.KILLER else CheckResult.GOOD

    # -- end ---------------------------------------------------------------------------------------
    def win(self, state: GameState) -> WinClause | None:
        """The first win condition that holds, in the ruleset's order, or None."""
        raise NotImplementedError

    def score(self, role: Role, winner: Camp) -> int:
        """Points for an original role and a result."""
        good, killers, draw = self.scores.get(role, (0, 0, 0))
        return {Camp.GOOD: good, Camp.KILLERS: killers, Camp.DRAW: draw}[winner]


def all_out(state: GameState, roles: frozenset[Role]) -> bool:
    """True when no living seat has a current role in `roles`."""
    return not any(s.alive and s.role in roles for s in state.seats)


def any_alive(state: GameState, roles: frozenset[Role]) -> bool:
    """True when some living seat has a current role in `roles`."""
    return not all_out(state, roles)


def counts(**by_role: int) -> Composition:
    """A composition from keyword counts: `counts(police=3, killer=2)`."""
    return {Role(name): n for name, n in by_role.items() if n}


V3_SCORES: Mapping[Role, tuple[int, int, int]] = {
    Role.POLICE: (30, -10, 5),
    Role.KILLER: (-10, 30, 5),
    Role.CIVILIAN: (20, -5, 5),
    Role.SECRET_POLICE: (30, -10, 5),
    Role.SECRET_KILLER: (-10, 30, 5),
    Role.DOCTOR: (30, -10, 5),
}
"""The 3.0 score table (seed 001), also used where a seed gives none (v2, basic)."""
