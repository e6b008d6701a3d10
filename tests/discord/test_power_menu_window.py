"""A night's power menu is built only while that night is open: a DM performed late (the private
lane runs after the game's lock is released, so the lock may commit first; a retry hours later)
carries its text alone, never a menu made from a later window's state."""

from __future__ import annotations

from zoneinfo import ZoneInfo

from bot.discord.views import PowerSelect, views_for_whisper
from bot.records.render import Context
from engine.commands import Lock
from engine.effects import Whisper
from engine.game import apply, new_game, replay_events, start_events
from engine.model import Instant, PhaseKind
from engine.publish import effects_for
from engine.state import GameState

ROLES = ["killer", "killer", "police", "police"] + ["civilian"] * 4


def _night_one() -> tuple[GameState, list[Whisper]]:
    """A started v2 game in night 1, and the power menus its opening whispers."""
    players = [f"{i}" for i in range(1, 9)]
    created = new_game(
        ruleset="v2", players=players, seed="menu", roles=dict(zip(players, ROLES, strict=True))
    )
    events = start_events(created, Instant(1_000_000))
    menus = [
        e for e in effects_for(None, events) if isinstance(e, Whisper) and e.key == "window.powers"
    ]
    return replay_events(events), menus


def _ctx() -> Context:
    return Context(locale="zh-CN", timezone=ZoneInfo("Asia/Shanghai"), names={})


async def test_a_menu_performed_while_its_night_is_open_has_its_selects() -> None:
    night, menus = _night_one()
    assert menus
    view = views_for_whisper(7, night, menus[0], _ctx())
    assert view is not None
    selects = [item for item in view.children if isinstance(item, PowerSelect)]
    assert selects and all(s.night == 1 for s in selects)


async def test_a_menu_performed_after_its_night_locked_has_none() -> None:
    night, menus = _night_one()
    day, _ = apply(night, Lock(at=Instant(1_000_000), next_deadline=Instant(2_000_000)))
    assert day.window is not None and day.window.kind is not PhaseKind.NIGHT
    assert all(views_for_whisper(7, day, menu, _ctx()) is None for menu in menus)


async def test_a_menu_of_an_earlier_night_gets_none_in_a_later_night() -> None:
    night, menus = _night_one()
    state = night
    for deadline in (2_000_000, 3_000_000):  # night 1 → day 1 → night 2
        state, _ = apply(state, Lock(at=Instant(deadline - 1), next_deadline=Instant(deadline)))
    assert not state.over, "the seed's day 1 ended the game"
    assert state.window is not None and state.window.kind is PhaseKind.NIGHT
    assert state.window.number == 2
    assert all(views_for_whisper(7, state, menu, _ctx()) is None for menu in menus)
