"""zh-CN names and descriptions for the slash commands (discord.py's app_commands Translator).

Commands are declared in English; Discord shows Chinese-speaking users these translations. The
translator is asked for every name, description and fixed choice's name declared as a
`locale_str` (a plain str is never translated), and answers by the English text alone, whatever
the context: an English text means the same wherever it is used.
"""

from __future__ import annotations

from discord import Locale, app_commands

from bot.records.i18n import catalog
from engine.model import Power

ZH: dict[str, str] = {
    # groups and commands
    "game": "游戏",
    "new": "新建",
    "join": "加入",
    "leave": "退出",
    "start": "开始",
    "status": "状态",
    "record": "记录",
    "role": "身份",
    "act": "行使权利",
    "pass": "不行使",
    "vote": "投票",
    "lastwords": "遗言",
    "choose": "选择",
    "mod": "管理",
    "extend": "延长",
    "shorten": "缩短",
    "set-deadline": "设定截止",
    "advance": "提前截止",
    "pause": "暂停",
    "resume": "继续",
    "replace": "替补",
    "modkill": "移出",
    "void": "判无效",
    "end": "结束",
    # the moderators' context menus (on a vote post, on a member)
    "Void this vote": "判为无效",
    "Replace": "替补",
    "Modkill": "移出游戏",  # as /mod modkill (/管理 移出); 处决 is a power (execute)
    # options
    "ruleset": "规则",
    "min_players": "最少人数",
    "max_players": "最多人数",
    "tie": "平票规则",
    "power_deadline": "夜间截止",
    "vote_deadline": "投票截止",
    "vote_channel": "投票频道",
    "forum": "论坛频道",
    "language": "语言",
    "options": "选项",
    "power": "权利",
    "target": "对象",
    "card": "牌位",
    "minutes": "分钟",
    "time": "时间",
    "seat": "座位",
    "member": "成员",
    "message_id": "帖子编号",
    "reason": "理由",
    "winner": "胜方",
    "game_id": "局号",
    # descriptions
    "Games of 杀人游戏 (Mafia) judged by the bot": "由法官主持的杀人游戏",
    "Open sign-up for a new game in this channel (moderators)": "在本频道开新局报名（管理员）",
    "Join the game being signed up in this channel": "加入本频道正在报名的游戏",
    "Leave the sign-up": "退出报名",
    "Deal the roles and start (moderators)": "发牌并开始游戏（管理员）",
    "Phase, deadline, who is in, who has voted": "阶段、截止时间、存活玩家、已投票玩家",
    "The record and the seed of a finished game": "已结束对局的记录与种子",
    "Your seat, role, powers, teammates and check results (only you see it)": "你的座位、身份、权利、同伴与验人结果（仅你可见）",
    "Use a power (at night; by day a day power such as veto)": "行使权利（夜间权利；白天如否决等日间权利）",
    "Explicitly pass on a night power (不行使)": "明确放弃本夜权利",
    "Vote (the bot posts your vote publicly, stamped now)": "投票（法官代你公开发帖，以当前时间为准）",
    "Give your last words (遗言)": "留遗言",
    "Pick who leaves among the tied players": "在平票者中选择出局者",
    "Moderator tools": "管理工具",
    "Extend the current deadline": "延长当前截止时间",
    "Shorten the current deadline": "缩短当前截止时间",
    "Set the current deadline (YYYY-MM-DD HH:MM, game time)": "设定当前截止时间（YYYY-MM-DD HH:MM，游戏时区）",
    "Lock the current window now": "立即截止当前阶段",
    "Pause the clock": "暂停计时",
    "Resume the clock": "恢复计时",
    "Replace a player with a substitute": "用替补替换玩家",
    "Remove a player for inactivity": "因不活跃移出玩家",
    "Void a vote post": "判定投票帖无效",
    "End the game": "结束游戏",
    # the long game: penalties, pending, the override log, seasons, reminders
    "penalty": "处罚",
    "pending": "待办",
    "log-channel": "日志频道",
    "new-season": "新赛季",
    "standings": "积分榜",
    "remind": "提醒",
    "team": "阵营",
    "channel": "频道",
    "name": "名称",
    "season": "赛季",
    "state": "开关",
    "Penalty: a team's or a seat's night power does not act next night": "处罚：某阵营或某座位下一夜不能行使夜间权利",
    "Who has not confirmed their role, used a power, or voted": "谁还没有确认身份、行使权利或投票",
    "Where overrides are logged (empty: nowhere)": "管理操作的日志频道（留空则取消）",
    "Start a new season of the standings": "开始积分榜的新赛季",
    "The season standings: rank, player, games, wins, points": "本赛季积分榜：名次、玩家、局数、胜场、积分",
    "Turn your private deadline reminders on or off": "开启或关闭截止前的私信提醒",
    # what each option takes (shown while it is filled in; at most 100 characters each)
    "Ruleset id such as basic or v2 (suggested as you type)": "规则编号，如 basic 或 v2（输入时会提示）",
    "Fewest players to start, within the ruleset's range (default: the ruleset's minimum)": (
        "开局所需的最少人数，须在规则允许的范围内（默认：规则的最少人数）"
    ),
    "Most players who can join, within the ruleset's range (default: the ruleset's maximum)": (
        "最多可报名的人数，须在规则允许的范围内（默认：规则的最多人数）"
    ),
    "How a tied vote (平票) is settled (default: lots, 抽签)": "平票如何处理（默认：抽签）",
    "Night power deadline: HH:MM daily (bot's timezone) or a length such as 24h, 90m, 1h30m": (
        "夜间权利行使截止：每天的 HH:MM（法官的时区），或时长，如 24h、90m、1h30m"
    ),
    "Day vote deadline: HH:MM daily (bot's timezone) or a length such as 24h, 90m, 1h30m": (
        "白天投票截止：每天的 HH:MM（法官的时区），或时长，如 24h、90m、1h30m"
    ),
    "Channel where vote posts count (default: this channel; not used with forum)": (
        "投票帖计票的频道（默认：本频道；论坛对局不用）"
    ),
    "Language of everything the bot posts in this game (default: the bot's config)": (
        "法官在本局所发一切内容的语言（默认：机器人配置）"
    ),
    "Options as name=value, separated by spaces or commas, e.g. composition=2 (suggested)": (
        "游戏选项，写成 名称=值，多个用空格或逗号分开，如 composition=2（输入时会提示）"
    ),
    "Host the game in this forum channel: a main post, and a 投票帖 (vote post) each day": (
        "在此论坛频道主持本局：一个主帖，每天一个投票帖"
    ),
    "A game of this server by its number (第N局); default: this channel's game, or your only one": (
        "本服务器的局号（第N局）；默认：本频道的对局，或你唯一参加的对局"
    ),
    "Which game (第N局), if you are in several (default: this channel's or your only game)": (
        "局号（第N局），参加多局时指明；默认：本频道的对局，或你唯一参加的对局"
    ),
    "A seat or abstain (弃权), suggested; by hand: 5号 (seat 5), a name, 弃票 (abstain)": (
        "座位号或弃权（输入时会提示）；也可手写：5号、玩家名字、弃票"
    ),
    "The power to use (suggested: your powers now)": "要行使的权利（输入时提示你现在有的权利）",
    "Target's seat number (suggested); leave out for a power on nobody, e.g. 认匪 (confess)": (
        "对象的座位号（输入时会提示）；不选对象的权利（如认匪）留空"
    ),
    "5.0 双身份 (two cards): which card acts (default: the first holding the power)": (
        "5.0 双身份：由你的哪张牌行使（默认：第一张持有该权利的牌）"
    ),
    "The night power you pass on (不行使) tonight (suggested)": "本夜不行使的权利（输入时会提示）",
    "5.0 双身份 (two cards): which card passes (default: the first holding the power)": (
        "5.0 双身份：由你的哪张牌不行使（默认：第一张持有该权利的牌）"
    ),
    "The seat number of the tied player (平票者) who leaves": "出局者的座位号（须是平票者之一）",
    "Minutes to add to the open window's deadline": "当前截止时间推后的分钟数",
    "Minutes to take off the open window's deadline": "当前截止时间提前的分钟数",
    "The new deadline: YYYY-MM-DD HH:MM in the game's timezone, e.g. 2026-12-02 22:00": (
        "新的截止时间：YYYY-MM-DD HH:MM（游戏时区），如 2026-12-02 22:00"
    ),
    "The seat number of the player to replace": "被替换玩家的座位号",
    "The substitute (替补) who takes the seat": "接替该座位的替补",
    "Why, announced with the replacement (at most 200 characters)": "理由，随替补公告发布（最多 200 字）",
    "The seat number of the player to remove from the game": "要移出游戏的玩家的座位号",
    "Why, announced with the removal (at most 200 characters)": "理由，随移出公告发布（最多 200 字）",
    "The vote post's message ID, or its message link (Copy Message ID or Copy Message Link)": (
        "投票帖的消息 ID，或它的消息链接（复制消息 ID 或复制消息链接）"
    ),
    "Why the vote is void; the bot replies to the post with it (at most 200 characters)": (
        "判无效的理由，法官会用它回复该帖（最多 200 字）"
    ),
    "The result: the side that wins, or draw (suggested: those this game's ruleset has)": (
        "结果：获胜方或平局（输入时提示本局规则可能的结果）"
    ),
    "Why, announced with the penalty (at most 200 characters)": "理由，随处罚公告发布（最多 200 字）",
    "The team whose night power is stopped (suggested); or give seat instead": (
        "被处罚的阵营（输入时会提示）；或改填座位"
    ),
    "Or the seat number whose night power is stopped": "或被处罚的座位号",
    "Only this night power (default: every night power of the team or seat)": (
        "只处罚这一项夜间权利（默认：该阵营或座位的全部夜间权利）"
    ),
    "Channel for the override log; left out: no log": "管理操作的日志频道；留空则不记录",
    "The new season's name, at most 32 characters (default: the next number)": (
        "新赛季的名称，最多 32 个字符（默认：下一个编号）"
    ),
    "An earlier season's name (default: the current season)": "往期赛季的名称（默认：当前赛季）",
    "on or off: DM reminders before deadlines, on this server (from a DM: where you play)": (
        "开或关：截止前的私信提醒，限本服务器（在私信中使用：你参加游戏的所有服务器）"
    ),
    # fixed choices (a choice's name; the value sent stays the id)
    "lots (抽签): one of the tied is drawn by verifiable lots": "抽签：在平票者中以可验证的抽签抽出一人",
    "revote (PK): run-offs among the tied": "PK：平票者之间再投票",
    "none: nobody leaves that day": "无人出局：平票当天无人出局",
    "victim_choice: one run-off, then last night's victim picks": (
        "一次 PK，再平票则由前一夜出局者选择"
    ),
    "zh-CN (简体中文)": "简体中文（zh-CN）",
    "en (English)": "英文（en）",
    "on: remind me before deadlines": "开：截止前提醒我",
    "off: no reminders": "关：不再提醒",
}


def power_name(power: Power) -> str:
    """A power as an English client reads it ("kill (杀人)"): the name of its fixed choice, and
    the key of its zh-CN name, both from the message catalogs (as /act suggests powers)."""
    return catalog("en")[f"power.{power.value}"]


ZH |= {power_name(p): catalog("zh-CN")[f"power.{p.value}"] for p in Power}


class FaguanTranslator(app_commands.Translator):
    """Chinese for zh-CN clients; everything else stays as declared."""

    async def translate(
        self,
        string: app_commands.locale_str,
        locale: Locale,
        context: app_commands.TranslationContextTypes,
    ) -> str | None:
        if locale is not Locale.chinese:
            return None
        return ZH.get(string.message)
