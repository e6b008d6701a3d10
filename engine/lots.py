"""Fair randomness by commit and reveal (docs/rules.md §4).

The game's secret seed is committed at the start as SHA-256(seed). Every draw is
HMAC-SHA256(key=seed, msg=label) read as a big-endian integer, reduced modulo the number of
options; the label names the draw and its public inputs, so anyone holding the published seed and
the record can recompute it (`faguan verify`). The deal is a Fisher–Yates shuffle whose i-th swap
is the draw labelled `<deal label>|<i>`.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def commitment(seed: str) -> str:
    """The public commitment to a seed: the hex SHA-256 of its UTF-8 bytes."""
    return hashlib.sha256(seed.encode("utf-8")).hexdigest()


def draw_number(seed: str, label: str) -> int:
    """The raw draw for a label: HMAC-SHA256(seed, label) as an unsigned big-endian integer."""
    digest = hmac.new(seed.encode("utf-8"), label.encode("utf-8"), hashlib.sha256).digest()
    return int.from_bytes(digest, "big")


def draw(seed: str, label: str, options: Sequence[T]) -> T:
    """Draw one of `options` (in the order given) for `label`."""
    if not options:
        raise ValueError("nothing to draw from")
    return options[draw_number(seed, label) % len(options)]


def shuffle(seed: str, label: str, items: Sequence[T]) -> list[T]:
    """Fisher–Yates shuffle of `items`; swap i (from the last index down to 1) uses `label|i`."""
    out = list(items)
    for i in range(len(out) - 1, 0, -1):
        j = draw_number(seed, f"{label}|{i}") % (i + 1)
        out[i], out[j] = out[j], out[i]
    return out


def deal_label(ruleset: str, players: int) -> str:
    """The label of a game's deal."""
    return f"deal|{ruleset}|{players} players"


def day_lots_label(day: int, seats: Sequence[int], revote: int, post_id: str | None) -> str:
    """The label of a tie draw on a day: `lots|day 3|seats 4,9` (+ `|revote k`, + `|<post id>`)."""
    label = f"lots|day {day}|seats {','.join(str(s) for s in seats)}"
    if revote:
        label += f"|revote {revote}"
    if post_id:
        label += f"|{post_id}"
    return label


def team_lots_label(night: int, power: str, options: Sequence[str]) -> str:
    """The label of a draw between a team's tied choices: `team|night 2|kill|4,9`."""
    return f"team|night {night}|{power}|{','.join(options)}"
