"""Night resolution: one pass over the night's submissions, in a fixed order of steps.

Theory of operation. All night actions are simultaneous (the face-to-face night happens before
dawn), so resolution never depends on submission order:
1. each team's choice: the target most of its living members chose (latest submission each),
   an explicit pass counting as a choice of "no action"; a tie is broken by lots;
   a team power used by someone outside the team (匪民's check of a killer) acts alone;
   the ruleset may then rewrite the actions (`actions_in_effect`): a void action acts on nobody;
2. attacks (the kill, shots, executions, digging for mines): whom each would kill is asked of
   the ruleset on the state at the start of the night (`attack_victims`);
3. the doctor's treatment cancels every savable attack that would kill its target (unless the
   ruleset says the attacks are too many: `treatment_saves`); with none to cancel it is an empty
   needle, which may kill (`needle_kills`); silencing powers silence their living targets;
4. a player hit may survive by an extra life, with a wound (`absorbs`); the departures are settled
   (`engine.deaths.settle`: others taken along, roles turned); spent one-shot powers are marked
   and may turn the role (`role_after_spending`), and an action may turn a role too
   (`conversions`: 独杀 and 独警 merging into their teams);
5. checks are answered (`check_answer`) on the state after the night's actions, or at its start
   where the ruleset's checkers act before the others (`check_after_actions`); a void check is
   answered `none`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from engine import lots
from engine.deaths import settle
from engine.events import SeatChange
from engine.model import CheckResult, Instant, Power, Role, Seat, Team
from engine.rulesets import Ruleset
from engine.rulesets.base import NEEDLE, Causes
from engine.state import Action, CheckRecord, GameState, LotDraw, Submission

PASS = "pass"


@dataclass(frozen=True, kw_only=True, slots=True)
class NightOutcome:
    """Everything a night's resolution decided."""

    deaths: tuple[Seat, ...]
    changes: tuple[SeatChange, ...]
    checks: tuple[CheckRecord, ...]
    lots: tuple[LotDraw, ...]
    silenced: tuple[Seat, ...] = ()
    """Living players silenced for the coming day (森林老人)."""
    causes: Mapping[Seat, Causes] = field(default_factory=dict)
    """Why each player in `deaths` leaves."""
    actions: tuple[Action, ...] = ()
    """Tonight's actions as they took effect (the judge's private log)."""
    virtual_out: tuple[str, ...] = ()
    """Virtual players out tonight."""
    counters: tuple[tuple[str, int], ...] = ()
    """Named counts changed tonight (their new values)."""
    notices: tuple[tuple[Team, str], ...] = ()
    """Private news for teams."""


def valid_submissions(state: GameState, cutoff: Instant | None) -> list[Submission]:
    """The submissions that count, in the order made: by living seats, none stamped after the
    cutoff (docs/rules.md §1, the lock post: those are void)."""
    return [
        sub
        for sub in state.submissions
        if (cutoff is None or sub.at is None or sub.at <= cutoff) and state.seat(sub.seat).alive
    ]


def counted_submissions(
    state: GameState, cutoff: Instant | None
) -> dict[tuple[Seat, Power], Submission]:
    """Each living seat's latest submission per power, ignoring those stamped after the cutoff."""
    return {(sub.seat, sub.power): sub for sub in valid_submissions(state, cutoff)}


Option = tuple[Power, Seat | None] | None
"""A team member's choice: a power and its target (None: untargeted), or None for a pass."""


def _option(sub: Submission) -> Option:
    if sub.target is None and not sub.untargeted:
        return None
    return (sub.power, sub.target)


def _option_name(option: Option, single: bool) -> str:
    if option is None:
        return PASS
    power, target = option
    if single:
        return str(target)
    return power.value if target is None else f"{power.value}:{target}"


def _option_key(option: Option) -> tuple[int, str, int]:
    if option is None:
        return (-1, "", 0)
    return (0, option[0].value, option[1] or 0)


def team_choice(
    state: GameState,
    rules: Ruleset,
    team: Team,
    ordered: list[Submission],
    night: int,
) -> tuple[Action | None, LotDraw | None]:
    """The team's choice by majority of its members' latest submissions among the powers it
    uses together (a team with several uses one of them a night); a pass counts as a choice of
    no action; lots on a split."""
    powers = rules.team_powers(team)
    members = rules.team_members(state, team)
    latest: dict[Seat, Submission] = {}
    for sub in ordered:
        if sub.seat in members and sub.power in powers:
            latest[sub.seat] = sub
    if not latest:
        return None, None
    votes = Counter(_option(sub) for sub in latest.values())
    top = max(votes.values())
    tied = sorted((o for o, n in votes.items() if n == top), key=_option_key)
    draw: LotDraw | None = None
    chosen = tied[0]
    if len(tied) > 1:
        single = len(powers) == 1
        names = [_option_name(o, single) for o in tied]
        topic = next(iter(powers)).value if single else team.value
        label = lots.team_lots_label(night, topic, names)
        picked = lots.draw(state.seed, label, names)
        draw = LotDraw(label=label, among=tuple(names), drawn=picked)
        chosen = tied[names.index(picked)]
    if chosen is None:
        return None, draw
    power, target = chosen
    return Action(power=power, actors=members, target=target, team=team), draw


def gather_actions(
    state: GameState, rules: Ruleset, cutoff: Instant | None
) -> tuple[list[Action], list[LotDraw]]:
    """Tonight's actions: team choices first, then every individual power, in seat order."""
    night = state.window.number if state.window else 0
    ordered = valid_submissions(state, cutoff)
    subs = {(sub.seat, sub.power): sub for sub in ordered}
    actions: list[Action] = []
    draws: list[LotDraw] = []
    for team in Team:
        if not rules.team_powers(team):
            continue
        action, draw = team_choice(state, rules, team, ordered, night)
        if action:
            actions.append(action)
        if draw:
            draws.append(draw)
    for (seat, power), sub in sorted(subs.items()):
        own = rules.team_of(state.seat(seat))
        if _option(sub) is None or (own is not None and power in rules.team_powers(own)):
            continue
        actions.append(Action(power=power, actors=(seat,), target=sub.target))
    return actions, draws


def resolve_night(state: GameState, rules: Ruleset, cutoff: Instant | None) -> NightOutcome:
    """Resolve the open night window (see the module docstring for the order)."""
    assert state.window is not None
    night = state.window.number
    gathered, draws = gather_actions(state, rules, cutoff)
    extras = rules.night_extras(state, rules.actions_in_effect(state, gathered))
    # A power aimed at a player removed before the lock (a moderator's removal) acts on nobody;
    # the ruleset saw it chosen all the same (天下无贼: the police chose to check, so a bad
    # thief is exposed to them whatever their target).
    actions = [a for a in extras.actions if a.target is None or state.seat(a.target).alive]
    draws.extend(extras.lots)
    acting = [a for a in actions if not a.void and a.target is not None]
    hits = [
        (a, victim)
        for a in acting
        if a.power in rules.attack_powers and a.target is not None
        for victim in rules.attack_victims(state, a.power, a.actors, state.seat(a.target))
    ]

    cancelled: set[int] = set()
    needles: dict[Seat, bool] = {}
    for treat in (a for a in acting if a.power is Power.SAVE):
        treated = treat.target
        assert treated is not None
        savable = [
            i for i, (a, victim) in enumerate(hits) if victim == treated and rules.savable(a.power)
        ]
        if not savable:
            needles[treated] = rules.needle_kills(state.seat(treated), night)
        elif rules.treatment_saves(tuple(hits[i][0].power for i in savable)):
            cancelled.update(savable)

    found: dict[Seat, set[str]] = {}
    for i, (a, victim) in enumerate(hits):
        if i not in cancelled:
            found.setdefault(victim, set()).add(a.power.value)
    for seat, kills in needles.items():
        if kills:
            found.setdefault(seat, set()).add(NEEDLE)
    for seat, cause in extras.leave:
        if state.seat(seat).alive:
            found.setdefault(seat, set()).add(cause)
    wounded = {s for s, c in found.items() if rules.absorbs(state, state.seat(s), frozenset(c))}
    first = {s: frozenset(c) for s, c in found.items() if s not in wounded}
    causes, turned = settle(state, rules, first, actions)
    deaths = set(causes)
    silenced = {
        a.target for a in acting if a.power in rules.silence_powers and a.target is not None
    } - deaths

    spent: dict[Seat, Power] = {}
    for action in actions:
        if action.power in rules.one_shot:
            spent[action.actors[0]] = action.power
    new_roles: dict[Seat, Role] = {}
    for seat, power in spent.items():
        role = rules.role_after_spending(state.seat(seat), power)
        if role is not None:
            new_roles[seat] = role
    for action in acting:
        if action.target is not None:
            target = state.seat(action.target)
            new_roles.update(rules.conversions(state, action.power, action.actors, target))
    new_roles.update(turned)

    changes = tuple(
        SeatChange(
            seat=seat,
            dies=seat in deaths,
            needle=night if seat in needles else None,
            role=new_roles.get(seat),
            spent=spent.get(seat),
            wound=seat in wounded,
        )
        for seat in sorted(set(deaths) | set(needles) | set(spent) | set(new_roles) | wounded)
    )
    checks = tuple(_answer_checks(state, rules, actions, new_roles, spent))
    return NightOutcome(
        deaths=tuple(sorted(deaths)),
        changes=changes,
        checks=checks,
        lots=tuple(draws),
        silenced=tuple(sorted(silenced)),
        causes=causes,
        actions=tuple(actions),
        virtual_out=extras.virtual_out,
        counters=extras.counters,
        notices=extras.notices,
    )


def _answer_checks(
    state: GameState,
    rules: Ruleset,
    actions: Iterable[Action],
    new_roles: dict[Seat, Role],
    spent: dict[Seat, Power],
) -> Iterable[CheckRecord]:
    """Answer each check on the target as it stands after tonight's actions (or before them)."""
    for action in actions:
        if action.power is not Power.CHECK or action.target is None:
            continue
        target = state.seat(action.target)
        if rules.check_after_actions:
            target = replace(
                target,
                role=new_roles.get(target.seat, target.role),
                spent=target.spent | ({spent[target.seat]} if target.seat in spent else set()),
            )
        yield CheckRecord(
            team=action.team,
            by=action.actors,
            target=action.target,
            result=(
                action.told
                if action.told is not None
                else CheckResult.NONE
                if action.void
                else rules.answer(state, state.seat(action.actors[0]), target)
            ),
        )
