"""Check a finished game's record against its published seed (docs/rules.md §4).

Pure: given the record (as `faguan replay --json` and `/game record` write it), recompute the
commitment, the deal and every lot, and report each as matching or not, naming what differs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engine import lots
from engine.errors import EngineError
from engine.setup import card_names, new_game


@dataclass(frozen=True, kw_only=True, slots=True)
class Finding:
    """One recomputed item: what it is, whether it matches, and the difference if not.

    `checked` is False when the record lacks what the item needs (a key, a known ruleset): it
    was not compared, which says nothing of an alteration. `key` and `params` are then the
    engine's refusal, if one stopped it, for the shell to render (the engine has no prose)."""

    what: str
    ok: bool
    detail: str = ""
    checked: bool = True
    key: str = ""
    params: Mapping[str, object] = field(default_factory=dict)


NEEDED = ("commitment", "ruleset", "players", "options", "roles", "deal", "lots", "phases")
"""The keys verification reads beside the seed: every record faguan writes has them."""


def verify_record(record: Mapping[str, Any]) -> list[Finding]:
    """Recompute the commitment, the deal and every lot of a record."""
    findings: list[Finding] = []
    seed = record.get("seed")
    if not isinstance(seed, str):
        detail = "not a complete game record: no published `seed`"
        return [Finding(what="seed", ok=False, detail=detail, checked=False)]
    absent = [key for key in NEEDED if key not in record]
    if absent:  # not read as empty: with no `deal` every role is fixed, and the deal "matches"
        detail = "not a complete game record: no " + ", ".join(f"`{k}`" for k in absent)
        return [Finding(what="record", ok=False, detail=detail, checked=False)]
    problem = _shape_problem(record)
    if problem:  # a key faguan writes, in a shape it never writes: changed since
        return [Finding(what="record", ok=False, detail=problem)]
    expected = lots.commitment(seed)
    findings.append(
        Finding(
            what="commitment",
            ok=expected == record.get("commitment"),
            detail=f"SHA-256 of the seed is {expected}, the record says {record.get('commitment')}",
        )
    )
    findings.append(_verify_deal(record, seed))
    for draw in record.get("lots", []):
        findings.append(_verify_draw(seed, draw, "lot"))
    for phase in record.get("phases", []):
        tie = phase.get("tie")
        if isinstance(tie, Mapping) and tie.get("then") == "lots":
            where = f"tie of {phase.get('phase')} {phase.get('number')}"
            draw = {"label": tie.get("label"), "among": tie.get("tied"), "drawn": tie.get("drawn")}
            findings.append(_verify_draw(seed, draw, where))
    return findings


def _is_str_list(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _shape_problem(record: Mapping[str, Any]) -> str:
    """What is malformed in the parts of a record that verification reads ("" if nothing): a
    record from outside is read as data, never trusted to have the shape we write."""
    roles, deal = record["roles"], record["deal"]
    if not _is_str_list(record["players"]):
        return "`players` must be a list of names"
    if not isinstance(roles, Mapping) or not all(isinstance(r, str) for r in roles.values()):
        return "`roles` must map each name to a role id"
    if not isinstance(deal, Mapping) or not _is_str_list(deal.get("dealt")):
        return "`deal` must be an object whose `dealt` lists names"
    if not isinstance(record["options"], Mapping):
        return "`options` must be an object"
    for key in ("lots", "phases"):
        items = record[key]
        if not isinstance(items, list) or not all(isinstance(i, Mapping) for i in items):
            return f"`{key}` must be a list of objects"
    return ""


def _verify_deal(record: Mapping[str, Any], seed: str) -> Finding:
    players = list(record.get("players", []))
    roles: Mapping[str, str] = record.get("roles", {})
    deal = record.get("deal", {})
    dealt = set(deal.get("dealt", []))
    fixed = {p: r for p, r in roles.items() if p not in dealt}
    try:
        created = new_game(
            ruleset=str(record.get("ruleset")),
            players=players,
            seed=seed,
            options=dict(record.get("options", {})),
            roles=fixed,
        )
    except EngineError as exc:
        return Finding(
            what="deal",
            ok=False,
            detail=f"cannot recompute the deal: {exc.key}",
            checked=False,
            key=exc.key,
            params=exc.params,
        )
    names = card_names(players, len(created.roles) // max(1, len(players)))
    differ = [
        f"{p}: dealt {r.value}, the record says {roles.get(p)}"
        for p, r in zip(names, created.roles, strict=True)
        if roles.get(p) != r.value
    ]
    return Finding(what=f"deal ({deal.get('label', '')})", ok=not differ, detail="; ".join(differ))


def _verify_draw(seed: str, draw: Mapping[str, Any], what: str) -> Finding:
    label = draw.get("label")
    among = draw.get("among")
    if not isinstance(label, str) or not isinstance(among, list) or not among:
        return Finding(what=f"{what} {label}", ok=False, detail="the lot has no label or options")
    drawn = lots.draw(seed, label, among)
    return Finding(
        what=f"{what} {label}",
        ok=drawn == draw.get("drawn"),
        detail=(
            f"the seed draws {drawn} among {', '.join(map(str, among))};"
            f" the record says {draw.get('drawn')}"
        ),
    )
