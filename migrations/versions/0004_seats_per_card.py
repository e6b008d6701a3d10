"""Seat rows per card: a 5.0 (双身份) game's rows rebuilt from its deal.

The store keeps who holds each seat (`seats`: term 0 the player dealt it, then each substitute),
and everything that reads it — a role DM's confirm button, `/mod pending`, a command in a DM
finding its game — names a seat as the engine does: a card. Before, a game was given one row per
player (seat i for the i-th player), right where each player holds one card, wrong in 5.0, where
each holds two; and a substitute was given a row for the one card the replacement named, where
the engine hands them every card of the player replaced. This rebuilds the rows of every game
whose deal gives a player more than one card (its first event, `GameCreated.players`: each card's
holder), finished or not: term 0 of each card its dealt holder (name and time from their old
row), then each substitute's row, in the order they came, on every card the one they replaced
held then. Other games are left as they are: their rows were right.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-08
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

EVENTS = sa.table("events", sa.column("game_id"), sa.column("seq"), sa.column("payload"))
SEATS = sa.table(
    "seats",
    sa.column("game_id"),
    sa.column("seat"),
    sa.column("term"),
    sa.column("user_id"),
    sa.column("name"),
    sa.column("since_seq"),
    sa.column("since"),
)


def upgrade() -> None:
    bind = op.get_bind()
    deals = bind.execute(sa.select(EVENTS.c.game_id, EVENTS.c.payload).where(EVENTS.c.seq == 1))
    for game_id, payload in deals.all():
        data = json.loads(payload) if isinstance(payload, str) else payload
        cards = [str(p) for p in (data or {}).get("players") or ()]
        if len(set(cards)) == len(cards):
            continue  # a card each: its rows are per card already
        old = bind.execute(sa.select(SEATS).where(SEATS.c.game_id == game_id)).mappings().all()
        rows = rebuilt(game_id, cards, [dict(row) for row in old])
        bind.execute(sa.delete(SEATS).where(SEATS.c.game_id == game_id))
        if rows:
            bind.execute(sa.insert(SEATS), rows)


def rebuilt(game_id: int, cards: list[str], old: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows of a game dealt `cards` (each card's holder, by player id) from its old rows."""
    first = {_key(row): row for row in old if row["term"] == 0}
    holders: dict[int, Any] = {}
    rows = []
    for card, player in enumerate(cards, 1):
        dealt = first.get(int(player) if player.isdigit() else player)
        if dealt is None:  # not in the old rows: nothing to take a name from
            continue
        holders[card] = _key(dealt)
        rows.append({**dealt, "game_id": game_id, "seat": card, "term": 0})
    terms = dict.fromkeys(holders, 0)
    for sub in sorted((r for r in old if r["term"] > 0), key=lambda r: (r["since_seq"], r["seat"])):
        replaced = holders.get(sub["seat"])
        for card in [c for c, holder in holders.items() if holder == replaced]:
            terms[card] += 1
            holders[card] = _key(sub)
            rows.append({**sub, "game_id": game_id, "seat": card, "term": terms[card]})
    return rows


def _key(row: Any) -> Any:
    """Who holds a row: their user id, or a replay's player name when it has none."""
    return row["user_id"] if row["user_id"] is not None else row["name"]


def downgrade() -> None:
    """Nothing to undo: rows per card are what the code before read, too (only wrongly)."""
