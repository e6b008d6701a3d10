"""Effects and views as text, in the game's language (zh-CN or en).

Only this module turns message keys into words for Discord. Seats are shown as `5号 阿明`;
deadlines as Discord timestamps (`<t:…:F>（<t:…:R>）`) so every reader sees local time; the
看表帖 also gives the exact time in the game's timezone.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from bot.records.i18n import catalog, render
from bot.records.split import MESSAGE_LIMIT, split_text
from engine.effects import (
    Announce,
    Bulletin,
    ClockPost,
    Params,
    ReplyToPost,
    TeamNotice,
    VoteChannelPost,
    Whisper,
)

ZONE_NAMES = {"Asia/Shanghai": {"zh-CN": "北京时间", "en": "Beijing time"}}


_MARKDOWN = re.compile(r"([\\*_~|`>#\-\[\]()<:])")
"""What Discord reads as Markdown (or a mention, an emoji, a link) in a line of text."""


def plain(text: str) -> str:
    """A person's display name as it reads, in a post of the judge's: every character Discord
    would take for Markdown escaped (a name "~~" struck through the names after it in a 看表帖,
    a name "[…](https://…)" made a link inside the judge's post)."""
    return _MARKDOWN.sub(r"\\\1", text)


LABEL_LIMIT = 100
"""Discord's longest text of a component: a menu option's label, an autocomplete choice's name."""


def label(text: str) -> str:
    """`text` as a component shows it (a menu option, an autocomplete choice): cut to Discord's
    limit, never escaped — a component shows no Markdown, so an escape would show its
    backslash (「5号 \\*星\\*」 for the player who wrote 「*星*」)."""
    return text[:LABEL_LIMIT]


@dataclass(frozen=True, kw_only=True)
class Context:
    """What rendering needs to know of a game: language, timezone, and who sits where."""

    locale: str
    timezone: ZoneInfo
    names: Mapping[int, str]
    """Seat → display name."""
    vote_channel: str = ""
    vote_posts: bool = False
    """Votes go to each day's 投票帖 (a game hosted in a forum channel)."""
    """Where votes count (a channel or thread id), for a link to it; empty: not known."""

    def vote_place(self) -> str:
        """Where votes count, as a link people can click (`投票频道 <#…>`), or the day's 投票帖."""
        if self.vote_posts:
            return self.t("window.vote_post_here")
        if not self.vote_channel:
            return self.t("window.vote_here")
        return self.t("window.vote_at", channel=f"<#{self.vote_channel}>")

    def seat(self, seat: int | str | None) -> str:
        """`5号 阿明` / `#5 Amin`: the name as text, never as Markdown (`plain`)."""
        if seat is None or seat == "":
            return "—"
        n = int(seat)
        name = plain(self.names.get(n, "?"))
        return f"{n}号 {name}" if self.locale == "zh-CN" else f"#{n} {name}"

    def seat_label(self, seat: int | str) -> str:
        """`5号 阿明` / `#5 Amin` as a component shows it (`label`): the name as the player wrote
        it, where a post escapes it (`seat`)."""
        n = int(seat)
        name = self.names.get(n, "?")
        return label(f"{n}号 {name}" if self.locale == "zh-CN" else f"#{n} {name}")

    def seats(self, text: str | int | bool | None) -> str:
        """A comma-separated seat list, rendered."""
        items = [s for s in str(text or "").split(",") if s]
        sep = "、" if self.locale == "zh-CN" else ", "
        return sep.join(self.seat(s) for s in items)

    def t(self, key: str, **params: object) -> str:
        """A catalog text."""
        return render(self.locale, key, params)


def deadline_text(ctx: Context, ms: int | str | bool | None) -> str:
    """A deadline as Discord timestamps, or a note that there is none."""
    if ms is None or ms == "":
        return ctx.t("window.no_deadline")
    unix = int(ms) // 1000
    return (
        f"<t:{unix}:F>（<t:{unix}:R>）" if ctx.locale == "zh-CN" else f"<t:{unix}:F> (<t:{unix}:R>)"
    )


def duration_text(ctx: Context, ms: int) -> str:
    """A length of time as people say it: `9小时`, `1 h 5 min`, `under a minute`."""
    hours, minutes = divmod(max(ms, 0) // 60_000, 60)
    if hours and minutes:
        return ctx.t("duration.hours_minutes", hours=hours, minutes=minutes)
    if hours:
        return ctx.t("duration.hours", hours=hours)
    if minutes:
        return ctx.t("duration.minutes", minutes=minutes)
    return ctx.t("duration.under_a_minute")


def exact_time(ctx: Context, ms: int | None) -> tuple[str, str]:
    """The exact time in the game's timezone, to the second, and the zone's name."""
    zone = ZONE_NAMES.get(ctx.timezone.key, {}).get(ctx.locale, ctx.timezone.key)
    if ms is None:
        return "—", zone
    when = datetime.fromtimestamp(ms / 1000, UTC).astimezone(ctx.timezone)
    return when.strftime("%Y-%m-%d %H:%M:%S"), zone


def _p(params: Params) -> dict[str, str | int | bool | None]:
    return dict(params)


def _phase(ctx: Context, label: str) -> str:
    kind, _, number = label.partition(" ")
    return ctx.t(f"record.{kind}", number=number) if kind in ("night", "day", "warmup") else label


def _clock_phase(ctx: Context, label: str) -> str:
    """The window a 看表帖 closes: `第2夜`, `第1天`, a run-off `第1天第1次 PK` (`day 1 revote 1`),
    a victim's choice `第1天平票选择` (`day 1 choice`)."""
    match label.split():
        case ["day", number, "revote", revote]:
            return ctx.t("clock.revote", number=number, revote=revote)
        case ["day", number, "choice"]:
            return ctx.t("clock.choice", number=number)
    return _phase(ctx, label)


def _power(ctx: Context, power: object) -> str:
    return ctx.t(f"power.{power}")


def split_post(ctx: Context, text: str) -> list[str]:
    """`text` as messages Discord takes (`bot.records.split`): one, unless it is longer than a
    message; then several, in order, each after the first marked as a continuation (「（续
    2/3）」), no player's name cut."""
    if len(text) <= MESSAGE_LIMIT:  # nearly every post: no names to look for
        return [text]
    names = [ctx.seat(n) for n in ctx.names] + [plain(name) for name in ctx.names.values()]
    return split_text(
        text,
        whole=names,
        continued=lambda part, parts: ctx.t("notice.continued", part=part, parts=parts),
    )


def render_posts(ctx: Context, effect: Announce | ClockPost | Bulletin) -> list[str]:
    """The messages of a public post: one, unless it is too long for one message. A bulletin's
    parts are joined while they fit and go to messages of their own where they do not; a part
    longer than a message alone goes out as several (`split_post`), nothing left out."""
    parts = effect.parts if isinstance(effect, Bulletin) else (effect,)
    messages: list[str] = []
    for text in (render_public(ctx, part) for part in parts):
        pieces = split_post(ctx, text)
        if len(pieces) == 1 and messages and len(messages[-1]) + 2 + len(text) <= MESSAGE_LIMIT:
            messages[-1] += "\n\n" + text
        else:
            messages.extend(pieces)
    return messages


def render_public(ctx: Context, effect: Announce | ClockPost) -> str:
    """A public post's text."""
    if isinstance(effect, ClockPost):
        time, zone = exact_time(ctx, effect.deadline)
        return ctx.t("clock.post", phase=_clock_phase(ctx, effect.phase), time=time, zone=zone)
    p = _p(effect.params)
    key = effect.key
    if p.get("group") and key != "day.tally":  # one of the day's several votes (无间道)
        label = ctx.t("day.group_prefix", group=ctx.t(f"group.{p['group']}"))
        return label + render_public(
            ctx, Announce(key=key, params=_without(effect.params, "group"))
        )
    if key == "game.started":
        text = ctx.t("game.started", **{k: v for k, v in p.items() if k != "cards"})
        if p.get("cards"):  # several cards a player (5.0): who holds which, published
            text += "\n" + ctx.t("game.cards", lines=card_roster(ctx, str(p["cards"])))
        return text
    if key == "game.public_roles":
        return ctx.t(key, lines=public_roster(ctx, str(p["public"])))
    if key == "window.warmup":
        return ctx.t(key, deadline=deadline_text(ctx, p["deadline"]))
    if key in ("window.night", "window.day"):
        return ctx.t(
            key,
            number=p["number"],
            deadline=deadline_text(ctx, p["deadline"]),
            vote=ctx.vote_place(),
        )
    if key == "window.revote":
        barred = ctx.t("window.barred_line", barred=ctx.seats(p["barred"])) if p["barred"] else ""
        return ctx.t(
            key,
            number=p["number"],
            revote=p["revote"],
            candidates=ctx.seats(p["candidates"]),
            barred_line=barred,
            deadline=deadline_text(ctx, p["deadline"]),
        )
    if key == "window.choice":
        return ctx.t(
            key,
            number=p.get("number", ""),
            chooser=ctx.seat(p["chooser"]),
            candidates=ctx.seats(p["candidates"]),
            deadline=deadline_text(ctx, p["deadline"]),
        )
    if key == "night.result":
        return (
            ctx.t("night.result", left=ctx.seats(p["left"])) if p["left"] else ctx.t("night.nobody")
        )
    if key == "day.result":
        return ctx.t("day.result", left=ctx.seats(p["left"])) if p["left"] else ctx.t("day.nobody")
    if key in ("day.confess", "day.vetoed", "day.spared"):
        return ctx.t(key, seat=ctx.seat(p["seat"]))
    if key == "night.silenced":
        return ctx.t(key, number=p.get("number"), seats=ctx.seats(p["seats"]))
    if key == "window.last_act":
        return ctx.t(key, deadline=deadline_text(ctx, p.get("deadline")))
    if key == "lastact.used":
        return ctx.t(
            key,
            by=ctx.seat(p["by"]),
            power=_power(ctx, p["power"]),
            target=ctx.seat(p["target"]),
            left=ctx.seats(p["left"]) or "—",
        )
    if key == "day.tally":
        return _tally(ctx, p)
    if key.startswith("tie."):
        return ctx.t(
            key,
            tied=ctx.seats(p["tied"]),
            drawn=ctx.seat(p["drawn"]) if p.get("drawn") else "",
            label=p.get("label") or "",
            chooser=ctx.seat(p["chooser"]) if p.get("chooser") else "",
            commitment=p.get("commitment") or "",
        )
    if key == "lastwords.invite":  # open until the next lock, or the next death list
        window = "invite_next_death" if p.get("until") == "next_death" else "invite"
        return ctx.t(f"lastwords_msg.{window}", seats=ctx.seats(p["seats"]))
    if key == "lastwords.text":
        return ctx.t("lastwords_msg.text", seat=ctx.seat(p["seat"]), text=p["text"])
    if key == "reveal":
        colon, sep = ("：", "；") if ctx.locale == "zh-CN" else (": ", "; ")
        items = [
            f"{ctx.seat(s)}{colon}{ctx.t('role.' + v)}"
            for s, _, v in (x.partition(":") for x in str(p["revealed"]).split(","))
        ]
        return ctx.t("reveal_msg.text", items=sep.join(items))
    if key == "game.over":
        return _game_over(ctx, p)
    if key == "mod.penalty":
        return ctx.t(
            "override.penalty_team" if p.get("team") else "override.penalty_seat",
            team=ctx.t(f"team_name.{p['team']}") if p.get("team") else "",
            seat=ctx.seat(p.get("seat")) if p.get("seat") else "",
            power=_power(ctx, p["power"]) if p.get("power") else ctx.t("log.any_power"),
            night=p.get("night", ""),
            reason=p.get("reason", ""),
        )
    if key == "mod.advanced":
        return ctx.t("override.advanced", phase=_advanced_window(ctx, p))
    if key == "mod.voided" and p.get("voter"):  # whose vote, and what it said
        vote = (
            ctx.t("notice.abstain")
            if p.get("abstain")
            else ctx.t("override.vote_for", target=ctx.seat(p.get("target")))
        )
        return ctx.t(
            "override.voided_vote",
            voter=ctx.seat(p["voter"]),
            vote=vote,
            reason=p.get("reason", ""),
        )
    if key.startswith("mod."):
        name = key.removeprefix("mod.")
        return ctx.t(
            f"override.{name}",
            deadline=deadline_text(ctx, p.get("deadline")),
            # a removal of a player holding several cards (5.0) names every card leaving
            seat=ctx.seats(p["left"])
            if p.get("left")
            else (ctx.seat(p.get("seat")) if p.get("seat") else ""),
            post=p.get("post", ""),
            reason=p.get("reason", ""),
        ) + (ctx.t("override.reason", reason=p["reason"]) if _reasoned(name, p) else "")
    return ctx.t(key, **p)


def _advanced_window(ctx: Context, p: Mapping[str, object]) -> str:
    """The window a moderator closed early: `第1夜`, `第2天第1次 PK` (`本阶段` if not said)."""
    label = str(p.get("phase") or "")
    if not label:
        return ctx.t("override.this_window")
    if p.get("choice"):  # a victim's choice among the tied
        return ctx.t("override.choice_window", number=label.split()[1])
    if p.get("revote"):
        return ctx.t("override.revote_window", number=label.split()[1], revote=p["revote"])
    return _phase(ctx, label)


def _reasoned(override: str, p: Mapping[str, object]) -> bool:
    """A replacement or removal given with a reason (the void's reason is in its own text)."""
    return override in ("replaced", "modkill") and bool(p.get("reason"))


def _without(values: Params, name: str) -> Params:
    return tuple((k, v) for k, v in values if k != name)


def _pairs(text: object) -> dict[str, str]:
    """`a:b;c:d` (or `a:b,c:d`) as a mapping."""
    items = str(text or "").replace(";", ",").split(",")
    return dict(item.partition(":")[::2] for item in items if item)


def public_roster(ctx: Context, public: str) -> str:
    """Everyone's public identity (无间道's 公开身份), grouped: `警方：1号 A、2号 B；匪方：…`."""
    by_role: dict[str, list[str]] = {}
    for seat, role in _pairs(public).items():
        by_role.setdefault(role, []).append(seat)
    colon, sep = ("：", "；") if ctx.locale == "zh-CN" else (": ", "; ")
    return sep.join(
        f"{ctx.t(f'public.{role}')}{colon}{ctx.seats(','.join(seats))}"
        for role, seats in by_role.items()
    )


def card_roster(ctx: Context, cards: str) -> str:
    """Which cards each player holds (`1,2;3,4;…`), as 「1号、2号 阿明；3号、4号 小红」."""
    number, sep, between = ("{}号", "、", "；") if ctx.locale == "zh-CN" else ("#{}", ", ", "; ")
    lines = []
    for held in (x for x in cards.split(";") if x):
        seats = [s for s in held.split(",") if s]
        name = plain(ctx.names.get(int(seats[0]), "?"))
        lines.append(f"{sep.join(number.format(int(s)) for s in seats)} {name}")
    return between.join(lines)


def _tally(ctx: Context, p: Mapping[str, object]) -> str:
    by_target: dict[str, list[str]] = {}
    abstained: list[str] = []
    for pair in filter(None, str(p["votes"]).split(";")):
        voter, _, target = pair.partition(">")
        if target == "abstain":
            abstained.append(voter)
        else:
            by_target.setdefault(target, []).append(voter)
    sep = "、" if ctx.locale == "zh-CN" else ", "
    # votes of different weights (5.0: one per living card): the count is the weighted one
    weights = {int(v): int(w) for v, w in _pairs(p.get("weights")).items()}
    counts = {t: int(n) for t, n in _pairs(p.get("counts")).items()}

    def count(target: str) -> int:
        return counts.get(target, len(by_target[target]))

    def weighed(v: str) -> str:
        w = weights.get(int(v), 1)
        return f"{int(v)}×{w}" if w != 1 else str(int(v))

    ranked = sorted(by_target, key=lambda t: (-count(t), int(t)))
    between = "；" if ctx.locale == "zh-CN" else "; "
    lines = [
        ctx.t(
            "day.tally_line",
            target=ctx.seat(t),
            voters=sep.join(weighed(v) for v in by_target[t]),
            count=count(t),
        )
        for t in ranked
    ]
    text = between.join(lines) if lines else ctx.t("day.tally_empty")
    key = "day.tally_runoff" if p.get("revote") else "day.tally"
    group = ctx.t(f"group.{p['group']}") if p.get("group") else ""
    if group:
        key = "day.tally_group"
    out = ctx.t(key, number=p["number"], revote=p.get("revote"), lines=text, group=group)
    if abstained:
        out += "\n" + ctx.t("day.abstained", names=sep.join(ctx.seat(a) for a in abstained))
    void = [x.split(":") for x in str(p.get("void") or "").split(";") if x]
    deadline = p.get("deadline")
    if void:
        items = []
        for seat, reason, at in void:
            who = ctx.seat(seat) if seat != "0" else ctx.t("void_reason.someone")
            detail = ctx.t(f"void_reason.{reason}")
            if at:
                when = _post_time(ctx, int(at), deadline if isinstance(deadline, int) else None)
                detail = f"{when}，{detail}" if ctx.locale == "zh-CN" else f"{when}, {detail}"
            # English: no parentheses around a reason that holds a gloss, "(out of the game (出局))"
            items.append(f"{who}（{detail}）" if ctx.locale == "zh-CN" else f"{who} — {detail}")
        out += "\n" + ctx.t("day.void", items=between.join(items))
    return out


def _post_time(ctx: Context, at: int, deadline: int | None) -> str:
    """A void post's time of day, to the second as the 看表帖 gives the deadline; to the
    millisecond when it falls in the deadline's second (a post 1 ms late would read `17:00:00`,
    the deadline itself), or when the deadline is not known and the second would hide some."""
    when = exact_time(ctx, at)[0][11:]
    same_second = at // 1000 == deadline // 1000 if deadline is not None else at % 1000 != 0
    return f"{when}.{at % 1000:03d}" if same_second else when


def _game_over(ctx: Context, p: Mapping[str, object]) -> str:
    sep = "；" if ctx.locale == "zh-CN" else "; "
    roles = sep.join(
        f"{ctx.seat(s)} {ctx.t('role.' + r)}"
        for s, _, r in (x.partition(":") for x in str(p["roles"]).split(","))
    )
    scores = sep.join(
        f"{ctx.seat(s)} {v}" for s, _, v in (x.partition(":") for x in str(p["scores"]).split(","))
    )
    return ctx.t(
        "game.over",
        winner=ctx.t(f"camp.{p['winner']}"),
        after=_phase(ctx, str(p["after"])),
        reason=ctx.t(str(p["reason"])),
        roles=roles,
        scores=scores,
        seed=p["seed"],
        commitment=p["commitment"],
    )


def render_vote_channel(ctx: Context, effect: VoteChannelPost) -> str:
    """A post in the vote channel: the draw of a tie (抽签), with what is needed to check it."""
    p = _p(effect.params)
    group = ctx.t("day.group_prefix", group=ctx.t(f"group.{p['group']}")) if p.get("group") else ""
    return group + ctx.t(
        effect.key,
        day=p["day"],
        tied=ctx.seats(p["tied"]),
        drawn=ctx.seat(p["drawn"]),
        label=p["label"],
        commitment=p["commitment"],
    )


CHECK_WORDING = {"other": "check_msg.result_other", "none": "check_msg.result_none"}
"""Check answers the generic `check_msg.result` ("X 是 **…**") does not read for: 5.0's mole's
answer (不是秘警) and no information (a check on the card 花蝴蝶 hugs)."""


def render_private(ctx: Context, effect: Whisper | TeamNotice) -> str:
    """A private message's text (to one seat, or a team's thread)."""
    p = _p(effect.params)
    key = effect.key
    if key == "role.dealt":
        powers = [_power(ctx, x) for x in str(p["powers"]).split(",") if x]
        powers_line = role_powers_line(ctx, powers, later_powers(ctx, p.get("later")))
        mates = known_seats(ctx, p["teammates"], p.get("known"), p.get("out"))
        mates_line = ctx.t("role_msg.mates_line", teammates=mates) if mates else ""
        text = ctx.t(
            "role_msg.dealt",
            seat=p["seat"],
            role=role_text(ctx, p),
            powers_line=powers_line,
            mates_line=mates_line,
        )
        if p.get("cards"):  # 5.0 双身份: both of the player's cards
            text += "\n" + ctx.t("role_msg.cards_line", cards=cards_text(ctx, p["cards"]))
        return text
    if key == "window.powers":
        sep = "、" if ctx.locale == "zh-CN" else ", "
        listed = sep.join(_power(ctx, x) for x in str(p["powers"]).split(",") if x)
        text = ctx.t(
            key, number=p["number"], powers=listed, deadline=deadline_text(ctx, p["deadline"])
        )
        if p.get("card"):  # 5.0 双身份: the card this menu acts for
            text = ctx.t("window.card_prefix", card=ctx.seat(p["card"])) + text
        return text
    if key == "power.accepted":
        if p.get("untargeted"):  # used on no seat (天下无贼: 傻根)
            return ctx.t("power.used", power=_power(ctx, p["power"]))
        if p["target"] is None:
            return ctx.t("power.passed", power=_power(ctx, p["power"]))
        return ctx.t(key, power=_power(ctx, p["power"]), target=ctx.seat(p["target"]))
    if key == "team.submission":
        if p.get("untargeted"):
            return ctx.t(
                "team.submission_used", seat=ctx.seat(p["seat"]), power=_power(ctx, p["power"])
            )
        if p["target"] is None:
            return ctx.t(
                "team.submission_pass", seat=ctx.seat(p["seat"]), power=_power(ctx, p["power"])
            )
        return ctx.t(
            key,
            seat=ctx.seat(p["seat"]),
            power=_power(ctx, p["power"]),
            target=ctx.seat(p["target"]),
        )
    if key == "check.history":  # a substitute's: the answers the seat learned before
        sep = "；" if ctx.locale == "zh-CN" else "; "
        return ctx.t("check_msg.history", lines=sep.join(check_lines(ctx, p["checks"])))
    if key == "check.result":
        answer = str(p["result"])
        return ctx.t(
            CHECK_WORDING.get(answer, "check_msg.result"),
            target=ctx.seat(p["target"]),
            result=ctx.t(f"check.{answer}"),
        )
    if key == "lastwords.prompt":
        return ctx.t("lastwords_msg.prompt")
    if key == "choice.accepted":
        return ctx.t("choice_msg.accepted", target=ctx.seat(p["target"]))
    if key in ("lastact.prompt", "lastact.passed"):  # the power on death by its name, not `shoot`
        return ctx.t(key, power=_power(ctx, p["power"]))
    return ctx.t(key, **p)


def role_text(ctx: Context, p: Mapping[str, object]) -> str:
    """The role in a role message (`role.dealt`): with the side it plays for where the ruleset
    names it (a mine: 「地雷（警雷，帮助警察一方）」), and the card dealt where the role has
    turned since (a substitute's: 「杀手（发牌时为秘匪）」)."""
    text = ctx.t(f"role.{p['role']}")
    if p.get("side"):
        text = ctx.t("role_msg.with_side", role=text, side=ctx.t(f"role_side.{p['side']}"))
    if p.get("dealt"):
        text = ctx.t("role_msg.dealt_as", role=text, dealt=ctx.t(f"role.{p['dealt']}"))
    return text


def role_powers_line(ctx: Context, powers: Sequence[str], later: Sequence[str]) -> str:
    """The powers a role message (and /role) names: those usable now, or that there are none
    (yet, where some come later), then those held later or on leaving the game (`later_powers`),
    each already in words."""
    if powers:
        sep = "、" if ctx.locale == "zh-CN" else ", "
        line = ctx.t("role_msg.powers_line", powers=sep.join(powers))
    else:  # none now: maybe later, or on leaving the game
        line = ctx.t("role_msg.no_powers_yet" if later else "role_msg.no_powers")
    if later:
        sep = "；" if ctx.locale == "zh-CN" else "; "
        line += ctx.t("role_msg.later_line", powers=sep.join(later))
    return line


def later_powers(ctx: Context, later: object) -> list[str]:
    """The powers a role holds later or on leaving the game, each with when
    (`engine.rulesets.base.LaterPower.text`): 「验人（从第2夜起）」."""
    out = []
    for item in (x for x in str(later or "").split(";") if x):
        power, when, *details = item.split(":")
        values = dict(d.partition("=")[::2] for d in details)
        if "spent" in values:
            values["spent"] = _power(ctx, values["spent"])
        if "becomes" in values:
            values["becomes"] = ctx.t(f"role.{values['becomes']}")
        out.append(
            ctx.t(
                "role_msg.later_item",
                power=_power(ctx, power),
                when=ctx.t(f"later.{when}", **values),
            )
        )
    return out


def check_lines(ctx: Context, checks: object) -> list[str]:
    """Check answers (`night:target:answer;…`), as /role shows them: 「第1夜验 9号 阿明：平民」."""
    out = []
    for item in (x for x in str(checks or "").split(";") if x):
        night, target, answer = item.split(":")
        out.append(check_line(ctx, night, target, answer))
    return out


def check_line(ctx: Context, night: object, target: int | str, answer: str) -> str:
    """One check answer a seat knows: the night, the seat checked, the answer."""
    return ctx.t(
        "notice.check_line", night=night, target=ctx.seat(target), result=ctx.t(f"check.{answer}")
    )


def known_seats(ctx: Context, seats: object, known: object, out: object = None) -> str:
    """Seats a player knows, each with the role they see (`3号 阿明（杀手）`, "#3 Amin: 杀手
    (killer)"), those in `out` (seat numbers) marked out of the game (`3号 阿明（杀手，已出局）`).
    English names a role as a player's cards are named ("#3 Amin: …"), never in parentheses
    inside parentheses ("#3 Amin (杀手 (killer))"), and so lists them with "; "."""
    roles = _pairs(known)
    gone = {s for s in str(out or "").split(",") if s}
    sep = "、" if ctx.locale == "zh-CN" else "; "
    shown = []
    for seat in (s for s in str(seats or "").split(",") if s):
        role = roles.get(seat)
        if role is None:
            shown.append(ctx.seat(seat))
        else:
            key = "role_msg.known_out" if seat in gone else "role_msg.known"
            shown.append(ctx.t(key, seat=ctx.seat(seat), role=ctx.t("role." + role)))
    return sep.join(shown)


def cards_text(ctx: Context, cards: object) -> str:
    """A player's cards (5.0 双身份), each with its role: `3号 阿明：杀手、4号 阿明：医生`."""
    sep, colon = ("、", "：") if ctx.locale == "zh-CN" else (", ", ": ")
    return sep.join(
        f"{ctx.seat(seat)}{colon}{ctx.t('role.' + role)}" for seat, role in _pairs(cards).items()
    )


def error_text(ctx: Context, key: str, values: Mapping[str, object]) -> str:
    """An engine refusal in words: a power named by its id is shown by its name (a list of them,
    `powers`, comma-separated ids, too), a team (`team`) by its name, the moments `now` and
    `deadline` (epoch ms) as the game's local time with its zone (`zone`), a member (`player`)
    given by their Discord id as a mention."""
    shown = dict(values)
    names = catalog(ctx.locale)
    power = shown.get("power")
    if isinstance(power, str) and f"power.{power}" in names:
        shown["power"] = _power(ctx, power)
    powers = shown.get("powers")
    if isinstance(powers, str):
        sep = "、" if ctx.locale == "zh-CN" else ", "
        shown["powers"] = sep.join(
            _power(ctx, p) if f"power.{p}" in names else p for p in powers.split(",") if p
        )
    team = shown.get("team")
    if isinstance(team, str) and f"team_name.{team}" in names:
        shown["team"] = ctx.t(f"team_name.{team}")
    player = shown.get("player")
    if isinstance(player, str) and player.isdigit():  # a member by id (a moderator's substitute)
        shown["player"] = f"<@{player}>"  # a mention in a private answer notifies no one
    if "candidates" in shown:  # the players one may vote for or pick, as seats are named
        shown["candidates"] = ctx.seats(str(shown["candidates"]))
    cards = shown.get("seats")
    if isinstance(cards, str) and re.fullmatch(r"\d+(,\d+)*", cards):  # one player's cards
        number, sep = ("{}号", "、") if ctx.locale == "zh-CN" else ("#{}", ", ")
        shown["seats"] = sep.join(number.format(int(s)) for s in cards.split(","))
    for name in ("now", "deadline"):
        moment = shown.get(name)
        if isinstance(moment, int) and not isinstance(moment, bool):
            shown[name], shown["zone"] = exact_time(ctx, moment)
    return ctx.t(key, **shown)


def render_reply(ctx: Context, effect: ReplyToPost) -> str | None:
    """The reply to a vote post: None for a valid one (it gets ✅), else the reason."""
    if effect.key is None:
        return None
    values = _p(effect.params)
    if "candidates" in values:  # a run-off's candidates, named as seats are everywhere
        values["candidates"] = ctx.seats(values["candidates"])
    if "raw" in values:  # the poster's words quoted (a target it could not read): text, as names
        values["raw"] = plain(str(values["raw"]))
    return ctx.t(effect.key, **values)
