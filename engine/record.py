"""The game record (docs/replay.md), built from a state.

Pure: the same record for `faguan replay`, `/game record` and `faguan verify`. Players are named by
their seat's original player (substitutes are listed under `substitutes`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from engine import lots
from engine.model import Seat
from engine.rulesets import rules_for
from engine.setup import MAX_DEALS
from engine.state import (
    CheckRecord,
    DayRecord,
    GameState,
    LastActRecord,
    NightRecord,
    OverrideRecord,
    SeatState,
    TieRecord,
    VotePost,
)


def holders(seat: SeatState) -> tuple[str, ...]:
    """A seat's holders, oldest first: the player dealt into it, then each substitute."""
    return (*seat.former_players, seat.player)


def unique_names(ids: list[str], names: Mapping[str, str]) -> dict[str, str]:
    """Each player id's name (`names`, else the id), in order; a name an earlier player already
    has becomes `name (2)`, `name (3)` …, never one another player is given. Unique names (a
    replay's players) are kept as they are."""
    given = {who: names.get(who, who) for who in ids}
    taken = set(given.values())
    out: dict[str, str] = {}
    used: set[str] = set()
    for who, name in given.items():
        k = 1
        while name in used or (k > 1 and name in taken):
            k += 1
            name = f"{given[who]} ({k})"
        used.add(name)
        out[who] = name
    return out


def deal_label(state: GameState) -> str:
    """The label the game's deal was drawn with (docs/fairness.md step 3):
    `deal|<ruleset>|<N> players`, N counting players (not cards: 5.0 deals two a player), plus
    `|again k` where the ruleset refused k deals before it (5.0: a killer and a police in one
    hand). The deal is drawn again here from the seed, as `engine.setup.new_game` draws it: the
    roles dealt sorted by id, shuffled for each label in turn until the ruleset allows the hands
    (the seats a moderator fixed keep their roles)."""
    rules = rules_for(state)
    cards = rules.cards_per_player
    label = lots.deal_label(state.ruleset, len(state.seats) // cards)
    to_deal = sorted((state.seat(s).original_role for s in state.dealt), key=lambda r: r.value)
    for attempt in range(MAX_DEALS):
        drawn = label if not attempt else f"{label}|again {attempt}"
        shuffled = dict(zip(state.dealt, lots.shuffle(state.seed, drawn, to_deal), strict=True))
        roles = [shuffled.get(s.seat, s.original_role) for s in state.seats]
        if rules.deal_allowed([tuple(roles[i : i + cards]) for i in range(0, len(roles), cards)]):
            return drawn
    return label  # never: a game whose deal no label allows was refused at its setup


def record_of(
    state: GameState,
    *,
    rejected: list[dict[str, Any]] | None = None,
    overrides: list[dict[str, Any]] | None = None,
    player_names: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The record as a JSON-ready dict; names everywhere in seat order. A seat is named by its
    original player (by default their id; the bot passes `player_names`: id → display name, for
    every holder, substitutes too), `name#1`, `name#2` … where that player holds several cards."""
    ids = [holders(s)[0] for s in state.seats] + [w for s in state.seats for w in holders(s)[1:]]
    named_ids = unique_names(list(dict.fromkeys(ids)), player_names or {})
    cards = Counter(holders(s)[0] for s in state.seats)
    dealt: Counter[str] = Counter()
    names: dict[Seat, str] = {}
    for s in state.seats:
        first = holders(s)[0]
        dealt[first] += 1
        suffix = f"#{dealt[first]}" if cards[first] > 1 else ""
        names[s.seat] = named_ids[first] + suffix
    players = [named_ids[who] for who in cards]

    def named(seats: tuple[Seat, ...]) -> list[str]:
        return [names[s] for s in sorted(seats)]

    # A post valid when made may be void at the lock (stamped after the deadline, its target
    # gone): its `void` is that reason, as `invalid` counts it (every group's, on a 无间道 day).
    void_at_lock: dict[tuple[int, int], dict[str, VotePost]] = {}
    for entry in state.history:
        if isinstance(entry, DayRecord):
            window = void_at_lock.setdefault((entry.number, entry.revote), {})
            window.update({p.post_id: p for p in entry.void_posts})
    phases: list[dict[str, Any]] = []
    for entry in state.history:
        if isinstance(entry, NightRecord):
            night: dict[str, Any] = {
                "phase": "night",
                "number": entry.number,
                "left": named(entry.left),
                "checks": [_check(c, names) for c in entry.checks],
                "last_words": named(entry.last_words),
            }
            if entry.revealed:
                night["revealed"] = {names[s]: v for s, v in sorted(entry.revealed)}
            if entry.silenced:
                night["silenced"] = named(entry.silenced)
            if entry.virtual_out:
                night["virtual_out"] = list(entry.virtual_out)
            phases.append(night)
        elif isinstance(entry, DayRecord):
            phases.append(_day(entry, names, named, void_at_lock[entry.number, entry.revote]))
        elif isinstance(entry, LastActRecord):
            act: dict[str, Any] = {
                "phase": entry.phase.kind.value,
                "number": entry.phase.number,
                "last_act": {
                    "by": names[entry.by],
                    "power": entry.power.value,
                    "target": names[entry.target] if entry.target is not None else None,
                },
                "left": named(entry.left),
                "last_words": named(entry.last_words),
            }
            if entry.revealed:
                act["revealed"] = {names[s]: v for s, v in sorted(entry.revealed)}
            phases.append(act)
    subs = {
        names[s.seat]: [named_ids[who] for who in holders(s)[1:]]
        for s in state.seats
        if s.former_players
    }
    record: dict[str, Any] = {
        "ruleset": state.ruleset,
        "commitment": state.commitment,
        "seed": state.seed,
        "players": players,
        "options": {
            "tie": state.options.tie.value,
            "self_vote": state.options.self_vote,
            "composition": state.options.composition,
            **({"warmup": state.options.warmup} if state.options.warmup else {}),
            **dict(state.options.extras),
        },
        "roles": {names[s.seat]: s.original_role.value for s in state.seats},
        "deal": {
            "label": deal_label(state),
            "dealt": [names[s] for s in state.dealt],
        },
        "phases": phases,
        "lots": [
            {
                "label": d.label,
                "among": [_lot_name(x, names) for x in d.among],
                "drawn": _lot_name(d.drawn, names),
            }
            for d in state.lots
        ],
        "rejected": rejected or [],
        "overrides": overrides if overrides is not None else _overrides(state, names, named_ids),
        "result": None,
    }
    if subs:
        record["substitutes"] = subs
    if state.posts:  # a day window no lock closed: the game ended in it (/mod end, a removal)
        record["unlocked_posts"] = [_post(p, names) for p in state.posts]
    if state.result:
        r = state.result
        record["result"] = {
            "winner": r.winner.value,
            "after": r.after,
            "reason": r.reason,
            "reason_key": r.reason,
            "scores": {names[s]: points for s, points in r.scores},
        }
    return record


def _check(check: CheckRecord, names: dict[Seat, str]) -> dict[str, Any]:
    """A check: target and answer; a check made alone (not by a team) also names who made it."""
    out: dict[str, Any] = {"target": names[check.target], "result": check.result.value}
    if check.team is None:
        out["by"] = [names[s] for s in check.by]
    return out


def _lot_name(option: str, names: dict[Seat, str]) -> str:
    return names[Seat(int(option))] if option.isdigit() else option


def _day(
    entry: DayRecord, names: dict[Seat, str], named: Any, void: Mapping[str, VotePost]
) -> dict[str, Any]:
    day: dict[str, Any] = {"phase": "day", "number": entry.number}
    if entry.revote:
        day["revote"] = entry.revote
    if entry.group is not None:
        day["group"] = entry.group
    day.update(
        {
            "tally": {names[s]: n for s, n in entry.tally},
            "votes": {names[v]: (names[t] if t is not None else "abstain") for v, t in entry.votes},
            "abstained": named(entry.abstained),
            "invalid": len(entry.void_posts),
            "left": named(entry.left),
            "tie": _tie(entry.tie, names, named),
            "last_words": named(entry.last_words),
        }
    )
    if entry.confess is not None:
        day["confess"] = names[entry.confess]
    if entry.vetoed is not None and entry.veto_by is not None:
        day["vetoed"] = names[entry.vetoed]
        day["veto_by"] = names[entry.veto_by]
    if entry.eliminated is not None:
        day["eliminated"] = names[entry.eliminated]
    if entry.spared is not None:
        day["spared"] = names[entry.spared]
    if entry.revealed:
        day["revealed"] = {names[s]: v for s, v in sorted(entry.revealed)}
    if entry.posts:
        day["posts"] = [
            _post(void.get(p.post_id, p) if p.void_reason is None else p, names)
            for p in entry.posts
        ]
    return day


def iso_ms(at: int) -> str:
    """An Instant as ISO 8601 UTC with milliseconds (`2026-01-01T12:00:00.000Z`)."""
    when = datetime.fromtimestamp(at / 1000, UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at % 1000:03d}Z"


def _post(post: VotePost, names: dict[Seat, str]) -> dict[str, Any]:
    """One vote post of a window: who, for whom, when, its id, and why it is void (if it is)."""
    if post.abstain:
        target: str | None = "abstain"
    else:
        target = names.get(post.target) if post.target is not None else None
    return {
        "post_id": post.post_id,
        "by": names[post.seat] if post.seat is not None else None,
        "author": post.author,
        "target": target,
        "at": iso_ms(post.at) if post.at is not None else None,
        "void": post.void_reason,
    }


def _tie(tie: TieRecord | None, names: dict[Seat, str], named: Any) -> dict[str, Any] | None:
    if tie is None:
        return None
    out: dict[str, Any] = {"tied": named(tie.tied), "policy": tie.policy.value, "then": tie.then}
    if tie.drawn is not None:
        out["drawn"] = names[tie.drawn]
    if tie.label is not None:
        out["label"] = tie.label
    if tie.chooser is not None:
        out["chooser"] = names[tie.chooser]
    return out


def _overrides(
    state: GameState, names: dict[Seat, str], named_ids: dict[str, str]
) -> list[dict[str, Any]]:
    """The moderators' commands from the game's log; a command on a seat also names its `target`
    (a replace: the player replaced, and the substitute as `player`), as a replay's steps do."""
    out: list[dict[str, Any]] = []
    replaced: Counter[str] = Counter()  # replacements so far, by the seat's original player
    for entry in state.history:
        if isinstance(entry, OverrideRecord):
            item: dict[str, Any] = {
                "command": entry.command,
                "phase": entry.phase.label() if entry.phase else None,
            }
            item.update(dict(entry.details))
            seat = Seat(int(item["seat"])) if str(item.get("seat", "")).isdigit() else None
            if seat is not None and entry.command == "replace":
                chain = holders(state.seat(seat))
                k = replaced[chain[0]]
                replaced[chain[0]] += 1
                item["target"], item["player"] = named_ids[chain[k]], named_ids[chain[k + 1]]
            elif seat is not None:
                item["target"] = names[seat]
            if entry.at is not None:
                item["at"] = iso_ms(entry.at)
            if entry.left:
                item["left"] = [names[s] for s in entry.left]
                item["last_words"] = [names[s] for s in entry.last_words]
            out.append(item)
    return out
