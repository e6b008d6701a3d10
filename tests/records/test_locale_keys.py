"""Every message key the bot names in its code is in both catalogs (zh-CN and en), and the new
long-game texts keep the game's own terms in Chinese, glossed in English."""

from __future__ import annotations

import re
from pathlib import Path

from bot.records.i18n import catalog

BOT = Path(__file__).resolve().parents[2] / "bot"
KEY = re.compile(r"""["']([a-z_]+\.[a-z_]+)["']""")
EFFECT_KEY = re.compile(r"""key == ["']([a-z_]+\.[a-z_]+)["']""")
"""An engine effect's key that bot/render.py maps to catalog texts (not a catalog key itself)."""
NOT_TEXT = {"config.py"}
"""Modules whose dotted names are settings paths, not message keys."""


def test_every_key_named_in_the_bot_is_in_both_catalogs() -> None:
    zh, en = catalog("zh-CN"), catalog("en")
    sections = {key.split(".")[0] for key in (*zh, *en)}
    missing: list[str] = []
    sources = [p for p in sorted(BOT.rglob("*.py")) if p.name not in NOT_TEXT]
    mapped = {k for p in sources for k in EFFECT_KEY.findall(p.read_text("utf-8"))}
    for source in sources:
        for key in KEY.findall(source.read_text("utf-8")):
            if key.split(".")[0] not in sections or key in mapped:
                continue  # a module path or a file name, not a message key
            for name, texts in (("zh-CN", zh), ("en", en)):
                if key not in texts:
                    missing.append(f"{source.relative_to(BOT.parent)}: {key} not in {name}")
    assert missing == []


def test_long_game_texts_keep_the_game_terms_in_chinese() -> None:
    en = catalog("en")
    for key, term in [
        ("role_embed.title", "身份"),
        ("log.replace", "替补"),
        ("remind.vote", "投票"),
        ("html.left", "出局"),
        ("html.lots", "抽签"),
        ("pending.unconfirmed", "身份"),
        ("record.revote", "PK"),
        ("day.tally_runoff", "PK"),
        ("record.seed", "抽签"),
        ("game.started", "抽签"),
        ("notice.record", "抽签"),
        ("override.voided", "判为无效"),
        ("override.voided_vote", "判为无效"),
        ("log.void", "判为无效"),
    ]:
        assert term in en[key], key


def test_long_game_texts_render_completely_in_both_locales() -> None:
    from zoneinfo import ZoneInfo

    from bot.discord.embeds import role_content, role_embed
    from bot.discord.override_log import log_line
    from bot.records.record_html import record_page, with_links
    from bot.records.render import Context, render_public
    from engine.commands import (
        EndGame,
        ExtendDeadline,
        Lock,
        ModKill,
        Pause,
        Penalize,
        PostVote,
        ReplacePlayer,
        Resume,
        SetDeadline,
        VoidPost,
    )
    from engine.effects import Announce, OverrideLogged, Whisper
    from engine.game import apply, new_game, replay_events, start_events
    from engine.model import Camp, Instant, Seat, Team
    from engine.publish import effects_for
    from engine.record import record_of

    players = [f"p{i}" for i in range(1, 9)]
    roles = ["killer", "killer", "police", "police"] + ["civilian"] * 4
    created = new_game(
        ruleset="v2", players=players, seed="s", roles=dict(zip(players, roles, strict=True))
    )
    events = start_events(created, Instant(3_600_000))
    state = replay_events(events)
    effects = effects_for(None, events)
    script = [
        ExtendDeadline(delta_ms=60_000, by="1", at=Instant(10)),
        ExtendDeadline(delta_ms=-60_000, by="1", at=Instant(10)),
        SetDeadline(deadline=Instant(3_000_000), by="1", at=Instant(10)),
        Pause(at=Instant(20), by="1"),
        Resume(at=Instant(30), by="1"),
        Penalize(team=Team.KILLERS, reason="诈尸", by="1", at=Instant(40)),
        Penalize(seat=Seat(5), reason="late", by="1", at=Instant(40)),
        ReplacePlayer(seat=Seat(6), new_player="sub", by="1", at=Instant(50)),
        Lock(at=Instant(60), forced=True, by="1", next_deadline=Instant(7_200_000)),
        PostVote(player="p3", post_id="111", target=Seat(1), at=Instant(70)),
        PostVote(player="p4", post_id="112", target=Seat(1), at=Instant(71)),
        VoidPost(post_id="111", reason="代投", by="1", at=Instant(80)),
        ModKill(seat=Seat(7), by="1", at=Instant(90)),
        EndGame(winner=Camp.GOOD, by="1", at=Instant(100)),
    ]
    for command in script:
        new_state, new = apply(state, command)
        effects += effects_for(state, new)
        state = new_state
    logged = [e for e in effects if isinstance(e, OverrideLogged)]
    assert len(logged) == len(script) - 2  # the votes are not overrides
    record = with_links(record_of(state), 1, 2)
    for locale in ("zh-CN", "en"):
        ctx = Context(
            locale=locale, timezone=ZoneInfo("Asia/Shanghai"), names={i: f"P{i}" for i in range(9)}
        )
        texts = [log_line(ctx, 1, e) for e in logged]
        texts += [render_public(ctx, e) for e in effects if isinstance(e, Announce)]
        for e in effects:
            if isinstance(e, Whisper) and e.key == "role.dealt":
                embed = role_embed(ctx, 1, e)
                texts += [role_content(ctx, 1, int(e.seat)), str(embed.title)]
                texts += [f"{f.name} {f.value}" for f in embed.fields]
        for key in ("remind.powers", "remind.vote", "remind.choice"):
            texts.append(ctx.t(key, game=1, phase="x", deadline="y", vote="z"))
        texts.append(record_page(record, locale))
        for text in texts:
            assert not re.search(r"\{[a-z_]+\}", text), text
            assert not re.fullmatch(r"[a-z_]+\.[a-z_.]+", text), text
