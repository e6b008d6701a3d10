"""What the private role message (`role.dealt`) tells a seat, in both languages: the powers its
role holds later or on leaving the game (`Ruleset.later_powers`), the side a mine plays for
(`Ruleset.side_note`), and — to a substitute — the card the seat was dealt where its role has
turned since, and the check answers the seat learned before (`check.history`, privately)."""

from __future__ import annotations

import random
from zoneinfo import ZoneInfo

import pytest
from gamekit import CardGame, Game
from playouts import play

from bot.discord.embeds import role_embed
from bot.records.render import Context, render_private
from engine.commands import EndGame, ReplacePlayer
from engine.effects import Effect, TeamNotice, Whisper
from engine.game import apply, replay_events
from engine.model import Camp, Seat
from engine.publish import effects_for, role_message
from engine.rulesets import RULESETS, rules_for
from engine.state import GameState
from engine.view import view_for

K, P, C, D = "killer", "police", "civilian", "doctor"
MOLE, BF, SPO = "mole", "butterfly", "secret_police"
LONE = [K, K, K, "lone_killer", P, P, "lone_police", D] + [C] * 8
WUJIANDAO = [
    "police_leader", "police_confidant", "gang_mole", "police",
    "gang_leader", "gang_confidant", "police_mole", "gangster",
]  # fmt: skip
LOCALES = ("zh-CN", "en")


def ctx(game: Game, locale: str) -> Context:
    names = {int(s.seat): s.player for s in game.state.seats}
    return Context(locale=locale, timezone=ZoneInfo("Asia/Shanghai"), names=names)


def dealt(game: Game, seat: int) -> Whisper:
    """The seat's role message at the deal."""
    (message,) = (
        e
        for e in effects_for(None, game.events[:1])
        if isinstance(e, Whisper) and e.key == "role.dealt" and e.seat == seat
    )
    return message


def texts(game: Game, effect: Whisper) -> dict[str, str]:
    """The message as text and as the DM's embed, in each language."""
    out = {}
    for locale in LOCALES:
        c = ctx(game, locale)
        embed = role_embed(c, 1, effect)
        fields = " | ".join(f"{f.name}: {f.value}" for f in embed.fields)
        out[locale] = render_private(c, effect) + " || " + fields
    return out


# -- 1. powers held later or on leaving ----------------------------------------------------------


@pytest.mark.parametrize(
    ("ruleset", "roles", "options", "seat", "zh", "en"),
    [
        ("v4_lone", LONE, None, 4, "杀人（有杀手出局后起）", "once a killer (杀手) is out"),
        ("v4_lone", LONE, None, 7, "验人（从第2夜起）", "from night 2"),
        ("wujiandao", WUJIANDAO, None, 2, "杀人（首领出局后起", "once your leader (首领)"),
        ("wujiandao", WUJIANDAO, None, 6, "杀人（首领出局后起", "once your leader (首领)"),
        (
            "wujiandao",
            WUJIANDAO,
            {"first_night": "virtual"},
            1,
            "杀人（从第2夜起）",
            "from night 2",
        ),
    ],
)
def test_a_power_that_starts_later_is_named_with_when(
    ruleset: str, roles: list[str], options: dict[str, str] | None, seat: int, zh: str, en: str
) -> None:
    game = Game(ruleset, roles, options=options)
    said = texts(game, dealt(game, seat))
    assert zh in said["zh-CN"], said
    assert en in said["en"], said
    assert "没有夜间权利" not in said["zh-CN"] and "no night power" not in said["en"], said
    assert "现在没有可用的权利" in said["zh-CN"] and "no power yet" in said["en"], said


def test_the_sniper_is_told_of_his_shot_on_leaving_besides_his_powers_now() -> None:
    game = Game("basic", [P, P, K, "sniper"] + [C] * 6, options={"sniper": "yes"})
    said = texts(game, dealt(game, 4))
    assert "可用权利：杀人、认匪" in said["zh-CN"], said
    shot = said["zh-CN"].split("开枪（")[1]
    assert shot.startswith("出局后、下次截止前可开枪一次（开枪则不能留遗言"), (
        said
    )  # docs: shoot or speak
    assert "认匪" in shot and "管理员移出" in shot, said  # not when he confesses or is removed
    assert (
        "shoot (开枪) — once, when you leave the game (出局), until the next deadline" in said["en"]
    )


def test_a_one_shot_power_names_what_the_role_holds_after_it() -> None:
    """A secret killer who fires is a killer (mifei); a covert police who attacks, a police."""
    game = Game("mifei", [P] * 3 + [K] * 2 + [D, "secret_killer"] + [C] * 5)
    said = texts(game, dealt(game, 7))
    assert "杀人（行使开枪之后，你成为杀手）" in said["zh-CN"], said
    assert "kill (杀人) — after you use shoot (开枪), as a 杀手 (killer)" in said["en"], said
    game = Game(
        "basic", [P, "covert_police", K, K] + [C] * 6, options={"police_special": "covert_police"}
    )
    assert "验人（行使偷袭之后，你成为警察）" in texts(game, dealt(game, 2))["zh-CN"]


def test_a_power_already_held_is_not_said_again_as_later() -> None:
    game = Game("v4_lone", LONE)
    game.night((1, "kill", 2))  # a killer out: the lone killer kills from now on
    message = role_message(game.state, Seat(4))
    assert dict(message.params)["powers"] == "kill"
    assert not dict(message.params).get("later")
    said = texts(game, message)
    assert "有杀手出局后" not in said["zh-CN"] and "可用权利：杀人" in said["zh-CN"], said


def test_a_role_with_no_power_ever_still_says_so() -> None:
    game = Game("v2", [K, K, P, P, C, C, C, C])
    said = texts(game, dealt(game, 5))
    assert "你没有夜间权利" in said["zh-CN"] and "later" not in said["en"].lower(), said


# -- 3. the mine's side ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("side", "zh", "en"),
    [
        ("neutral", "中立", "中立 (neutral)"),
        ("good", "警雷", "警雷 (police's mine)"),
        ("killers", "匪雷", "匪雷 (killers' mine)"),
    ],
)
def test_the_mine_is_told_its_side(side: str, zh: str, en: str) -> None:
    game = Game("v2_mine", [P, P, K, K, "mine", C, C, C], options={"mine": side})
    said = texts(game, dealt(game, 5))
    assert f"地雷（{zh}" in said["zh-CN"], said
    assert en in said["en"], said
    others = {"neutral": "中立", "good": "警雷", "killers": "匪雷"}
    assert not [w for s, w in others.items() if s != side and w in said["zh-CN"]], said
    # nobody else's message names the mine's side
    for seat in (1, 3, 6):
        assert zh not in texts(game, dealt(game, seat))["zh-CN"]


def test_the_mine_of_mine_accomplice_is_a_police_mine() -> None:
    game = Game("v2_mine_accomplice", [P, P, K, K, "mine", "accomplice", C, C])
    assert "地雷（警雷" in texts(game, dealt(game, 5))["zh-CN"]


# -- 2. a substitute ---------------------------------------------------------------------------


def replaced(game: Game, seat: int) -> list[Effect]:
    return game.effects(ReplacePlayer(seat=Seat(seat), new_player=f"sub{seat}", by="mod"))


def private_to(effects: list[Effect], seat: int, key: str) -> list[Whisper]:
    return [e for e in effects if isinstance(e, Whisper) and e.seat == seat and e.key == key]


def test_a_substitute_is_told_the_card_dealt_where_the_role_has_turned() -> None:
    game = Game("mifei", [P] * 3 + [K] * 2 + [D, "secret_killer"] + [C] * 5)
    game.night((7, "shoot", 8), (1, "check", 7))
    (message,) = private_to(replaced(game, 7), 7, "role.dealt")
    said = texts(game, message)
    assert "**杀手（发牌时为秘匪）**" in said["zh-CN"], said
    assert "**杀手 (killer), dealt as 秘匪 (secret killer)**" in said["en"], said
    assert "kill (杀人)" in said["en"]  # and what the role holds now


def test_the_deal_names_no_card_dealt() -> None:
    game = Game("mifei", [P] * 3 + [K] * 2 + [D, "secret_killer"] + [C] * 5)
    assert "dealt" not in dict(dealt(game, 7).params)


def test_a_substitute_gets_the_seats_past_check_answers_privately() -> None:
    game = Game("v4_lone", LONE)
    game.night((5, "check", 9))
    game.day({})
    game.night((5, "check", 7), (7, "check", 10))  # the police check merges the lone police
    effects = replaced(game, 7)
    (message,) = private_to(effects, 7, "role.dealt")
    assert "**警察（发牌时为独警）**" in texts(game, message)["zh-CN"]
    (history,) = private_to(effects, 7, "check.history")
    zh = render_private(ctx(game, "zh-CN"), history)
    en = render_private(ctx(game, "en"), history)
    assert "第2夜验 10号 p10：平民" in zh, zh
    assert "第1夜" not in zh  # the police's answer before he merged was never told to the seat
    assert "Night 2, checked #10 p10: civilian (平民)" in en, en
    # only to the seat: nothing public or in a thread says what was checked
    assert [e for e in effects if "checks" in dict(getattr(e, "params", ()))] == [history]
    assert not [e for e in effects if isinstance(e, TeamNotice) and e.key.startswith("check")]


def test_a_police_substitute_gets_the_teams_answers_and_a_civilian_none() -> None:
    game = Game("mifei", [P] * 3 + [K] * 2 + [D, "secret_killer"] + [C] * 5)
    game.night((1, "check", 7))
    (history,) = private_to(replaced(game, 2), 2, "check.history")  # a police teammate
    assert dict(history.params)["checks"] == "1:7:special"
    assert "第1夜验 7号 p7：特殊身份" in render_private(ctx(game, "zh-CN"), history)
    assert not private_to(replaced(game, 9), 9, "check.history")  # a civilian knows none


# -- 4. whom a substitute's message names ----------------------------------------------------


def known_in(message: Whisper) -> dict[int, str]:
    """The seats a role message names, each with the role it gives them ('' for none)."""
    p = dict(message.params)
    roles = dict(item.split(":") for item in str(p.get("known") or "").split(",") if item)
    return {int(s): roles.get(s, "") for s in str(p.get("teammates") or "").split(",") if s}


def by_rule(state: GameState, seat: Seat) -> dict[int, str]:
    """Whom /role shows the seat knows by the rules (`PlayerView.known`), its own cards aside."""
    own = state.seats_of(state.seat(seat).player)
    return {int(s): r.value for s, r in view_for(state, seat).known if s not in own}


def test_v3m_a_substitute_for_a_fired_secret_killer_is_not_told_a_killer_out_before() -> None:
    """Killer 1 voted out (no reveal) before the 秘匪 at 3 fires: 3 never met him, and neither
    /role nor the substitute's message says seat 1 was a killer."""
    game = Game("v3m", [K, K, "secret_killer", P, P, P, D, C, C, C, C])
    game.night((1, "kill", 8), (2, "kill", 8))
    game.day({s: 1 for s in game.alive})
    game.night((2, "kill", 9), (3, "shoot", 4))
    assert by_rule(game.state, Seat(3)) == {2: "killer"}
    effects = replaced(game, 3)
    (message,) = private_to(effects, 3, "role.dealt")
    assert known_in(message) == {2: "killer"}
    assert "1号" not in texts(game, message)["zh-CN"]


def test_basic_a_substitute_for_a_police_turned_civilian_by_the_grief_knows_the_police() -> None:
    """The sheriff's grief makes police 4 a civilian: /role keeps the sheriff he knew, and so
    does his substitute's message (marked out of the game, as /role marks him)."""
    options = {"police_special": "sheriff"}
    game = Game("basic", [K, K, "sheriff", P] + [C] * 6, options=options)
    game.night((1, "kill", 5), (2, "kill", 5))
    game.day({s: 3 for s in game.alive})
    assert game.state.seat(Seat(4)).role.value == C
    assert by_rule(game.state, Seat(4)) == {3: "sheriff"}
    (message,) = private_to(replaced(game, 4), 4, "role.dealt")
    assert known_in(message) == {3: "sheriff"}
    said = texts(game, message)
    assert "你的同伴：3号 p3（警长，已出局）。" in said["zh-CN"], said
    assert "#3 p3: 警长 (sheriff), out of the game (出局)" in said["en"], said


def test_a_substitutes_message_names_whom_role_shows_the_seat_knows() -> None:
    """In plausible games of every ruleset, a substitute's role message for each card names
    exactly the seats `/role` shows the seat knows by the rules (`view_for(...).known`), each with
    the role known; at the deal the message names whom the ruleset shows the seat
    (`Ruleset.seen_role`), as it always has."""
    rnd = random.Random(20240701)
    rulesets: set[str] = set()
    compared = 0
    for _ in range(200):
        played = play(rnd, steps=120)
        if played is None:
            continue
        opening, steps = played
        deal = effects_for(None, opening)
        first = replay_events(opening)
        rules = rules_for(first)
        for message in (e for e in deal if isinstance(e, Whisper) and e.key == "role.dealt"):
            me = first.seat(message.seat)
            own = first.seats_of(me.player)
            seen = {int(s.seat): rules.seen_role(me, s) for s in first.seats if s.seat not in own}
            assert known_in(message) == {s: r.value for s, r in seen.items() if r is not None}
            assert known_in(message) == by_rule(first, message.seat)
        for step in steps[::15]:
            state = step.after
            if state.over or state.window is None:
                continue
            for seat in [s.seat for s in state.seats if s.alive]:
                after, events = apply(
                    state, ReplacePlayer(seat=seat, new_player=f"sub{seat}", by="mod")
                )
                messages = [
                    e
                    for e in effects_for(state, events)
                    if isinstance(e, Whisper) and e.key == "role.dealt"
                ]
                gone = [c for c in after.seats_of(f"sub{seat}") if not after.seat(c).alive]
                for n, message in enumerate(messages):
                    expected = by_rule(after, message.seat)
                    for card in gone if n == 0 else ():  # the first: what a card out knew too
                        expected = {**by_rule(after, card), **expected}
                    assert known_in(message) == dict(sorted(expected.items())), (
                        state.ruleset,
                        message.seat,
                    )
                    compared += 1
                    rulesets.add(state.ruleset)
    assert compared > 1000 and rulesets == set(RULESETS), (compared, sorted(rulesets))


def test_a_5_0_substitute_is_told_what_the_players_card_out_of_the_game_knew() -> None:
    """p2 holds the mole (card 3: it knows the killers and the police) and a civilian (card 4,
    knowing nobody); the mole card dies, the player plays on and is replaced: the substitute's
    message carries what the mole card knew, as /role shows it."""
    game = CardGame([K, D, MOLE, C, P, C, BF, C, SPO, C, SPO, C, C, C], seed="v5-sub")
    knew = by_rule(game.state, Seat(3))
    assert knew and not by_rule(game.state, Seat(4))
    game.power(1, "kill", 3)
    game.lock()
    assert not game.state.seat(Seat(3)).alive and game.state.seat(Seat(4)).alive
    (message,) = private_to(replaced(game, 4), 4, "role.dealt")
    assert known_in(message) == knew


def test_nothing_is_to_come_once_the_game_is_over() -> None:
    """After the end the view (and /role) offers no power to come: 独警's check from night 2."""
    game = Game("v4_lone", LONE)
    assert view_for(game.state, Seat(7)).later
    game.do(EndGame(winner=Camp.GOOD, by="mod"))
    assert view_for(game.state, Seat(7)).later == ()
