"""v5 (5.0 双身份), tianxia (天下无贼) and wujiandao (无间道) on Discord: each played whole through
the same commands as every ruleset (slash commands, DM menus, vote posts, deadlines on the fake
clock), its record checked against `faguan replay` of the same actions; and what each needs of
the shell: the card acting, powers without a target, weighted and per-faction 票型, public
identities."""

from __future__ import annotations

import pytest
from gamebot import Driver, Table, by_role, compare_with_replay

from bot.records.i18n import catalog
from bot.records.replay import run

SEED = "e2e-seed"
"""With this seed the deals are (the tests still find every role by lookup):
v5, 7 players (玩家k holds cards 2k-1 and 2k): 1 mole, 4 and 7 secret police, 5 police,
6 butterfly, 8 killer, 13 doctor, the rest civilians — 玩家4 holds a secret police and the killer;
tianxia, 12: bad thieves 1, 4, 7; good thieves 2, 10, 12; police 5, 6, 8; civilians 3, 9, 11;
wujiandao, 8: 1 police confidant, 2 police leader, 3 the gang's mole, 4 gangster, 5 gang
confidant, 6 police, 7 the police's mole, 8 gang leader (publicly police: 1, 2, 3, 6)."""

ZH = catalog("zh-CN")


pytestmark = pytest.mark.table(seed=SEED)


def answer(result: object) -> str:
    """The text of an ephemeral answer."""
    response = getattr(result, "response", None)
    assert response is not None and getattr(result, "ephemeral", False), result
    return str(response.content)


async def finish(d: Driver, winner: str, rejected: tuple[int, ...] = ()) -> None:
    """The game is over with `winner`, the bot's record is `faguan replay`'s, and the replay
    refused exactly the steps `rejected` (numbered from 1)."""
    state = await d.table.bot.runtime.service.state(d.game_id)
    assert state.result is not None and state.result.winner.value == winner
    roles = {int(s.seat): s.original_role.value for s in state.seats}
    replayed = run(d.replay_input(roles, SEED)).record
    assert tuple(r["step"] for r in replayed["rejected"]) == rejected, replayed["rejected"]
    compare_with_replay(d.record(state), replayed)
    assert any(text.startswith("【终局】") and SEED in text for text in d.table.public())


# -- v5: two cards a player ------------------------------------------------------------------


@pytest.mark.table(players=7)
async def test_v5_7_whole_game(table: Table) -> None:
    t = table
    d = Driver(t, "v5")
    roles = await d.start()
    (mole,) = by_role(roles, "mole")
    sp1, sp2 = by_role(roles, "secret_police")
    (police,) = by_role(roles, "police")
    (butterfly,) = by_role(roles, "butterfly")
    (killer,) = by_role(roles, "killer")
    (doctor,) = by_role(roles, "doctor")
    assert (killer + 1) // 2 == (sp2 + 1) // 2  # 玩家4 holds a secret police and the killer

    # Night 1: every card acts alone, by command (naming the card) or by its own DM menu.
    await d.power_by_command(killer, "kill", 12)
    await d.power_by_menu(mole, "check", sp1)
    await d.power_by_command(police, "check", killer)
    await d.power_by_menu(butterfly, "hug", 3)
    await d.power_by_menu(sp1, "execute", mole)
    await d.power_by_command(sp2, "execute", None)  # /pass, naming the card
    await d.power_by_menu(doctor, "save", 9)
    await d.lock()
    assert any("昨夜出局：1号 玩家1、12号 玩家6" in text for text in t.public())
    assert f"{sp1}号 玩家2 是 **秘警**" in t.dms(d.member(mole))[-1].content
    assert f"{killer}号 玩家4 是 **杀手**" in t.dms(d.member(police))[-1].content

    # Day 1: a player votes with every living card: 玩家4 and 玩家5 (2 each) outweigh 玩家1 and
    # 玩家6 (1 each, one card out).
    await d.post_vote(sp2, "投 14", 14)
    await d.post_vote(9, "投14号", 14)
    await d.post_vote(2, "投 9", 9)
    await d.slash_vote(11, 9)
    await d.post_vote(3, "弃权", None)
    await d.lock()
    assert any(
        "第1天票型：14号 玩家7←7×2、9×2（4票）；9号 玩家5←2、11（2票）" in text
        for text in t.public()
    )
    assert any("14号 玩家7 出局" in text for text in t.public())

    # Night 2: the killer takes 玩家1's last card (玩家1 leaves, with last words, given by the
    # player whose first card went first); a secret police fires; the doctor's save is empty.
    await d.power_by_menu(killer, "kill", 2)
    await d.power_by_command(doctor, "save", police)
    await d.power_by_menu(sp2, "execute", 9)
    await d.power_by_menu(police, "check", doctor)
    await d.power_by_command(butterfly, "hug", 3)
    await d.lock()
    assert any("昨夜出局：2号 玩家1、9号 玩家5" in text for text in t.public())
    await d.last_words(2, "我两张牌都是好人")
    assert any("2号 玩家1 的遗言：我两张牌都是好人" in text for text in t.public())

    # Day 2: the killer card is voted out: the killer cards and the mole are all out.
    for card in (3, police, 10, doctor):
        await d.post_vote(card, f"投 {killer}", killer)
    await d.post_vote(sp2, f"投 {police}", police)
    await d.slash_vote(11, killer)
    await d.lock()
    await finish(d, "good")


@pytest.mark.table(players=7)
async def test_v5_a_player_names_the_card_acting_and_sees_both_cards(table: Table) -> None:
    t = table
    d = Driver(t, "v5")
    roles = await d.start()
    (killer,) = by_role(roles, "killer")
    sp = next(s for s in by_role(roles, "secret_police") if (s + 1) // 2 == (killer + 1) // 2)
    holder = d.member(killer)

    # The role DMs: one a card, each showing both of the player's cards.
    embeds = [m.embeds[0] for m in t.dms(holder) if m.embeds]
    assert len(embeds) == 2
    for embed in embeds:
        cards = {f.name: f.value for f in embed.fields}[ZH["role_embed.cards"]]
        assert cards == f"{sp}号 玩家4：秘警、{killer}号 玩家4：杀手"

    # /act: the card holding the power acts; a card without it is refused, and nothing changes.
    refused = answer(await holder.slash(t.channel, "act", power="kill", target=12, card=sp))
    assert (
        refused
        == f"Card {sp} does not hold kill (杀人): name the card that does (the card option of /act)."
    )
    refused = answer(await holder.slash(t.channel, "act", power="execute", target=12, card=killer))
    assert refused.startswith(f"Card {killer} does not hold execute (处决)")
    refused = answer(await holder.slash(t.channel, "act", power="kill", target=12, card=3))
    assert refused == "Card 3 is not yours."
    assert (await t.bot.runtime.service.state(d.game_id)).submissions == ()
    assert (
        answer(await holder.slash(t.channel, "act", power="kill", target=12, card=killer))
    ).startswith("Received: kill (杀人) → #12 ")  # the one confirmation: no DM as well
    executed = answer(await holder.slash(t.channel, "act", power="execute", target=13))
    assert executed.startswith("Received: execute (处决) → #13 ")
    subs = (await t.bot.runtime.service.state(d.game_id)).submissions
    assert [(s.seat, s.power.value, s.target) for s in subs] == [
        (killer, "kill", 12),
        (sp, "execute", 13),
    ]

    # Autocomplete: both cards' powers, or the named card's; the cards with their roles.
    powers = await holder.autocomplete(t.channel, "act", "power", "")
    assert [c["value"] for c in powers] == ["execute", "kill"]
    powers = await holder.autocomplete(t.channel, "act", "power", "", card=killer)
    assert [c["value"] for c in powers] == ["kill"]
    cards = await holder.autocomplete(t.channel, "act", "card", "")
    assert [c["value"] for c in cards] == [sp, killer]

    # /role: both cards, each with its role and powers; and the submissions of both.
    text = answer(await holder.slash(t.channel, "role"))
    assert f"#{sp} 玩家4: **秘警 (secret police)** — powers: execute (处决)" in text
    assert f"#{killer} 玩家4: **杀手 (killer)** — powers: kill (杀人)" in text
    assert f"#{killer} 玩家4: kill (杀人) → #12 玩家6" in text
    assert f"#{sp} 玩家4: execute (处决) → #13 玩家7" in text


@pytest.mark.table(players=7)
async def test_v5_a_card_out_is_shown_and_refused_and_votes_name_cards(table: Table) -> None:
    t = table
    d = Driver(t, "v5")
    roles = await d.start()
    (killer,) = by_role(roles, "killer")
    (mole,) = by_role(roles, "mole")
    await d.power_by_command(killer, "kill", mole)
    await d.lock()
    holder = d.member(mole)
    refused = answer(await holder.slash(t.channel, "act", power="check", target=4, card=mole))
    assert refused == f"Card {mole} is out of the game (出局); your other card plays on."
    text = answer(await holder.slash(t.channel, "role"))
    assert f"#{mole} 玩家1: **卧底 (mole)** — out of the game (出局)" in text
    assert "You are out of the game" not in text
    # A vote by a name is unreadable: a name is a player, a vote names one of their cards.
    post = await d.post_vote(11, "投 玩家4", None)
    replies = [m for m in t.channel.history() if m.reference and m.reference.message_id == post.id]
    assert [m.content for m in replies] == ["无法识别“玩家4”的投票对象；请写如“投 5”或“弃权”。"]


# -- tianxia: three factions, 傻根 ------------------------------------------------------------


@pytest.mark.table(players=12)
async def test_tianxia_12_whole_game(table: Table) -> None:
    t = table
    d = Driver(t, "tianxia")
    roles = await d.start()
    b1, b2, b3 = by_role(roles, "bad_thief")
    g1, g2, g3 = by_role(roles, "good_thief")
    p1, p2, p3 = by_role(roles, "police")
    c1, c2, c3 = by_role(roles, "civilian")

    # Night 1: the bad thieves rob 傻根, the good thieves guard him (a knife mark); the checking
    # police are told a bad thief instead (lots). Guard and rob take no target: /act alone or
    # the menu's "use".
    await d.power_by_command(p1, "check", b1)
    await d.power_by_menu(p2, "check", b1)
    assert answer(await d.use_by_command(p3, "guard")).startswith("Received: guard")
    await d.use_by_command(g1, "guard")
    await d.use_by_menu(g2, "guard")
    await d.power_by_command(g3, "kill", b3)
    await d.use_by_command(b1, "rob")
    await d.use_by_menu(b2, "rob")
    await d.power_by_menu(b3, "kill", p1)
    await d.lock()
    assert any("天亮了。昨夜平安，无人出局。" in text for text in t.public())
    state = await t.bot.runtime.service.state(d.game_id)
    assert state.counter("knife_marks") == 1
    assert any("恶贼" in m.content and "验人结果" in m.content for m in t.dms(d.member(p1)))
    thread = t.bot.get_channel(
        int((await t.bot.runtime.service.info(d.game_id)).channels["thread_good_thieves"])
    )
    assert thread is not None and "义贼" in thread.name
    notes = [m.content async for m in thread.history(limit=50)]
    assert any("刀痕" in text for text in notes)
    assert any("保护傻根" in text for text in notes)

    # Day 1: a thief voted out is shown as a thief (never which), without last words.
    for seat in (p1, p2, p3, c1, c2, c3, g1):
        await d.post_vote(seat, f"投 {b1}", b1)
    await d.post_vote(b2, f"投 {p1}", p1)
    await d.post_vote(b3, f"投 {p1}", p1)
    await d.lock()
    assert any(f"翻牌：{b1}号 玩家{b1}：贼" in text for text in t.public())

    # Night 2: a second robbery guarded by the good thieves: the second mark kills one of them.
    await d.use_by_menu(b2, "rob")
    await d.use_by_command(b3, "rob")
    await d.use_by_menu(g1, "guard")
    await d.use_by_command(g2, "guard")
    await d.use_by_command(g3, "guard")
    await d.power_by_command(p1, "check", c2)
    await d.power_by_menu(p2, "check", c2)
    await d.use_by_menu(p3, "guard")
    await d.lock()
    state = await t.bot.runtime.service.state(d.game_id)
    (dead,) = [g for g in (g1, g2, g3) if not state.seat(g).alive]

    # Day 2: the second bad thief is voted out.
    for seat in state.alive():
        await d.post_vote(
            seat, f"投 {p1 if seat in (b2, b3) else b2}", p1 if seat in (b2, b3) else b2
        )
    await d.lock()

    # Night 3: the last bad thief kills a civilian, who leaves last words.
    await d.power_by_menu(b3, "kill", c1)
    for g in (g for g in (g1, g2, g3) if g != dead):
        await d.use_by_command(g, "guard")
    await d.power_by_command(p1, "check", c3)
    await d.lock()
    await d.last_words(c1, "我是平民")

    # Day 3: the bad thieves are all out while 傻根 lives: the good thieves win.
    state = await t.bot.runtime.service.state(d.game_id)
    for seat in state.alive():
        await d.post_vote(seat, f"投 {p1 if seat == b3 else b3}", p1 if seat == b3 else b3)
    await d.lock()
    await finish(d, "good_thieves")
    assert any("义贼" in text and "【终局】" in text for text in t.public())


@pytest.mark.table(players=12)
async def test_tianxia_a_target_given_or_missing_where_it_should_not_be(table: Table) -> None:
    t = table
    d = Driver(t, "tianxia")
    roles = await d.start()
    police = by_role(roles, "police")[0]
    bad = by_role(roles, "bad_thief")[0]
    member = d.member(police)
    refused = answer(await member.slash(t.channel, "act", power="guard", target=3))
    assert refused == "guard 傻根 (保护傻根) takes no target: use /act with the power alone."
    refused = answer(await member.slash(t.channel, "act", power="check"))
    assert (
        refused == "check (验人) needs a target: name one with /act, or pass with /pass (不行使)."
    )
    refused = answer(await d.member(bad).slash(t.channel, "act", power="rob", target=police))
    assert refused.startswith("rob 傻根 (杀傻根) takes no target")
    assert (await t.bot.runtime.service.state(d.game_id)).submissions == ()
    # no seat is offered for guarding 傻根; a check offers the living non-police
    assert await member.autocomplete(t.channel, "act", "target", "", power="guard") == []
    # /pass stays the explicit pass; /act guard is no pass
    assert answer(await member.slash(t.channel, "pass", power="guard")).endswith(", pass (不行使).")
    assert answer(await member.slash(t.channel, "act", power="guard")).endswith(
        "You may change it before the deadline; the last one counts."
    )
    *_, sub = (await t.bot.runtime.service.state(d.game_id)).submissions  # the last one counts
    assert (sub.power.value, sub.target, sub.untargeted) == ("guard", None, True)
    menu = t.dms(member)[-1].content.replace("/不行使（/pass）", "")  # (the commands named)
    assert "保护傻根" in menu and "不行使" not in menu
    text = answer(await member.slash(t.channel, "role"))
    assert f"#{police} 玩家{police}: guard 傻根 (保护傻根) → use" in text


# -- wujiandao: public identities, per-faction votes --------------------------------------------

HIDDEN = [
    ZH[f"role.{r}"]
    for r in (
        "police_leader",
        "police_confidant",
        "police_mole",
        "gang_leader",
        "gang_confidant",
        "gang_mole",
    )
]


def wujiandao_seats(roles: dict[int, str]) -> list[int]:
    """The seats of the police leader, confidant, the gang's mole, the gang leader, confidant,
    the police's mole, the ordinary police and gangster of an 8-player game."""
    seat = {role: s for s, role in roles.items()}
    order = "police_leader police_confidant gang_mole gang_leader gang_confidant police_mole"
    return [seat[r] for r in (*order.split(), "police", "gangster")]


@pytest.mark.table(players=8)
async def test_wujiandao_8_whole_game(table: Table) -> None:
    t = table
    d = Driver(t, "wujiandao")
    pl, pc, gm, gl, gc, pm, p, g = wujiandao_seats(await d.start())

    # Everyone's public identity is announced at the start; the hidden roles are not.
    assert any(
        "公开身份（所有人可见）：警方：1号 玩家1、2号 玩家2、3号 玩家3、6号 玩家6；"
        "匪方：4号 玩家4、5号 玩家5、7号 玩家7、8号 玩家8" in text
        for text in t.public()
    )

    # Night 1: each leader assassinates a member of the other public faction.
    await d.power_by_command(pl, "kill", g)
    await d.power_by_menu(gl, "kill", p)
    await d.lock()
    await d.last_words(g, "我是匪")

    # Day 1: each faction votes within itself; a vote for the other half is void.
    await d.post_vote(pc, f"投 {gm}", gm)
    await d.post_vote(pl, f"投 {gm}号", gm)
    await d.post_vote(gm, f"投 {pc}", pc)
    post = await d.post_vote(pm, f"投 {pl}", pl)
    void_step = len(d.steps)
    await d.post_vote(gc, f"投 {gl}", gl)
    await d.slash_vote(pm, gl)
    await d.post_vote(gl, f"投 {pm}", pm)
    replies = [m for m in t.channel.history() if m.reference and m.reference.message_id == post.id]
    assert [m.content for m in replies] == [f"你只能在本派别内投票：{pl}号不属于本派。"]
    await d.lock()
    public = t.public()
    assert any("第1天警方票型：3号 玩家3←1、2（2票）；1号 玩家1←3（1票）" in x for x in public)
    assert any("第1天匪方票型：8号 玩家8←5、7（2票）；7号 玩家7←8（1票）" in x for x in public)
    assert any(f"【警方】{gm}号 玩家{gm} 出局。" in x for x in public)
    assert any(f"【匪方】得票最多的 {gl}号 玩家{gl} 今天不能被投出局" in x for x in public)

    # Night 2: the police leader has the gang leader killed: the gang's leader and mole are dead.
    await d.power_by_menu(pl, "kill", gl)
    await d.power_by_command(gl, "kill", pc)
    await d.lock()
    await finish(d, "good", rejected=(void_step,))

    over = next(i for i, x in enumerate(t.public()) if x.startswith("【终局】"))
    for text in t.public()[:over]:
        assert not any(word in text for word in HIDDEN), text


@pytest.mark.table(players=8)
async def test_wujiandao_votes_and_roles_stay_within_what_a_player_may_know(table: Table) -> None:
    t = table
    d = Driver(t, "wujiandao")
    pl, pc, _, _, _, pm, p, _ = wujiandao_seats(await d.start())
    await d.lock()  # night 1 passes without an assassination
    # /vote offers the asker's own (public) faction only: the mole sits with the gang.
    offered = await d.member(pm).autocomplete(t.channel, "vote", "target", "")
    assert [c["value"] for c in offered] == ["abstain", "4", "5", "7", "8"]
    offered = await d.member(p).autocomplete(t.channel, "vote", "target", "")
    assert [c["value"] for c in offered] == ["abstain", "1", "2", "3", "6"]
    # /vote for the other faction: posted like any vote, void, and the voter told why.
    result = await d.slash_vote(pm, pl)
    assert answer(result) == f"You vote within your own faction: seat {pl} is not in it."
    # /role: one's own hidden role, one's public identity and everyone's; whom one knows.
    text = answer(await d.member(pc).slash(t.channel, "role"))
    assert (
        "警方亲信 (police confidant)" in text
        and "Your public identity (公开身份): publicly police (警方)." in text
    )
    assert f"#{pl} 玩家{pl}: 警方首领 (police leader)" in text
    assert (
        "Public identities (公开身份): publicly police (警方): #1 玩家1, #2 玩家2, #3 玩家3, #6 玩家6"
        in text
    )
    ordinary = answer(await d.member(p).slash(t.channel, "role"))
    assert not any(word in ordinary for word in HIDDEN)
    assert "首领" not in ordinary and "卧底" not in ordinary and "亲信" not in ordinary
    status = answer(await d.member(p).slash(t.channel, "game status"))
    assert "publicly gang (匪方): #4 玩家4, #5 玩家5, #7 玩家7, #8 玩家8" in status
