"""What the judge's public posts say, as players read them (zh-CN and en): a victim's choice, a
lapsed choice, last-words invitations, run-off 看表帖s, the vote table's wording, late posts, the
forum 投票帖's abstention word (docs/rulings.md)."""

from __future__ import annotations

import re
from zoneinfo import ZoneInfo

import pytest
from gamekit import CardGame, Game

from bot.records.i18n import catalog
from bot.records.render import (
    Context,
    error_text,
    render_posts,
    render_reply,
    render_vote_channel,
)
from engine import voteparse
from engine.commands import ChooseTied, GiveLastWords, Lock, SetDeadline
from engine.effects import (
    Announce,
    Bulletin,
    ClockPost,
    Effect,
    ReplyToPost,
    VoteChannelPost,
    as_posts,
)
from engine.errors import EngineError, TargetError
from engine.game import replay_events
from engine.model import Instant, Seat
from engine.publish import effects_for
from engine.record import record_of

K, P, C = "killer", "police", "civilian"
V2 = [K, K, P, P, C, C, C, C]


def ctx(locale: str = "zh-CN") -> Context:
    return Context(
        locale=locale, timezone=ZoneInfo("Asia/Shanghai"), names={i: f"P{i}" for i in range(1, 21)}
    )


def _effects(game: Game, start: int) -> list[Effect]:
    """The effects of the game's events from `start` on (all of them from 0)."""
    before = replay_events(game.events[:start]) if start else None
    return effects_for(before, game.events[start:])


def posts(game: Game, locale: str = "zh-CN", start: int = 0) -> list[str]:
    """Every public post of the game (of its events from `start` on), as posted."""
    c = ctx(locale)
    out: list[str] = []
    for e in as_posts(_effects(game, start)):
        if isinstance(e, Announce | ClockPost | Bulletin):
            out.extend(render_posts(c, e))
        elif isinstance(e, VoteChannelPost):
            out.append("[vote channel] " + render_vote_channel(c, e))
        elif isinstance(e, ReplyToPost):
            out.append("[reply] " + (render_reply(c, e) or "✅"))
    return out


def keys(game: Game, start: int = 0) -> list[str]:
    """The keys of the game's public announcements (from event `start` on)."""
    return [e.key for e in _effects(game, start) if isinstance(e, Announce)]


def _tied_run_off(players: list[str] | None = None) -> Game:
    """v2 under victim_choice: seat 8 killed at night 1; 5 and 6 tie twice: 8 picks."""
    game = Game("v2", players or V2, options={"tie": "victim_choice"})
    game.night((1, "kill", 8))
    game.day({1: 5, 2: 5, 3: 6, 4: 6})
    game.day({1: 5, 2: 6, 3: 5, 4: 6})
    return game


# -- 1. a victim's choice: whom they chose, and who leaves --------------------------------------


def test_the_results_say_whom_the_victim_chose_and_that_they_leave() -> None:
    game = _tied_run_off()
    game.do(ChooseTied(player="p8", target=Seat(5)))
    start = len(game.events)
    game.lock()
    zh = posts(game, "zh-CN", start)
    en = posts(game, "en", start)
    results = zh[1]
    assert "8号 P8 选择了 5号 P5" in results, zh
    assert "5号 P5 出局。" in results, zh
    assert "由 8号 P8 选择" not in results  # not the tie's announcement again
    assert "#8 P8 chose #5 P5" in en[1], en
    assert "Out of the game (出局): #5 P5." in en[1], en
    assert 5 not in game.alive


def test_the_choice_is_announced_when_no_last_words_are_left() -> None:
    """v2's last words are the first N (N = the police): with the slots used, nothing else
    would say who left."""
    game = Game("v2", [K, K, P, P, C, C, C, C, C, C], options={"tie": "victim_choice"})
    game.night((1, "kill", 10))
    game.day({1: 9, 2: 9, 3: 9})
    game.night((1, "kill", 8))
    game.day({1: 5, 2: 5, 3: 6, 4: 6})
    game.day({1: 5, 2: 6, 3: 5, 4: 6})
    game.do(ChooseTied(player="p8", target=Seat(5)))
    start = len(game.events)
    game.lock()
    results = posts(game, "zh-CN", start)[1]
    assert "选择了 5号 P5" in results and "5号 P5 出局。" in results, results
    assert "留遗言" not in results


def test_a_pick_outside_the_tied_players_has_its_own_wording_naming_them_as_seats() -> None:
    """`/choose` naming someone not tied is refused in the choice's words, not the run-off's
    (「本轮 PK 只能投平票者」 is for votes), the tied players named as seats; nothing changes."""
    game = _tied_run_off()
    before = game.state
    with pytest.raises(TargetError) as refused:
        game.do(ChooseTied(player="p8", target=Seat(7)))
    assert game.state == before
    key, values = refused.value.key, refused.value.params
    assert key == "choice.not_candidate"
    assert error_text(ctx(), key, values) == "只能在平票者（5号 P5、6号 P6）中选择。"
    assert error_text(ctx("en"), key, values) == (
        "You can only choose among the tied players (#5 P5, #6 P6)."
    )


# -- 2. the choice window names its day ---------------------------------------------------------


def test_the_choice_window_names_its_day() -> None:
    game = _tied_run_off()
    zh, en = posts(game, "zh-CN")[-1], posts(game, "en")[-1]
    assert zh.startswith("第1天：请 8号 P8 用 /选择（/choose）在 5号 P5、6号 P6 中选择"), zh
    assert en.startswith("Day 1: #8 P8 picks"), en


# -- 3. a lapsed choice: lots, and no vote table for a vote that was not held -------------------


def test_a_lapsed_choice_posts_the_lots_and_no_vote_table() -> None:
    game = _tied_run_off()
    start = len(game.events)
    game.lock()  # no pick: lots decide
    zh = posts(game, "zh-CN", start)
    assert "day.tally" not in keys(game, start)
    assert not any("票型" in text for text in zh), zh
    assert any(text.startswith("[vote channel] 【抽签】") for text in zh)
    assert any("按规则抽签" in text for text in zh)


# -- 5. last words: the ruleset's window; none once the game is over ----------------------------


def test_the_invitation_states_the_rulesets_window() -> None:
    lone = [K, K, K, "lone_killer", P, P, "lone_police", "doctor"] + [C] * 8
    game = Game("v4_lone", lone)
    game.night((1, "kill", 9))
    zh = [t for t in posts(game, "zh-CN") if "留遗言" in t]
    en = [t for t in posts(game, "en") if "last words" in t]
    assert zh and "下一次公布出局名单前有效" in zh[-1], zh
    assert en and "until the next list of players out" in en[-1], en
    plain = Game("v2", V2)
    plain.night((1, "kill", 8))
    assert "下次截止前有效" in [t for t in posts(plain) if "留遗言" in t][-1]
    inspector = Game("v1_inspector", [K, K, K, "inspector"] + [C] * 12)
    inspector.night((1, "kill", 9))
    assert "下一次公布出局名单前有效" in [t for t in posts(inspector) if "留遗言" in t][-1]


def test_no_invitation_when_the_resolution_ends_the_game_and_none_taken_after() -> None:
    game = Game("basic", [P, K, C, C, C, C])
    start = len(game.events)
    game.night((2, "kill", 1))  # the only police: the killers win at dawn
    assert game.state.over
    assert not any("留遗言" in text for text in posts(game, "zh-CN", start))
    assert "lastwords.invite" not in keys(game, start)


def test_last_words_are_refused_once_the_game_is_over() -> None:
    game = Game("basic", [P, K, C, C, C, C])
    game.night((2, "kill", 1))
    with pytest.raises(EngineError) as refused:
        game.do(GiveLastWords(player="p1", text="hi"))
    assert refused.value.key == "phase.game_over"
    assert record_of(game.state)["phases"][0]["last_words"] == ["p1"]  # the record as before


def test_a_last_word_given_before_the_end_is_still_posted() -> None:
    game = Game("v2", V2)
    game.night((1, "kill", 8))
    start = len(game.events)
    game.do(GiveLastWords(player="p8", text="再见"))
    assert posts(game, "zh-CN", start) == ["8号 P8 的遗言：再见"]


# -- 6. the 投票帖's abstention word is read as one ---------------------------------------------


@pytest.mark.parametrize("locale", ["zh-CN", "en"])
@pytest.mark.parametrize("key", ["forum.vote_post_body", "window.day"])
def test_every_vote_the_posts_suggest_is_read(locale: str, key: str) -> None:
    text = catalog(locale)[key]
    quoted = re.findall(r"“([^”]+)”", text)
    assert quoted, text
    for example in quoted:
        parsed = voteparse.parse_vote_post(example.replace("N", "5"))
        assert isinstance(parsed, voteparse.VoteFor | voteparse.Abstain), (example, parsed)


# -- 7. a late post's time shows it late --------------------------------------------------------


def test_a_post_a_millisecond_late_shows_its_milliseconds() -> None:
    t0 = 1_800_000_000_000
    deadline = t0 + 3_600_000
    game = Game("v2", V2)
    game.night((1, "kill", 8))
    game.do(SetDeadline(deadline=Instant(deadline), at=Instant(t0)))
    game.vote(1, 5, at=deadline)
    game.vote(2, 5, at=deadline + 1)
    game.vote(3, 5, at=deadline + 2_000)
    start = len(game.events)
    game.lock(at=deadline)
    table = next(t for t in posts(game, "zh-CN", start) if "票型" in t)
    assert "2号 P2（17:00:00.001，超时）" in table, table
    assert "3号 P3（17:00:02，超时）" in table, table  # a whole second later says it already
    en = next(t for t in posts(game, "en", start) if "vote table" in t)
    assert "#2 P2 — 17:00:00.001, late" in en, en


# -- 8. abstentions are votes: the empty table does not say nobody voted ------------------------


def test_only_abstentions_is_not_nobody_voted() -> None:
    game = Game("v2", V2)
    game.night((1, "kill", 8))
    start = len(game.events)
    game.day({1: None, 2: None, 3: None})
    zh = next(t for t in posts(game, "zh-CN", start) if "票型" in t)
    en = next(t for t in posts(game, "en", start) if "vote table" in t)
    assert zh.startswith("第1天票型：无人得票\n弃权：1号 P1"), zh
    assert "nobody voted" not in en and "no votes for anyone" in en, en


# -- 9. the run-off's candidates are named as seats ----------------------------------------------


def test_a_vote_outside_the_run_off_names_the_candidates() -> None:
    game = Game("v2", V2, options={"tie": "revote"})
    game.night((1, "kill", 8))
    game.day({1: 5, 2: 5, 3: 6, 4: 6})
    game.vote(7, 1)
    assert posts(game)[-1] == "[reply] 本轮 PK 只能投平票者（5号 P5、6号 P6）。"
    assert posts(game, "en")[-1] == (
        "[reply] Only the tied players (#5 P5, #6 P6) can be voted for in this run-off (PK)."
    )
    shown = error_text(ctx(), "vote.not_candidate", {"target": 1, "candidates": "5,6"})
    assert shown == "本轮 PK 只能投平票者（5号 P5、6号 P6）。"


# -- 10. run-off 看表帖s; a third tie says "nobody leaves" once ------------------------------------


def test_each_run_offs_clock_post_names_the_run_off() -> None:
    game = Game("basic", [P, P, K, K, C, C, C, C], options={"tie": "revote"})
    game.night((3, "kill", 8))
    game.day({1: 5, 2: 5, 3: 6, 4: 6})
    game.day({1: 5, 2: 6, 3: 5, 4: 6})
    game.day({1: 5, 2: 6, 3: 5, 4: 6})
    clocks = [t for t in posts(game) if t.startswith("【看表】第1天")]
    assert [c.split("：")[0] for c in clocks] == [
        "【看表】第1天截止",
        "【看表】第1天第1次 PK截止",
        "【看表】第1天第2次 PK截止",
    ], clocks
    en = [t for t in posts(game, "en") if t.startswith("[看表 clock post] Day 1")]
    assert en[1].startswith("[看表 clock post] Day 1, run-off (PK) 1 closed at"), en


@pytest.mark.parametrize("options", [{"tie": "revote"}, {"tie": "none"}])
def test_a_tie_that_leaves_nobody_says_so_once(options: dict[str, str]) -> None:
    """basic's third tie (under `revote`), or any tie under `none`."""
    game = Game("basic", [P, P, K, K, C, C, C, C], options=options)
    game.night((3, "kill", 8))
    if options["tie"] == "revote":
        game.day({1: 5, 2: 5, 3: 6, 4: 6})
        game.day({1: 5, 2: 6, 3: 5, 4: 6})
    start = len(game.events)
    game.day({1: 5, 2: 6, 3: 5, 4: 6})
    for locale, words in (("zh-CN", "本轮无人出局"), ("en", "nobody leaves today")):
        said = posts(game, locale, start)
        assert sum(text.lower().count(words) for text in said) == 1, said


def test_a_third_tie_that_draws_the_game_says_only_that() -> None:
    """v2's third tie under `revote` ends the game in a draw: no "nobody leaves today" besides."""
    game = Game("v2", V2, options={"tie": "revote"})
    game.night((1, "kill", 8))
    game.day({1: 5, 2: 5, 3: 6, 4: 6})
    game.day({1: 5, 2: 6, 3: 5, 4: 6})
    start = len(game.events)
    game.day({1: 5, 2: 6, 3: 5, 4: 6})
    assert game.state.over
    said = posts(game, "zh-CN", start)
    assert any("三次平票，本局平局" in t for t in said), said
    assert not any("本轮无人出局" in t for t in said), said
    assert not any("nobody leaves" in t.lower() for t in posts(game, "en", start))


def test_the_choice_windows_clock_post_names_the_pick() -> None:
    game = _tied_run_off()
    start = len(game.events)
    game.lock()
    clock = posts(game, "zh-CN", start)[0]
    assert clock.startswith("【看表】第1天平票选择截止"), clock


def test_a_moderator_closing_the_pick_early_names_it() -> None:
    game = _tied_run_off()
    start = len(game.events)
    game.do(Lock(at=Instant(1_000), forced=True, by="mod"))
    assert posts(game, "zh-CN", start)[0] == "【管理】管理员提前截止第1天平票选择。"
    assert posts(game, "en", start)[0] == (
        "[Moderator] A moderator closed Day 1, the pick among the tied (平票选择) early."
    )


# -- 11. voice ---------------------------------------------------------------------------------


def test_the_vote_table_counts_in_votes() -> None:
    game = Game("v2", V2)
    game.night((1, "kill", 8))
    start = len(game.events)
    game.day({1: 5, 2: 5, 7: 5, 3: 6})
    table = next(t for t in posts(game, "zh-CN", start) if "票型" in t)
    assert table.startswith("第1天票型：5号 P5←1、2、7（3票）；6号 P6←3（1票）"), table


def test_english_results_read_right_for_several_leavers_and_the_killers_count() -> None:
    en = catalog("en")
    c = ctx("en")
    several = render_posts(c, Announce(key="day.result", params=(("left", "1,8"), ("number", 1))))
    assert several == ["Out of the game (出局): #1 P1, #8 P8."]
    assert "at least as many" in en["win.killers_outnumber"]


# -- 12. several cards a player (5.0): the card numbers, published at the start -----------------

V5_7 = [K, "doctor", P, C, "butterfly", C, "mole", C, "secret_police", C, "secret_police", C, C, C]


def test_the_start_publishes_which_cards_each_player_holds() -> None:
    game = CardGame(V5_7)
    names = {int(s.seat): s.player for s in game.state.seats}
    for locale, roster in (
        ("zh-CN", "牌位号：1号、2号 p1；3号、4号 p2；5号、6号 p3；"),
        ("en", "Card numbers (牌位号): #1, #2 p1; #3, #4 p2; #5, #6 p3; "),
    ):
        c = Context(locale=locale, timezone=ZoneInfo("Asia/Shanghai"), names=names)
        started = next(e for e in effects_for(None, game.events) if isinstance(e, Announce))
        assert started.key == "game.started"
        (text,) = render_posts(c, started)
        assert roster in text, text
        assert "13号、14号 p7" in text or "#13, #14 p7" in text, text
    # the roster is public and tells nothing hidden: the same for any deal of the same players
    other = CardGame(list(reversed(V5_7)), seed="another")
    assert _started(other) == _started(game)


def _started(game: Game) -> Announce:
    start = next(e for e in effects_for(None, game.events) if isinstance(e, Announce))
    return Announce(key=start.key, params=tuple(p for p in start.params if p[0] != "commitment"))


def test_a_game_of_one_card_a_player_publishes_no_roster() -> None:
    game = Game("v2", V2)
    assert "cards" not in dict(_started(game).params)
    assert "牌位" not in posts(game)[0]
