"""A moderator's removal (modkill) tells nothing hidden, in every ruleset (docs/rulings.md, "Last
words"): two games that differ only in the removed seat's hidden role (two seats' roles swapped)
post the same words and make the same public effects when a moderator removes that seat, by
night and by day — the last-words invitation included."""

from __future__ import annotations

from collections.abc import Mapping
from zoneinfo import ZoneInfo

import pytest

from bot.records.render import Context, render_posts, render_reply, render_vote_channel
from engine.commands import Lock, ModKill
from engine.effects import (
    PRIVATE,
    Announce,
    Bulletin,
    ClockPost,
    OverrideLogged,
    ReplyToPost,
    VoteChannelPost,
    as_posts,
)
from engine.errors import SetupError
from engine.events import Event
from engine.game import apply, new_game, replay_events, start_events
from engine.model import Role, Seat
from engine.rulesets import RULESETS
from engine.state import GameState, SeatState

VARIANTS: list[tuple[str, dict[str, str]]] = [
    *((ruleset, {}) for ruleset in RULESETS),
    ("basic", {"sniper": "yes", "doctor": "yes", "butterfly": "yes", "police_special": "sheriff"}),
    ("basic", {"police_special": "covert_police"}),
    ("v2_mine", {"mine": "killers"}),
    ("v2_doctor_accomplice", {"accomplice": "checks"}),
]


def _roles(ruleset: str, options: Mapping[str, str]) -> list[str]:
    """The ruleset's default deal for its largest table (8 for 无间道), one role a card."""
    rules = RULESETS[ruleset].configured(tuple(options.items()))
    players = 8 if ruleset == "wujiandao" else rules.max_players
    table = rules.compositions(players)[0]
    return [role.value for role, n in table.items() for _ in range(n)]


def _public_role(ruleset: str, role: str) -> Role | None:
    seat = SeatState(seat=Seat(1), player="x", original_role=Role(role), role=Role(role))
    return RULESETS[ruleset].public_role(seat)


def _game(
    ruleset: str, options: Mapping[str, str], roles: list[str]
) -> tuple[GameState, list[Event]]:
    cards = RULESETS[ruleset].cards_per_player
    players = [f"p{i}" for i in range(1, len(roles) // cards + 1)]
    dealt = (
        dict(zip(players, roles, strict=True))
        if cards == 1
        else {f"p{i // cards + 1}#{i % cards + 1}": r for i, r in enumerate(roles)}
    )
    created = new_game(
        ruleset=ruleset, players=players, seed="s", options=dict(options), roles=dealt
    )
    events = start_events(created)
    return replay_events(events), events


def _public(events: list[Event]) -> list[str]:
    """Every public effect of the game: the posts as posted in both languages, and the rest."""
    from engine.publish import effects_for

    out: list[str] = []
    for locale in ("zh-CN", "en"):
        c = Context(
            locale=locale, timezone=ZoneInfo("Asia/Shanghai"), names={i: f"P{i}" for i in range(40)}
        )
        for e in as_posts(effects_for(None, events)):
            if isinstance(e, Announce | ClockPost | Bulletin):
                out.extend(render_posts(c, e))
            elif isinstance(e, VoteChannelPost):
                out.append(render_vote_channel(c, e))
            elif isinstance(e, ReplyToPost):
                out.append(render_reply(c, e) or "✅")
            elif not isinstance(e, (*PRIVATE, OverrideLogged)):
                out.append(repr(e))
    return out


def _removed(
    ruleset: str, options: Mapping[str, str], roles: list[str], seat: int, by_day: bool
) -> list[str] | None:
    """The public effects of the game up to the removal of `seat` (None: the game ended, which
    the win conditions make public, or the ruleset refuses the deal: 5.0's hands)."""
    try:
        state, events = _game(ruleset, options, roles)
    except SetupError:
        return None
    for command in ([Lock()] if by_day else []) + [ModKill(seat=Seat(seat))]:
        state, new = apply(state, command)
        events += new
        if state.over:
            return None
    return _public(events)


def _pairs(ruleset: str, roles: list[str]) -> list[tuple[int, int]]:
    """Seats (as list indexes) of every two different roles with the same public identity."""
    first: dict[str, int] = {}
    for i, role in enumerate(roles):
        first.setdefault(role, i)
    found = sorted(first.items(), key=lambda item: item[1])
    return [
        (i, j)
        for a, i in found
        for b, j in found
        if i != j and _public_role(ruleset, a) == _public_role(ruleset, b)
    ]


@pytest.mark.parametrize("by_day", [False, True], ids=["night", "day"])
@pytest.mark.parametrize(
    ("ruleset", "options"),
    VARIANTS,
    ids=[f"{r}{'-' + '-'.join(o.values()) if o else ''}" for r, o in VARIANTS],
)
def test_a_removal_posts_the_same_whatever_the_removed_role(
    ruleset: str, options: dict[str, str], by_day: bool
) -> None:
    roles = _roles(ruleset, options)
    compared, leaks = 0, []
    for i, j in _pairs(ruleset, roles):
        swapped = list(roles)
        swapped[i], swapped[j] = swapped[j], swapped[i]
        seat = i + 1  # in a game of two cards a player, card i+1 (the player's whole hand goes)
        a = _removed(ruleset, options, roles, seat, by_day)
        b = _removed(ruleset, options, swapped, seat, by_day)
        if a is None or b is None:
            continue  # one of the games ended (the end shows every role anyway) or was refused
        compared += 1
        if a != b:
            diff = [f"- {x}" for x in a if x not in b] + [f"+ {x}" for x in b if x not in a]
            leaks.append(f"seat {seat}: {roles[i]} / {roles[j]}:\n" + "\n".join(diff))
    assert compared, "no removal compared"
    assert not leaks, "\n\n".join(leaks)
