"""The base ruleset: what every 杀人游戏 variant shares, with hooks for what differs.

Like python-chess's variants, a ruleset is a small subclass: class attributes for its tables and a
few overridden methods. Nothing in shared code names a ruleset; it asks the ruleset.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType
from typing import ClassVar, Literal

from engine.errors import SetupError
from engine.model import Camp, CheckResult, PhaseId, PhaseKind, Power, Reveal, Role, Seat, Team
from engine.state import Action, GameState, LotDraw, NightRecord, SeatState

Composition = Mapping[Role, int]
NeedleRule = Literal["none", "cumulative", "consecutive"]
Causes = frozenset[str]
"""Why a player leaves: the powers that killed them (`kill`, `shoot`, …), or `needle`, `vote`,
`confess`, `with` (taken along by another's departure)."""
NEEDLE, VOTE, CONFESS, WITH = "needle", "vote", "confess", "with"


@dataclass(frozen=True, kw_only=True, slots=True)
class LastWordsPolicy:
    """Who gets last words (docs/rules.md §1.8)."""

    kind: Literal["all", "first_n", "until", "none"]
    n: int = 0
    until: PhaseId | None = None
    not_if_multiple: bool = False
    only: PhaseKind | None = None
    """Only players who leave in this kind of phase get last words (工兵地雷: nights only)."""
    window: Literal["next_resolution", "next_death"] = "next_resolution"
    """How long the last words may be given: until the next resolution is published (§1.8's
    default), or until the next one in which someone leaves (1.0 检查官: 在后一个死亡名单宣布前)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Aftermath:
    """What players leaving bring about: others who leave with them, roles that turn."""

    leave: tuple[Seat, ...] = ()
    """Players who leave with them (cause `with`)."""
    roles: tuple[tuple[Seat, Role], ...] = ()


@dataclass(frozen=True, kw_only=True, slots=True)
class NightExtras:
    """What a ruleset adds to a night's resolution (`Ruleset.night_extras`)."""

    actions: tuple[Action, ...]
    """Tonight's actions, maybe rewritten (a check pointed elsewhere)."""
    leave: tuple[tuple[Seat, str], ...] = ()
    """Players who leave tonight besides the attacks, with the cause (a knife mark's lot)."""
    virtual_out: tuple[str, ...] = ()
    """Virtual players out tonight."""
    counters: tuple[tuple[str, int], ...] = ()
    """Named counts changed (their new values)."""
    lots: tuple[LotDraw, ...] = ()
    """Draws made (verifiable, like every lot)."""
    notices: tuple[tuple[Team, str], ...] = ()
    """Private news for a team: (team, message key)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class LaterPower:
    """A power a seat's role holds later, or on leaving the game, that it does not hold now
    (`Ruleset.later_powers`): what its role message says besides the powers usable now."""

    power: Power
    when: str
    """When it holds it, a message key under `later.`: `from_night` (from night `night` on),
    `killer_out` (once a killer is out: 4.0 独杀), `leader_out` (once the faction's leader is
    out: 无间道's 亲信), `after_spending` (once the role has used `spent` and is `becomes`),
    `on_death_unless_confess_or_needle` (once, on leaving, until the next deadline: basic's
    狙击手)."""
    night: int | None = None
    spent: Power | None = None
    becomes: Role | None = None

    def text(self) -> str:
        """`power:when` and its details as `name=value` (`check:from_night:night=2`)."""
        details = {"night": self.night, "spent": self.spent, "becomes": self.becomes}
        shown = [f"{k}={v}" for k, v in details.items() if v is not None]
        return ":".join([self.power.value, self.when, *shown])


@dataclass(frozen=True, kw_only=True, slots=True)
class VoteGroup:
    """One of several votes held in the same day window (无间道: each faction's own vote)."""

    name: str
    voters: tuple[Seat, ...]
    candidates: tuple[Seat, ...]


@dataclass(frozen=True, kw_only=True, slots=True)
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
    tied_vote_in_second_window: ClassVar[bool] = True
    """Whether the tied players may vote in the first run-off (1.0 简化: they may not)."""
    reveal: ClassVar[Reveal] = Reveal.NONE
    scores: ClassVar[Mapping[Role, tuple[int, int, int]]]
    """Points by original role: (good wins, killers win, draw)."""
    one_shot: ClassVar[frozenset[Power]] = frozenset({Power.SHOOT, Power.EXECUTE, Power.VETO})
    self_target_forbidden: ClassVar[frozenset[Power]] = frozenset(
        {Power.CHECK, Power.SHOOT, Power.EXECUTE, Power.DEMINE}
    )
    role_powers: ClassVar[Mapping[Role, tuple[Power, ...]]] = {
        Role.KILLER: (Power.KILL,),
        Role.POLICE: (Power.CHECK,),
        Role.DOCTOR: (Power.SAVE,),
        Role.SECRET_KILLER: (Power.SHOOT,),
        Role.SECRET_POLICE: (Power.EXECUTE,),
        Role.SPECIAL_POLICE: (Power.SHOOT,),
    }
    """Night powers by current role (docs/rules.md §2)."""
    role_day_powers: ClassVar[Mapping[Role, tuple[Power, ...]]] = {Role.INSPECTOR: (Power.VETO,)}
    """Powers used by day, by current role."""
    day_power_ids: ClassVar[frozenset[Power]] = frozenset({Power.CONFESS, Power.VETO})
    """Powers that are used by day: `confess` acts at once; the others are submitted during a
    vote window and act at its lock (`veto` spares its target from that lock's elimination)."""
    attack_powers: ClassVar[frozenset[Power]] = frozenset({Power.KILL, Power.SHOOT, Power.EXECUTE})
    """Night powers that may kill (asked of `attack_victims`)."""
    silence_powers: ClassVar[frozenset[Power]] = frozenset({Power.SILENCE})
    """Night powers whose target may not speak the next day (森林老人's `silence`)."""
    check_after_actions: ClassVar[bool] = True
    """Whether checks see tonight's spent powers and turned roles (3.0: the police act last), or
    the state at the start of the night (3.1: the police act before the secret killer and the
    special police)."""
    option_choices: ClassVar[Mapping[str, tuple[str, ...]]] = {}
    """Ruleset options (a side chosen by option, a variant): name → allowed values, the default
    first."""
    chosen: Mapping[str, str] = MappingProxyType({})
    """The options in force for a configured instance (see `configured`)."""
    camps: ClassVar[frozenset[Camp]] = frozenset({Camp.GOOD, Camp.KILLERS, Camp.DRAW})
    """The results a game of this ruleset can have (a moderator's end names one)."""
    cards_per_player: ClassVar[int] = 1
    """Seats (cards, 牌位) each player holds: 5.0 双身份 deals two. A player holding several is
    in the game while one of them is; each acts, is targeted and dies on its own."""

    # -- options -------------------------------------------------------------------------------
    def configured(self, extras: Sequence[tuple[str, str]]) -> Ruleset:
        """This ruleset with its options set (the registered instance when it has none)."""
        if not extras:
            return self
        return _configured(self, tuple(extras))

    def option(self, name: str) -> str:
        """The value of a ruleset option in force (its default when not chosen)."""
        return self.chosen.get(name, self.option_choices[name][0])

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

    def deal_allowed(self, hands: Sequence[tuple[Role, ...]]) -> bool:
        """Whether a deal may stand (each player's cards); a refused deal is dealt again from
        the seed (5.0: nobody holds both a killer and a police)."""
        return True

    # -- powers --------------------------------------------------------------------------------
    def team_of(self, seat: SeatState) -> Team | None:
        """The night team a seat acts with now (killers know killers, police know police)."""
        if seat.role is Role.KILLER:
            return Team.KILLERS
        if seat.role is Role.POLICE:
            return Team.POLICE
        return None

    def team_members(self, state: GameState, team: Team) -> tuple[Seat, ...]:
        """The living members of a team now, in seat order."""
        return tuple(s.seat for s in state.seats if s.alive and self.team_of(s) == team)

    def knows_role(self, viewer: SeatState, other: SeatState) -> bool:
        """Whether `viewer` knows `other`'s role during play (teammates know each other; a
        player knows all their own cards)."""
        if viewer.player == other.player:
            return True
        team = self.team_of(viewer)
        return team is not None and self.team_of(other) == team

    def seen_role(self, viewer: SeatState, other: SeatState) -> Role | None:
        """The role `viewer` sees for `other` (None: unknown); by default the role itself when
        `knows_role`. 5.0: the police see the mole, who opens his eyes with them, as police."""
        return other.role if self.knows_role(viewer, other) else None

    def night_powers(self, state: GameState, seat: SeatState) -> tuple[Power, ...]:
        """Night powers a living seat holds now (spent one-shot powers excluded); `state` lets a
        ruleset start a power later in the game (独杀 after a killer is out, 独警 from night 2)."""
        powers = self.role_powers.get(seat.role, ())
        return tuple(p for p in powers if p not in seat.spent)

    def day_powers(self, state: GameState, seat: SeatState) -> tuple[Power, ...]:
        """Powers usable by day (e.g. `confess`, `veto`), spent ones excluded."""
        powers = self.role_day_powers.get(seat.role, ())
        return tuple(p for p in powers if p not in seat.spent)

    def later_powers(self, state: GameState, seat: SeatState) -> tuple[LaterPower, ...]:
        """Powers a living seat's role holds later or on leaving the game, and does not hold now
        (`night_powers`, `day_powers`): its role message names them with when. By default the
        powers of the role an unspent one-shot power turns it into (a secret killer who fires is
        a killer and kills with them; basic's covert police who attacks checks with the police).
        The rules are public: this says nothing but what the seat's own role holds."""
        now = set(self.night_powers(state, seat) + self.day_powers(state, seat))
        out: list[LaterPower] = []
        for spent in self.role_powers.get(seat.role, ()):
            if spent not in self.one_shot or spent in seat.spent:
                continue
            becomes = self.role_after_spending(seat, spent)
            if becomes is None:
                continue
            out.extend(
                LaterPower(power=power, when="after_spending", spent=spent, becomes=becomes)
                for power in self.role_powers.get(becomes, ())
                if power not in now
            )
        return tuple(out)

    def side_note(self, seat: SeatState) -> str | None:
        """Where a role alone does not tell a seat the side it plays for (a mine's side is a
        game option), a message key under `role_side.` its role message adds: None by default."""
        return None

    def team_power(self, power: Power) -> Team | None:
        """The team whose members choose this power's target together by majority."""
        return {Power.KILL: Team.KILLERS, Power.CHECK: Team.POLICE}.get(power)

    def team_powers(self, team: Team) -> frozenset[Power]:
        """The powers a team uses together, one of them a night, by majority (by default those
        `team_power` names for it; 天下无贼's police either check or guard 傻根)."""
        return frozenset(p for p in Power if self.team_power(p) is team)

    def team_night_powers(self, team: Team) -> frozenset[Power]:
        """Every night power a role acting with `team` holds in this ruleset (`role_powers` of
        the roles `team_of` puts in it), whoever holds them in a game: what a penalty on the
        team can stop. The rules are public, so this tells nothing hidden."""
        return frozenset(
            power
            for role, powers in self.role_powers.items()
            if self.team_of(SeatState(seat=Seat(0), player="", original_role=role, role=role))
            is team
            for power in powers
        )

    def passable(self, state: GameState, seat: SeatState, power: Power) -> bool:
        """Whether the power may be explicitly passed (天下无贼: the bad thieves must kill once 傻根
        is dead)."""
        return True

    def target_error(
        self, state: GameState, actor: SeatState, power: Power, target: SeatState
    ) -> str | None:
        """A ruleset limit on a target (a message key), or None when allowed."""
        if power in self.self_target_forbidden and actor.seat == target.seat:
            return "target.self_forbidden"
        return None

    # -- night resolution hooks ------------------------------------------------------------------
    untargeted_powers: ClassVar[frozenset[Power]] = frozenset()
    """Powers used without a seat as target (on a virtual player: 天下无贼's 傻根)."""
    virtual_players: ClassVar[tuple[str, ...]] = ()
    """Players that are no seat (天下无贼's 傻根): no one plays them; they can be out."""

    def night_extras(self, state: GameState, actions: Sequence[Action]) -> NightExtras:
        """What the ruleset adds to the night after `actions_in_effect`: rewritten actions,
        other departures, virtual players out, counters, lots. By default nothing."""
        return NightExtras(actions=tuple(actions))

    def actions_in_effect(self, state: GameState, actions: Sequence[Action]) -> list[Action]:
        """Tonight's actions as they take effect: a ruleset may void some (`void`) or add some
        (花蝴蝶: what is aimed at the hugged player is void, and they share what is aimed at the
        butterfly). By default, as submitted."""
        return list(actions)

    def kill_immune(self, seat: SeatState) -> bool:
        """Whether the killers' kill has no effect on this seat (state at the start of night)."""
        return False

    def attack_effective(self, power: Power, target: SeatState) -> bool:
        """Whether an attack by `power` would kill `target` (before any save)."""
        if power is Power.KILL:
            return not self.kill_immune(target)
        return True

    def attack_victims(
        self, state: GameState, power: Power, actors: tuple[Seat, ...], target: SeatState
    ) -> tuple[Seat, ...]:
        """Who an attack by `actors` on `target` would kill before any save (state at the start
        of the night): the target when the attack is effective. A ruleset may name others: a
        mine takes the killers with it, a sapper who digs at a killer is blown up himself."""
        return (target.seat,) if self.attack_effective(power, target) else ()

    def conversions(
        self, state: GameState, power: Power, actors: tuple[Seat, ...], target: SeatState
    ) -> Mapping[Seat, Role]:
        """Roles that tonight's action turns (state at the start of the night): a lone killer
        who kills a killer, or is killed by the killers, joins their team (4.0 独杀)."""
        return {}

    def savable(self, power: Power) -> bool:
        """Whether the doctor's treatment cancels an attack by this power."""
        return True

    def absorbs(self, state: GameState, seat: SeatState, causes: Causes) -> bool:
        """Whether the seat survives tonight's deadly `causes` with a wound instead (an extra
        life, 警长装死); by default never."""
        return False

    def on_leaving(
        self, state: GameState, leaving: Mapping[Seat, Causes], tonight: Sequence[Action]
    ) -> Aftermath:
        """What these players leaving (for these causes) brings about: others who leave with
        them (花蝴蝶's protected player), roles that turn (警长's death). `tonight` is the night's
        actions in effect during a night's resolution (empty otherwise). Asked again for those
        taken along, until nobody new leaves; never for a moderator's removal."""
        return Aftermath()

    def death_powers(self, state: GameState, seat: SeatState, causes: Causes) -> tuple[Power, ...]:
        """Powers a player leaving for these causes may use once, at once, before the next lock
        (狙击手's last shot); by default none."""
        return ()

    def treatment_saves(self, attacks: tuple[Power, ...]) -> bool:
        """Whether a treatment cancels these savable attacks on its target together (by default
        it cancels them all); when it does not, they kill and the treatment is no needle."""
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
        """What a check tells of `seat` (after the night's actions, see `check_after_actions`)."""
        return CheckResult.KILLER if seat.role is Role.KILLER else CheckResult.GOOD

    def answer(self, state: GameState, checker: SeatState, target: SeatState) -> CheckResult:
        """What `checker`'s check tells of `target`: by default `check_answer`, whoever asks
        (5.0: the mole asks another question)."""
        return self.check_answer(target)

    def has_last_words(
        self, state: GameState, seat: SeatState, phase: PhaseId, causes: Causes
    ) -> bool:
        """Whether a player leaving in `phase` for `causes` may have last words at all (before
        the policy's count; one who may not uses no slot). 4.0 花蝴蝶: a killer voted out has
        none. A moderator's removal is asked with no causes: its answer must not depend on the
        role, or whether the removed player is invited to speak would tell it (docs/rulings.md,
        "Last words")."""
        return True

    def shown_at_death(
        self, state: GameState, seat: SeatState, phase: PhaseId, causes: Causes
    ) -> str | None:
        """What is shown of a player who leaves in `phase` for `causes` (state before the
        resolution): by default as `reveal` says, the current role or the camp; None: nothing."""
        if self.reveal is Reveal.ROLE:
            return seat.role.value
        if self.reveal is Reveal.CAMP:
            camp = self.camp_of(seat)
            return camp.value if camp else "neutral"
        return None

    # -- day ---------------------------------------------------------------------------------
    def vote_groups(self, state: GameState) -> tuple[VoteGroup, ...]:
        """Separate votes held in each day window, each with its voters and candidates (a
        voter's post counts in their group, for one of its candidates); by default none: one
        vote of everyone for anyone. With groups, a tie in a group is drawn by lots (or nobody
        leaves under `none`); there are no run-offs."""
        return ()

    def public_role(self, seat: SeatState) -> Role | None:
        """The identity everyone knows of a seat (无间道's 公开身份), None where there is none."""
        return None

    def vote_weight(self, state: GameState, voter: SeatState) -> int:
        """How many votes a counted voter's post carries (5.0: one per living card)."""
        return 1

    def vote_leavers(
        self, state: GameState, chosen: SeatState, voters: tuple[Seat, ...]
    ) -> tuple[Seat, ...]:
        """Who leaves when the day's vote (or its lots) picks `chosen`; `voters` are those whose
        counted vote went to `chosen`. By default the chosen player; a mine takes its voters."""
        return (chosen.seat,)

    # -- end ---------------------------------------------------------------------------------------
    def camp_of(self, seat: SeatState) -> Camp | None:
        """The side a seat plays for (by its original role), None for a player of no side."""
        killers = (
            Role.KILLER, Role.SECRET_KILLER, Role.KILLER_MINE, Role.ACCOMPLICE, Role.LONE_KILLER,
            Role.SNIPER, Role.MOLE,
        )  # fmt: skip
        return Camp.KILLERS if seat.original_role in killers else Camp.GOOD

    def player_camp(self, state: GameState, player: str) -> Camp | None:
        """The side a player plays for (a season's winners): their seat's `camp_of`; None if
        they hold no seat. A ruleset dealing several cards a player says how they combine."""
        seats = state.seats_of(player)
        return self.camp_of(state.seat(seats[0])) if seats else None

    def win(self, state: GameState) -> WinClause | None:
        """The first win condition that holds, in the ruleset's order, or None."""
        raise NotImplementedError

    def seat_score(self, state: GameState, seat: SeatState, winner: Camp) -> int:
        """Points for a seat at the end: by default by its original role (docs/rules.md §5)."""
        return self.score(seat.original_role, winner)

    def score(self, role: Role, winner: Camp) -> int:
        """Points for an original role and a result."""
        good, killers, draw = self.scores.get(role, (0, 0, 0))
        return {Camp.GOOD: good, Camp.KILLERS: killers, Camp.DRAW: draw}[winner]


@cache
def _configured(ruleset: Ruleset, extras: tuple[tuple[str, str], ...]) -> Ruleset:
    clone = copy.copy(ruleset)
    clone.chosen = dict(extras)
    return clone


def coming_night(state: GameState) -> int:
    """The night window open now, or the next one to open (1 before the game starts)."""
    window = state.window
    if window is None:
        return 1 + sum(1 for entry in state.history if isinstance(entry, NightRecord))
    if window.kind is PhaseKind.NIGHT and not window.last_act:
        return window.number
    return window.number + 1


def all_out(state: GameState, roles: frozenset[Role]) -> bool:
    """True when no living seat has a current role in `roles`."""
    return not any(s.alive and s.role in roles for s in state.seats)


def sides_out(
    state: GameState,
    killers: frozenset[Role],
    good: frozenset[Role],
    *,
    killers_out: str = "win.killers_out",
    good_out: str = "win.police_out",
    both_out: str = "win.both_out_draw",
) -> WinClause | None:
    """The first clauses of most win checks: the killers' side and the good side's key roles
    (`good`) out together → draw; the killers' side out → good; the good side's out → killers."""
    no_killers, no_good = all_out(state, killers), all_out(state, good)
    if no_killers and no_good:
        return WinClause(reason=both_out, winner=Camp.DRAW)
    if no_killers:
        return WinClause(reason=killers_out, winner=Camp.GOOD)
    if no_good:
        return WinClause(reason=good_out, winner=Camp.KILLERS)
    return None


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
