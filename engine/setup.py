"""Setting up a game: seats, the composition, the seeded deal (docs/rules.md §1 step 1, §4)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from engine import lots
from engine.errors import SetupError
from engine.events import GameCreated
from engine.model import Role, Seat, TiePolicy
from engine.rulesets import get_ruleset
from engine.rulesets.base import Composition, Ruleset
from engine.state import Options

GAME_OPTIONS = ("tie", "self_vote", "composition", "warmup")
"""Options every ruleset takes (docs/rules.md §1.2); a ruleset adds its own (`option_choices`)."""


def option_names(rules: Ruleset | None = None) -> frozenset[str]:
    """Every option a game of `rules` takes."""
    return frozenset({*GAME_OPTIONS, *(rules.option_choices if rules is not None else ())})


def read_options(raw: Mapping[str, object], rules: Ruleset | None = None) -> Options:
    """Options from a plain mapping, each checked (unknown keys refused); `rules` adds the
    ruleset's own options (e.g. the mine's side), stored with their defaults filled in."""
    own = dict(rules.option_choices) if rules is not None else {}
    known = option_names(rules)
    for key in raw:
        if key not in known:
            raise SetupError("setup.unknown_option", option=key, known=", ".join(sorted(known)))
    tie = raw.get("tie", "lots")
    try:
        policy = TiePolicy(str(tie))
    except ValueError:
        raise SetupError(
            "setup.bad_option", option="tie", value=str(tie),
            allowed=", ".join(p.value for p in TiePolicy),
        ) from None  # fmt: skip
    self_vote = raw.get("self_vote", True)
    if not isinstance(self_vote, bool):
        raise SetupError(
            "setup.bad_option", option="self_vote", value=str(self_vote), allowed="true, false"
        )
    composition = raw.get("composition", 1)
    if not isinstance(composition, int) or isinstance(composition, bool) or composition < 1:
        raise SetupError(
            "setup.bad_option", option="composition", value=str(composition), allowed="1, 2"
        )
    warmup = raw.get("warmup", 0)
    if not isinstance(warmup, int) or isinstance(warmup, bool) or not 0 <= warmup <= MAX_WARMUP:
        raise SetupError(
            "setup.bad_option", option="warmup", value=str(warmup), allowed=f"0–{MAX_WARMUP}"
        )
    extras: list[tuple[str, str]] = []
    for name, allowed in sorted(own.items()):
        value = raw.get(name, allowed[0])
        if not isinstance(value, str) or value not in allowed:
            raise SetupError(
                "setup.bad_option", option=name, value=str(value), allowed=", ".join(allowed)
            )
        extras.append((name, value))
    return Options(
        tie=policy,
        self_vote=self_vote,
        composition=composition,
        warmup=warmup,
        extras=tuple(extras),
    )


MAX_WARMUP = 7 * 24 * 60
"""The longest warm-up, in minutes (a week)."""


def _pick_composition(
    choices: Sequence[Composition], fixed: Counter[Role], wanted: int, ruleset: str, players: int
) -> Composition:
    """The composition in force: the one asked for, or the first that fits the fixed roles."""
    if wanted > len(choices):
        raise SetupError(
            "setup.bad_option", option="composition", value=str(wanted),
            allowed=", ".join(str(i + 1) for i in range(len(choices))),
        )  # fmt: skip
    ordered = [choices[wanted - 1]] + [c for i, c in enumerate(choices) if i != wanted - 1]
    for choice in ordered if fixed else ordered[:1]:
        if all(fixed[role] <= choice.get(role, 0) for role in fixed):
            return choice
    table = " | ".join(", ".join(f"{r.value}×{n}" for r, n in c.items()) for c in choices)
    raise SetupError("setup.roles_do_not_fit", ruleset=ruleset, players=players, table=table)


def new_game(
    *,
    ruleset: str,
    players: Sequence[str],
    seed: str,
    options: Mapping[str, object] | None = None,
    roles: Mapping[str, str] | None = None,
) -> GameCreated:
    """The first event of a game: roles given explicitly are kept, the rest dealt from the seed."""
    rules = get_ruleset(ruleset)
    n = len(players)
    rules.check_player_count(n)
    if len(set(players)) != n:
        dup = next(p for p in players if list(players).count(p) > 1)
        raise SetupError("setup.duplicate_player", player=dup)
    opts = read_options(options or {}, rules)
    rules = rules.configured(opts.extras)
    cards = rules.cards_per_player
    names = card_names(players, cards)
    fixed: dict[int, Role] = {}
    for player, role_id in (roles or {}).items():
        if player not in names:
            raise SetupError("setup.unknown_player", player=player)
        try:
            fixed[names.index(player)] = Role(role_id)
        except ValueError:
            raise SetupError("setup.unknown_role", role=role_id, player=player) from None
    composition = _pick_composition(  # every fixed role is in it (a role of no table: refused)
        rules.compositions(n), Counter(fixed.values()), opts.composition, ruleset, n
    )
    remaining = Counter(composition)
    remaining.subtract(Counter(fixed.values()))
    to_deal = sorted(remaining.elements(), key=lambda r: r.value)
    dealt_seats = [i for i in range(len(names)) if i not in fixed]
    label = lots.deal_label(ruleset, n)
    for attempt in range(MAX_DEALS):
        shuffled = lots.shuffle(seed, label if not attempt else f"{label}|again {attempt}", to_deal)
        final = dict(fixed)
        final.update(zip(dealt_seats, shuffled, strict=True))
        dealt = tuple(final[i] for i in range(len(names)))
        if rules.deal_allowed([dealt[i : i + cards] for i in range(0, len(dealt), cards)]):
            break
    else:
        raise SetupError("setup.deal_refused", ruleset=ruleset, players=n)
    return GameCreated(
        ruleset=ruleset,
        players=tuple(p for p in players for _ in range(cards)),
        roles=dealt,
        dealt=tuple(Seat(i + 1) for i in dealt_seats),
        seed=seed,
        commitment=lots.commitment(seed),
        options=opts,
    )


MAX_DEALS = 100
"""A deal the ruleset refuses is dealt again (label `…|again k`); past this many, setup fails."""


def card_names(players: Sequence[str], cards: int) -> list[str]:
    """Each seat's name: the player's, or `name#1`, `name#2` … where a player holds several
    cards (the replay's `[roles]` and the record name cards so)."""
    if cards == 1:
        return list(players)
    return [f"{p}#{k}" for p in players for k in range(1, cards + 1)]
