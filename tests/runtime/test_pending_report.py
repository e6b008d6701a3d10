"""`/mod pending`'s line of what the open window waits for (`owed`, from the engine's
`Pending.waits_for`): a last act held open by day asked the moderator for votes ("Not voted yet:
nobody") while the game waited for the sniper's shot; it names the seat owing the power, as at
night."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))

from gamekit import Game

from bot.runtime.pending_report import owed
from engine.pending import pending

SNIPER_TABLE = ["sniper", "police", "civilian", "civilian", "civilian", "civilian"]


def test_a_last_act_held_by_day_is_a_power_owed_not_a_vote() -> None:
    game = Game("basic", SNIPER_TABLE, options={"sniper": "yes"})
    game.night()
    assert owed(pending(game.state)) == ("pending.votes", (1, 2, 3, 4, 5, 6))
    game.day({2: 1, 3: 1, 4: 1, 5: 1, 6: 1})  # the sniper leaves; the game waits for the shot
    window = game.state.window
    assert window is not None and window.last_act
    assert owed(pending(game.state)) == ("pending.powers", (1,))
    game.power(1, "shoot", 2)
    assert game.state.over


def test_each_window_names_what_it_waits_for() -> None:
    game = Game("basic", SNIPER_TABLE, options={"sniper": "yes", "warmup": 30})
    assert owed(pending(game.state)) is None  # the warm-up
    game.lock()
    assert owed(pending(game.state)) == ("pending.powers", (1, 2))
