"""A game record as a forum judge would post it (Chinese by default): night by night, day by day."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.records.i18n import render

SEP = "、"
"""Between the names of a list, in zh-CN text (English text: ", "; `marks`)."""


def marks(locale: str) -> tuple[str, str]:
    """The marks a record's text joins with in a locale: between the names of a list, and
    between groups (a day's tally lines, the roles revealed): 「A、B」「…；…」 in zh-CN,
    "A, B" "…; …" in English (the game's own terms stay Chinese there, its punctuation not)."""
    return (SEP, "；") if locale == "zh-CN" else (", ", "; ")


def forum_text(record: Mapping[str, Any], locale: str = "zh-CN") -> str:
    """The whole record as readable text."""

    def t(key: str, **params: object) -> str:
        return render(locale, key, params)

    sep, between = marks(locale)
    lines = [
        t("record.title", ruleset=record["ruleset"]),
        t("record.commitment", commitment=record["commitment"]),
        "",
    ]
    for phase in record["phases"]:
        head = t(f"record.{phase['phase']}", number=phase["number"])
        if phase.get("revote"):
            head += t("record.revote", revote=phase["revote"])
        lines.append(head)
        if "tally" in phase:
            lines.extend(_day_lines(phase, t, sep, between))
        if phase.get("confess"):
            lines.append("  " + t("record.confess", name=phase["confess"]))
        if phase.get("vetoed"):
            lines.append("  " + t("record.vetoed", name=phase["vetoed"]))
        left = phase.get("left", [])
        lines.append(
            "  " + (t("record.left", names=sep.join(left)) if left else t("record.nobody_left"))
        )
        for check in phase.get("checks", []):
            result = render(locale, f"check.{check['result']}")
            if check.get("by"):
                line = t(
                    "record.check_by",
                    by=sep.join(check["by"]),
                    target=check["target"],
                    result=result,
                )
            else:
                line = t("record.check", target=check["target"], result=result)
            lines.append("  " + line)
        for name, shown in phase.get("revealed", {}).items():
            lines.append(
                "  " + t("record.revealed", name=name, shown=render(locale, f"role.{shown}"))
            )
        if phase.get("last_words"):
            lines.append("  " + t("record.last_words", names=sep.join(phase["last_words"])))
    for item in record.get("rejected", []):
        lines.append(t("record.rejected", step=item["step"], reason=item["reason"]))
    lines.append("")
    outcome: Mapping[str, Any] | None = record.get("result")
    if not outcome:
        lines.append(t("record.unfinished"))
        return "\n".join(lines)
    winner = render(locale, f"camp.{outcome['winner']}")
    reason = render(locale, outcome["reason_key"]) if "reason_key" in outcome else outcome["reason"]
    after = _phase_name(str(outcome["after"]), t)
    lines.append(t("record.result", winner=winner, after=after, reason=reason))
    lines.append(t("record.scores"))
    for name, points in outcome["scores"].items():
        role = render(locale, f"role.{record['roles'][name]}")
        lines.append("  " + t("record.score_line", name=name, role=role, points=points))
    lines.append(t("record.seed", seed=record["seed"]))
    return "\n".join(lines)


def _day_lines(phase: Mapping[str, Any], t: Any, sep: str, between: str) -> list[str]:
    out: list[str] = []
    tally = phase.get("tally", {})
    if tally:
        votes = phase.get("votes")
        if isinstance(votes, Mapping):
            parts = [
                t(
                    "record.tally_line",
                    target=k,
                    voters=sep.join(v for v, x in votes.items() if x == k),
                    count=n,
                )
                for k, n in tally.items()
            ]
        else:
            parts = [t("record.tally_counts", target=k, count=n) for k, n in tally.items()]
        out.append("  " + t("record.tally", lines=between.join(parts)))
    if phase.get("abstained"):
        out.append("  " + t("record.abstained", names=sep.join(phase["abstained"])))
    if phase.get("invalid"):
        out.append("  " + t("record.invalid", count=phase["invalid"]))
    tie = phase.get("tie")
    if tie:
        names = sep.join(tie["tied"])
        out.append(
            "  "
            + t(
                tie_key(tie),
                names=names,
                drawn=tie.get("drawn", ""),
                label=tie.get("label", ""),
                chooser=tie.get("chooser", ""),
            )
        )
    return out


def tie_key(tie: Mapping[str, Any]) -> str:
    """The text of how a tie was settled: a victim's choice made (its pick, `drawn`, in the
    record) says whom the chooser picked, as the judge's post did (`tie.chosen`); the run-off
    that handed them the choice says who chooses."""
    if tie["then"] == "choice" and tie.get("drawn"):
        return "record.tie_chosen"
    return {
        "lots": "record.tie_lots",
        "revote": "record.tie_revote",
        "none": "record.tie_none",
        "draw": "record.tie_draw",
        "choice": "record.tie_choice",
    }[tie["then"]]


def _phase_name(label: str, t: Any) -> str:
    """`day 2` → 第2天 / Day 2."""
    kind, _, number = label.partition(" ")
    return t(f"record.{kind}", number=number) if kind in ("night", "day") else label
