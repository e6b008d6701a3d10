"""A finished game's record as one self-contained HTML page (inline CSS and SVG, no scripts, no
external resources), in zh-CN or en.

Input is the JSON record (`bot.records.game_record`: `faguan replay`'s record plus a message
link for every vote post), so the page shows exactly what the JSON says: the seats and their
roles (a row a seat: a 5.0 player holding two cards has one for each card, `A#1` and `A#2`, as
the record's `roles` and the text record name them), the timeline night by night and day by
day, each day's votes as a table and as a picture of who voted whom, the overrides, the lots,
the scores, and the seed with how to verify it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from bot.records.forum_text import marks, tie_key
from bot.records.i18n import render

CSS = """
body{font-family:"Noto Sans CJK SC","Noto Sans SC","PingFang SC","Microsoft YaHei",
 system-ui,sans-serif;margin:0;background:#f6f4ef;color:#222}
main{max-width:960px;margin:0 auto;padding:24px}
h1{font-size:26px;margin:0 0 4px}h2{font-size:20px;margin:28px 0 8px;border-bottom:2px solid #b33;
 padding-bottom:4px}h3{font-size:17px;margin:18px 0 6px}
.sub{color:#666;margin:0 0 12px}
.result{background:#fff;border-left:6px solid #b33;padding:12px 16px;font-size:17px}
table{border-collapse:collapse;background:#fff;margin:6px 0 10px;min-width:50%}
th,td{border:1px solid #ccc;padding:4px 10px;text-align:left}th{background:#eee}
.phase{background:#fff;border-radius:6px;padding:10px 16px;margin:12px 0;
 box-shadow:0 1px 3px rgba(0,0,0,.12)}
.night{border-left:6px solid #335}.day{border-left:6px solid #d90}
.out{color:#b33;font-weight:bold}.void{color:#999;text-decoration:line-through}
.killers{color:#b33}.good{color:#258}
code{background:#eee;padding:1px 4px;border-radius:3px;word-break:break-all}
.votes{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start}
svg{background:#fff;border:1px solid #ddd;border-radius:6px}
ol.verify li{margin:4px 0}
"""


def _t(locale: str, key: str, **params: object) -> str:
    return render(locale, key, params)


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _role(locale: str, role: str) -> str:
    return _t(locale, f"role.{role}")


def _phase_title(locale: str, phase: Mapping[str, Any]) -> str:
    key = "record.night" if phase["phase"] == "night" else "record.day"
    title = _t(locale, key, number=phase["number"])
    if phase.get("revote"):
        title += _t(locale, "record.revote", revote=phase["revote"])
    return title


def _names(locale: str, items: Sequence[str]) -> str:
    """A list of names, joined with the locale's mark (「A、B」, "A, B")."""
    return marks(locale)[0].join(_e(x) for x in items) if items else "—"


def vote_svg(
    players: Sequence[str],
    votes: Mapping[str, str],
    left: Sequence[str],
    *,
    size: int = 340,
) -> str:
    """Who voted whom: the players (seats: a 5.0 player's cards each) on a circle, an arrow from
    each voter to their choice; the picture grows where the seats would not fit around it."""
    n = max(len(players), 1)
    node = 17.0
    size = max(size, math.ceil(2 * (n * (2 * node + 10) / (2 * math.pi) + 42)))
    centre = size / 2
    radius = size / 2 - 42
    where: dict[str, tuple[float, float]] = {}
    for i, name in enumerate(players):
        angle = -math.pi / 2 + 2 * math.pi * i / n
        where[name] = (centre + radius * math.cos(angle), centre + radius * math.sin(angle))
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size}" '
        f'viewBox="0 0 {size} {size}" role="img">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
        'fill="#d90"/></marker></defs>',
    ]
    for voter, target in votes.items():
        if voter not in where or target not in where or voter == target:
            continue
        (x1, y1), (x2, y2) = where[voter], where[target]
        dx, dy = x2 - x1, y2 - y1
        length = math.hypot(dx, dy) or 1.0
        ux, uy = dx / length, dy / length
        parts.append(
            f'<line x1="{x1 + ux * node:.1f}" y1="{y1 + uy * node:.1f}" '
            f'x2="{x2 - ux * (node + 2):.1f}" y2="{y2 - uy * (node + 2):.1f}" stroke="#d90" '
            'stroke-width="2" marker-end="url(#arrow)"/>'
        )
    for i, name in enumerate(players):
        x, y = where[name]
        fill = "#b33" if name in left else "#335"
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{node}" fill="{fill}"/>')
        parts.append(
            f'<text x="{x:.1f}" y="{y + 5:.1f}" text-anchor="middle" font-size="14" '
            f'fill="#fff" font-weight="bold">{i + 1}</text>'
        )
        label_y = y + (node + 14 if y >= centre else -node - 6)
        parts.append(
            f'<text x="{x:.1f}" y="{label_y:.1f}" text-anchor="middle" font-size="11" '
            f'fill="#333">{_e(name)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _night(locale: str, phase: Mapping[str, Any]) -> list[str]:
    left = _names(locale, phase["left"])
    out = [f"<p>{_e(_t(locale, 'html.left'))}: <span class=out>{left}</span></p>"]
    for check in phase.get("checks", []):
        by = f" ({_names(locale, check['by'])})" if check.get("by") else ""
        result = _t(locale, f"check.{check['result']}")
        out.append(
            f"<p>{_e(_t(locale, 'html.check'))}{by}: {_e(check['target'])} → "
            f"<b>{_e(result)}</b></p>"
        )
    return out


def _day(locale: str, phase: Mapping[str, Any], players: Sequence[str]) -> list[str]:
    """A day: its votes (by seat, `players` in seat order), the tally, who left."""
    out: list[str] = []
    if phase.get("confess"):
        out.append(f"<p>{_e(_t(locale, 'record.confess', name=phase['confess']))}</p>")
    posts: list[Mapping[str, Any]] = list(phase.get("posts", []))
    votes: dict[str, str] = dict(phase.get("votes", {}))
    rows = []
    for voter in [*players, *(v for v in votes if v not in players)]:
        if voter not in votes:
            continue
        target = votes[voter]
        shown = _t(locale, "notice.abstain") if target == "abstain" else target
        link = next(
            (
                p.get("link")
                for p in reversed(posts)
                if p.get("by") == voter and p.get("void") is None and p.get("link")
            ),
            None,
        )
        post = f'<a href="{_e(link)}">{_e(_t(locale, "html.link"))}</a>' if link else ""
        rows.append(f"<tr><td>{_e(voter)}</td><td>{_e(shown)}</td><td>{post}</td></tr>")
    table = (
        f"<table><tr><th>{_e(_t(locale, 'html.voter'))}</th><th>{_e(_t(locale, 'html.voted'))}"
        f"</th><th>{_e(_t(locale, 'html.post'))}</th></tr>{''.join(rows)}</table>"
        if rows
        else f"<p>{_e(_t(locale, 'day.tally_empty'))}</p>"
    )
    tally = phase.get("tally", {})
    sep, between = marks(locale)
    counts = between.join(f"{_e(k)} {v}" for k, v in tally.items()) if tally else "—"
    left = list(phase.get("left", []))
    picture = vote_svg(players, {v: t for v, t in votes.items() if t != "abstain"}, left)
    out.append(f'<div class="votes"><div>{table}</div>{picture}</div>')
    out.append(f"<p>{_e(_t(locale, 'html.tally'))}: {counts}</p>")
    if phase.get("abstained"):
        names = sep.join(phase["abstained"])
        out.append(f"<p>{_e(_t(locale, 'record.abstained', names=names))}</p>")
    void = [p for p in posts if p.get("void")]
    if void:
        items = []
        for p in void:
            who = p.get("by") or p.get("author") or "?"
            reason = _t(locale, f"void_reason.{str(p['void']).removeprefix('vote.')}")
            link = (
                f' <a href="{_e(p["link"])}">{_e(_t(locale, "html.link"))}</a>'
                if p.get("link")
                else ""
            )
            items.append(f"<li class=void>{_e(who)}: {_e(reason)}{link}</li>")
        out.append(f"<p>{_e(_t(locale, 'html.void_posts'))}</p><ul>{''.join(items)}</ul>")
    tie = phase.get("tie")
    if tie:
        out.append(f"<p>{_e(_tie(locale, tie))}</p>")
    out.append(
        f"<p>{_e(_t(locale, 'html.left'))}: <span class=out>{_names(locale, left)}</span></p>"
    )
    return out


def _unlocked_post(locale: str, post: Mapping[str, Any]) -> str:
    """A vote post of a day no lock closed: who, for whom, why void if it is, its link."""
    who = post.get("by") or post.get("author") or "?"
    target = post.get("target")
    shown = _t(locale, "notice.abstain") if target == "abstain" else (target or "?")
    void = post.get("void")
    reason = ""
    if void:  # as a day's void posts say it
        reason = f" ({_t(locale, 'void_reason.' + str(void).removeprefix('vote.'))})"
    link = post.get("link")
    anchor = f' <a href="{_e(link)}">{_e(_t(locale, "html.link"))}</a>' if link else ""
    return f"<li{' class=void' if void else ''}>{_e(who)} → {_e(shown)}{_e(reason)}{anchor}</li>"


def _tie(locale: str, tie: Mapping[str, Any]) -> str:
    names = marks(locale)[0].join(tie["tied"])
    return _t(
        locale,
        tie_key(tie),
        names=names,
        drawn=tie.get("drawn", ""),
        label=tie.get("label", ""),
        chooser=tie.get("chooser", ""),
    )


def record_page(record: Mapping[str, Any], locale: str, *, title: str = "") -> str:
    """The whole page for a finished (or unfinished) game's record."""
    players: list[str] = list(record["players"])
    roles: Mapping[str, str] = record.get("roles", {})
    result = record.get("result")
    scores: Mapping[str, int] = result["scores"] if result else {}
    heading = title or _t(locale, "html.title", ruleset=record["ruleset"])
    body: list[str] = [f"<h1>{_e(heading)}</h1>"]
    body.append(
        f"<p class=sub>{_e(_t(locale, 'html.players', count=len(players)))} · "
        f"{_e(record['ruleset'])}</p>"
    )
    if result:
        winner = _t(locale, f"camp.{result['winner']}")
        reason = _t(locale, str(result.get("reason_key") or result.get("reason", "")))
        body.append(
            f"<p class=result>{_e(_t(locale, 'html.result', winner=winner))} · "
            f"{_e(_t(locale, 'html.after', after=_after(locale, str(result['after']))))} · "
            f"{_e(reason)}</p>"
        )
    else:
        body.append(f"<p class=result>{_e(_t(locale, 'record.unfinished'))}</p>")

    # the seats (a 5.0 player's cards each, named `A#1`, `A#2` as in `roles`, `scores` and the
    # text record), roles revealed, scores; `players` names each player once, not each card
    seats: list[str] = list(roles) or players
    subs: Mapping[str, list[str]] = record.get("substitutes", {})
    body.append(f"<h2>{_e(_t(locale, 'html.roles'))}</h2><table>")
    body.append(
        f"<tr><th>#</th><th>{_e(_t(locale, 'html.player'))}</th>"
        f"<th>{_e(_t(locale, 'html.role'))}</th><th>{_e(_t(locale, 'html.score'))}</th></tr>"
    )
    for i, name in enumerate(seats, 1):
        shown = _e(name)
        if name in subs:
            shown += f" → {_names(locale, subs[name])}"
        role = roles.get(name)
        body.append(
            f"<tr><td>{i}</td><td>{shown}</td><td>{_e(_role(locale, role)) if role else '—'}</td>"
            f"<td>{_e(scores.get(name, '—'))}</td></tr>"
        )
    body.append("</table>")

    # the timeline
    body.append(f"<h2>{_e(_t(locale, 'html.timeline'))}</h2>")
    for phase in record.get("phases", []):
        kind = "night" if phase["phase"] == "night" else "day"
        body.append(f'<section class="phase {kind}"><h3>{_e(_phase_title(locale, phase))}</h3>')
        body += _night(locale, phase) if kind == "night" else _day(locale, phase, seats)
        if phase.get("revealed"):
            items = marks(locale)[1].join(
                f"{_e(k)} {_e(_role(locale, v))}" for k, v in phase["revealed"].items()
            )
            body.append(f"<p>{_e(_t(locale, 'html.revealed'))}: {items}</p>")
        if phase.get("last_words"):
            words = marks(locale)[0].join(phase["last_words"])
            body.append(f"<p>{_e(_t(locale, 'record.last_words', names=words))}</p>")
        body.append("</section>")
    unlocked = record.get("unlocked_posts") or []
    if unlocked:  # a day the game ended in (/mod end, a removal): its posts, none counted
        body.append(f'<section class="phase day"><h3>{_e(_t(locale, "html.unlocked_posts"))}</h3>')
        body.append(f"<ul>{''.join(_unlocked_post(locale, p) for p in unlocked)}</ul></section>")

    overrides = record.get("overrides", [])
    if overrides:
        body.append(f"<h2>{_e(_t(locale, 'html.overrides'))}</h2><ul>")
        for item in overrides:
            facts = ", ".join(
                f"{_e(k)}={_e(v)}" for k, v in item.items() if k not in ("command", "phase")
            )
            phase = _after(locale, str(item.get("phase") or ""))
            body.append(f"<li><b>{_e(item['command'])}</b> ({_e(phase)}) {facts}</li>")
        body.append("</ul>")
    lots = record.get("lots", [])
    if lots:
        body.append(f"<h2>{_e(_t(locale, 'html.lots'))}</h2><ul>")
        for lot in lots:
            body.append(
                f"<li><code>{_e(lot['label'])}</code>: {_names(locale, lot['among'])} → "
                f"<b>{_e(lot['drawn'])}</b></li>"
            )
        body.append("</ul>")

    # the seed and how to verify
    body.append(f"<h2>{_e(_t(locale, 'html.verify'))}</h2>")
    body.append(
        f"<p>{_e(_t(locale, 'html.seed'))}: <code>{_e(record.get('seed', ''))}</code><br>"
        f"{_e(_t(locale, 'html.commitment'))}: <code>{_e(record.get('commitment', ''))}</code></p>"
    )
    deal = record.get("deal", {})
    steps = [
        _t(locale, "html.verify_commitment"),
        _t(locale, "html.verify_deal", label=deal.get("label", "")),
        _t(locale, "html.verify_lots"),
        _t(locale, "html.verify_command"),
    ]
    body.append("<ol class=verify>" + "".join(f"<li>{_e(s)}</li>" for s in steps) + "</ol>")
    lang = "zh-CN" if locale == "zh-CN" else "en"
    return (
        f'<!DOCTYPE html><html lang="{lang}"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(heading)}</title><style>{CSS}</style></head><body><main>"
        + "\n".join(body)
        + "</main></body></html>"
    )


def _after(locale: str, label: str) -> str:
    kind, _, number = label.partition(" ")
    if kind in ("night", "day") and number:
        return _t(locale, f"record.{kind}", number=number)
    return label


def message_link(guild_id: int | str, channel_id: int | str, message_id: int | str) -> str:
    """A Discord message link."""
    return f"https://discord.com/channels/{guild_id}/{channel_id}/{message_id}"


def with_links(
    record: Mapping[str, Any],
    guild_id: int | str,
    channel_id: int | str,
    vote_posts: Mapping[int, int] | None = None,
) -> dict[str, Any]:
    """The record with a message link on every vote post (posts whose id is a Discord id); in
    a forum game (`vote_posts`: day → its 投票帖's thread id), each day record also links its
    投票帖 (`vote_post`) and each post is linked in the thread it was made in."""
    days = dict(vote_posts or {})
    out = dict(record)

    def linked(posts: list[Mapping[str, Any]], where: int | str) -> list[dict[str, Any]]:
        return [
            {**post, "link": message_link(guild_id, where, post["post_id"])}
            if str(post.get("post_id", "")).isdigit()
            else dict(post)
            for post in posts
        ]

    phases = []
    for phase in record.get("phases", []):
        phase = dict(phase)
        thread = days.get(int(phase.get("number", 0))) if phase.get("phase") == "day" else None
        if thread is not None:
            phase["vote_post"] = f"https://discord.com/channels/{guild_id}/{thread}"
        if "posts" in phase:
            phase["posts"] = linked(phase["posts"], thread or channel_id)
        phases.append(phase)
    out["phases"] = phases
    if "unlocked_posts" in record:  # the last day's: its 投票帖 in a forum game
        out["unlocked_posts"] = linked(
            record["unlocked_posts"], days[max(days)] if days else channel_id
        )
    return out
