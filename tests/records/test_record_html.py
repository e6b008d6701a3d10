"""The HTML record's roles table and vote tables name seats as the JSON record does: in 5.0
(v5) a player holds two cards, each a seat of its own (`A#1`, `A#2` in `roles` and `scores`),
so the page has a row for each card with its role, as the text record (`forum_text`) has a line
for each; a substitute is shown on the seat they took over."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path
from typing import Any

import pytest

from bot.records.forum_text import forum_text
from bot.records.i18n import LOCALES, render
from bot.records.record_html import record_page, with_links
from bot.records.replay import load_file, run

GAMES = Path(__file__).resolve().parents[1] / "games"
V5 = GAMES / "v5" / "v5_01_hug_weights_evil_doctor_good.toml"
V2 = GAMES / "v2" / "example_whole_game.toml"

ROW = re.compile(r"<tr><td>(\d+)</td><td>(.*?)</td><td>(.*?)</td><td>(.*?)</td></tr>")
"""A row of the roles table (the vote tables have three columns, not four)."""


def roles_table(page: str) -> list[tuple[int, str, str, str]]:
    """The roles table's rows: number, player (with any substitutes), role, score."""
    return [
        (int(n), unescape(who), unescape(role), score) for n, who, role, score in ROW.findall(page)
    ]


def vote_rows(page: str) -> list[tuple[str, str]]:
    """Every vote table's rows: voter, vote."""
    return re.findall(
        r"<tr><td>([^<]*)</td><td>([^<]*)</td><td>(?:<a [^>]*>[^<]*</a>)?</td></tr>", page
    )


def played(path: Path, *steps: dict[str, Any]) -> dict[str, Any]:
    data = load_file(path)
    data["steps"] = [*steps, *data["steps"]]
    return run(data).record


@pytest.mark.parametrize("locale", LOCALES)
def test_a_two_card_player_has_a_row_for_each_card_with_its_role(locale: str) -> None:
    # Before: one row a player ("A"), looked up in `roles` and `scores`, which name cards
    # ("A#1", "A#2"): every role and score of a 5.0 game was shown as "—".
    record = run(load_file(V5)).record
    assert len(record["roles"]) == 2 * len(record["players"])
    page = record_page(with_links(record, 1, 2), locale)
    rows = roles_table(page)

    assert all("—" not in (role, score) for _, _, role, score in rows)
    assert [(n, who) for n, who, _, _ in rows] == list(enumerate(record["roles"], 1))
    assert [role for _, _, role, _ in rows] == [
        render(locale, f"role.{role}", {}) for role in record["roles"].values()
    ]
    assert [score for _, _, _, score in rows] == [
        str(v) for v in record["result"]["scores"].values()
    ]
    by_card = {who: role for _, who, role, _ in rows}
    assert (by_card["A#1"], by_card["A#2"]) == (
        render(locale, "role.killer", {}),
        render(locale, "role.doctor", {}),
    )
    # the text record has a line for each card, with the same role and score
    text = forum_text(record, locale)
    for _, who, role, score in rows:
        line = render(locale, "record.score_line", {"name": who, "role": role, "points": score})
        assert line in text


def test_a_two_card_players_votes_are_in_the_day_tables_and_pictures() -> None:
    # Before: the vote tables looked voters up by player name too, and were empty in 5.0.
    record = run(load_file(V5)).record
    page = record_page(record, "en")
    days = [p for p in record["phases"] if p["phase"] == "day"]
    wanted = [
        (voter, "abstain" if to == "abstain" else to)
        for day in days
        for voter, to in day["votes"].items()
    ]
    shown = [
        (voter, "abstain" if to == render("en", "notice.abstain", {}) else to)
        for voter, to in vote_rows(page)
    ]
    assert sorted(shown) == sorted(wanted)
    arrows = sum(to != "abstain" for day in days for to in day["votes"].values())
    assert page.count("<line ") == arrows


def test_a_substitute_for_a_two_card_player_is_shown_on_both_cards() -> None:
    record = played(V5, {"do": "mod", "command": "replace", "target": "C#2", "player": "Sub"})
    assert record["substitutes"] == {"C#1": ["Sub"], "C#2": ["Sub"]}
    rows = {who: role for _, who, role, _ in roles_table(record_page(record, "en"))}

    assert rows["C#1 → Sub"] == render("en", "role.butterfly", {})
    assert rows["C#2 → Sub"] == render("en", "role.civilian", {})
    assert len(rows) == len(record["roles"])


def test_a_substitute_in_a_one_card_game_keeps_the_row_of_the_seat() -> None:
    data = load_file(V2)
    first = data["players"][4]
    record = played(V2, {"do": "mod", "command": "replace", "target": first, "player": "Sub"})
    assert record["substitutes"] == {first: ["Sub"]}
    rows = roles_table(record_page(record, "zh-CN"))

    assert [(n, who) for n, who, _, _ in rows] == [
        (n, f"{p} → Sub" if p == first else p) for n, p in enumerate(record["players"], 1)
    ]
    assert [role for _, _, role, _ in rows] == [
        render("zh-CN", f"role.{record['roles'][p]}", {}) for p in record["players"]
    ]
    assert all(role != "—" for _, _, role, _ in rows)


V1_CHOICE = GAMES / "v1" / "v1_02_victim_chooses_good_wins.toml"


@pytest.mark.parametrize(
    ("locale", "handed", "chosen"),
    [
        ("zh-CN", "A、B 平票，由 G 选择", "A、B 平票，G 选择了 A"),
        ("en", "tied: G chooses", "tied: G chose A"),
    ],
)
def test_a_victims_choice_says_whom_the_chooser_picked(
    locale: str, handed: str, chosen: str
) -> None:
    """v1's tie rule: the run-off tied again, night 1's victim (G) picks among A and B. The
    run-off's entry says G chooses; the choice's entry says whom G chose (the record's
    `tie.drawn`), as the judge's post did (`tie.chosen`) — before, it only said G chooses again."""
    record = run(load_file(V1_CHOICE)).record
    ties = [p["tie"] for p in record["phases"] if p.get("tie")]
    assert ties[-1] == {
        "tied": ["A", "B"], "policy": "victim_choice", "then": "choice", "drawn": "A",
        "chooser": "G",
    }  # fmt: skip
    text = forum_text(record, locale)
    page = unescape(record_page(record, locale))
    for shown in (text, page):
        assert shown.count(chosen) == 1, shown
        assert shown.count(handed) == 1, shown  # the run-off that handed G the choice


def test_the_posts_no_lock_counted_are_linked_in_the_last_days_vote_post() -> None:
    """`unlocked_posts` (a day the game ended in) get their links as a day's posts do: in a
    forum game, in the last day's 投票帖."""
    posts = [{"post_id": "123", "by": "A"}, {"post_id": "not-discord", "by": "B"}]
    record = {"phases": [], "unlocked_posts": posts}
    in_text = with_links(record, 1, 2)["unlocked_posts"]
    assert in_text[0]["link"] == "https://discord.com/channels/1/2/123"
    assert "link" not in in_text[1]
    in_forum = with_links(record, 1, 2, {1: 30, 2: 40})["unlocked_posts"]
    assert in_forum[0]["link"] == "https://discord.com/channels/1/40/123"


@pytest.mark.parametrize("locale", LOCALES)
def test_the_posts_no_lock_counted_are_shown_in_the_page(locale: str) -> None:
    """A game ended in a day window (/mod end): its posts had no place in the page."""
    record = run(load_file(V2)).record
    record["unlocked_posts"] = [
        {"post_id": "1", "by": "A", "author": "A", "target": "B", "at": None, "void": None},
        {
            "post_id": "2",
            "by": "C",
            "author": "C",
            "target": "abstain",
            "at": None,
            "void": "vote.voided_by_moderator",
        },
    ]
    page = record_page(with_links(record, 1, 2), locale)
    assert render(locale, "html.unlocked_posts", {}) in unescape(page)
    assert "A → B" in unescape(page)
    abstain = render(locale, "notice.abstain", {})
    voided = render(locale, "void_reason.voided_by_moderator", {})
    assert f"C → {abstain} ({voided})" in unescape(page)
    assert "unlocked_posts" not in run(load_file(V2)).record  # a game played to its end
