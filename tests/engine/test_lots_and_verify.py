"""Fair randomness (docs/rules.md §4, docs/fairness.md): a tie's lot names the 看表帖 in its
label and is the HMAC draw anyone can recompute; `faguan verify` reports what it cannot check
instead of passing it."""

from __future__ import annotations

import copy
import hashlib
import hmac
from collections.abc import Sequence
from typing import Any

import pytest
from gamekit import Game

from engine import lots
from engine.commands import Lock
from engine.record import record_of
from engine.state import DayRecord
from engine.verify import verify_record

V2 = ["killer", "killer", "police", "police", "civilian", "civilian", "civilian", "civilian"]


def _by_hand(seed: str, label: str, options: Sequence[int]) -> int:
    """docs/fairness.md's ten lines: HMAC-SHA256(seed, label), big-endian, mod the options."""
    digest = hmac.new(seed.encode(), label.encode(), hashlib.sha256).digest()
    return options[int.from_bytes(digest, "big") % len(options)]


def _tied_day(post_id: str | None) -> Game:
    game = Game("v2", V2)  # tie = lots (the play-by-post default)
    game.night((1, "kill", 5))
    game.vote(1, 6)
    game.vote(3, 7)
    game.do(Lock(post_id=post_id))
    return game


def test_a_tie_lot_names_the_lock_post_and_is_the_published_draw() -> None:
    game = _tied_day("1234567890")
    record = game.state.history[-1]
    assert isinstance(record, DayRecord) and record.tie is not None
    label = "lots|day 1|seats 6,7|1234567890"
    assert record.tie.label == label and record.tie.then == "lots"
    drawn = _by_hand("test-seed", label, [6, 7])
    assert record.tie.drawn == drawn and record.left == (drawn,)
    assert [(d.label, d.among, d.drawn) for d in game.state.lots] == [
        (label, ("6", "7"), str(drawn))
    ]
    without = _tied_day(None).state.history[-1]
    assert isinstance(without, DayRecord) and without.tie is not None
    assert without.tie.label == "lots|day 1|seats 6,7"  # no 看表帖: no id in the label


def _finished_record() -> dict[str, Any]:
    game = _tied_day("1234567890")
    game.night((1, "kill", 3))
    game.lock()  # day 2: nobody votes
    game.night((1, "kill", 4))  # the police all out: the killers win
    assert game.state.over
    record = record_of(game.state)
    findings = verify_record(record)
    assert findings and all(f.ok for f in findings)
    assert any("1234567890" in f.what for f in findings)  # the tie's lot was recomputed
    return record


def test_a_record_without_its_seed_cannot_be_verified() -> None:
    record = _finished_record()
    del record["seed"]
    findings = verify_record(record)
    assert [(f.what, f.ok) for f in findings] == [("seed", False)]


def test_a_deal_that_cannot_be_recomputed_is_a_failed_finding_not_a_crash() -> None:
    record = _finished_record()
    record["ruleset"] = "no-such-ruleset"
    findings = {f.what.split(" ")[0]: f for f in verify_record(record)}
    assert findings["commitment"].ok
    assert not findings["deal"].ok
    assert findings["deal"].detail == "cannot recompute the deal: setup.unknown_ruleset"


@pytest.mark.parametrize(
    "lot",
    [
        {"label": "lots|day 9|seats 1,2", "among": [], "drawn": "1"},
        {"among": ["1", "2"], "drawn": "1"},
        {"label": "lots|day 9|seats 1,2", "among": "1,2", "drawn": "1"},
    ],
)
def test_a_lot_without_label_or_options_fails_verification(lot: dict[str, Any]) -> None:
    record = copy.deepcopy(_finished_record())
    record["lots"].append(lot)
    bad = [f for f in verify_record(record) if not f.ok]
    assert len(bad) == 1 and bad[0].detail == "the lot has no label or options"


def test_nothing_is_drawn_from_no_options() -> None:
    with pytest.raises(ValueError, match="nothing to draw from"):
        lots.draw("seed", "label", [])
    assert lots.draw("seed", "label", ["only"]) == "only"
