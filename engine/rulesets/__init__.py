"""The registry of rulesets by id (`faguan rulesets` lists it)."""

from __future__ import annotations

from engine.errors import SetupError
from engine.rulesets.base import LastWordsPolicy, Ruleset, WinClause
from engine.rulesets.basic import Basic
from engine.rulesets.mifei import Mifei
from engine.rulesets.tianxia import Tianxia
from engine.rulesets.v1 import V1, V1Inspector
from engine.rulesets.v2 import V2
from engine.rulesets.v2_variants import V2DoctorAccomplice, V2Mine, V2MineAccomplice, V2Sapper
from engine.rulesets.v3 import V3, V3M, V3MT, V3T
from engine.rulesets.v4 import V4Butterfly, V4Lone
from engine.rulesets.v5 import V5
from engine.rulesets.v31 import V31
from engine.rulesets.wujiandao import Wujiandao
from engine.state import GameState

RULESETS: dict[str, Ruleset] = {
    r.id: r
    for r in (
        V2(), Mifei(), V3(), V3M(), V3T(), V3MT(), Basic(),
        V1(), V1Inspector(), V2Mine(), V2MineAccomplice(), V2DoctorAccomplice(), V2Sapper(),
        V31(), V4Lone(), V4Butterfly(), V5(), Tianxia(), Wujiandao(),
    )
}  # fmt: skip


def rules_for(state: GameState) -> Ruleset:
    """The ruleset of a game with the game's ruleset options in force."""
    return get_ruleset(state.ruleset).configured(state.options.extras)


def get_ruleset(ruleset_id: str) -> Ruleset:
    """The ruleset with this id, or a SetupError listing the known ids."""
    try:
        return RULESETS[ruleset_id]
    except KeyError:
        raise SetupError(
            "setup.unknown_ruleset", ruleset=ruleset_id, known=", ".join(sorted(RULESETS))
        ) from None


__all__ = ["RULESETS", "LastWordsPolicy", "Ruleset", "WinClause", "get_ruleset", "rules_for"]
