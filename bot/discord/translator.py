"""zh-CN names and descriptions for the slash commands (discord.py's app_commands Translator).

Commands are declared in English; Discord shows Chinese-speaking users these translations.
"""

from __future__ import annotations

from discord import Locale, app_commands

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
    "Modkill": "处决",
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
    "Games of 杀人游戏 judged by the bot": "由法官主持的杀人游戏",
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
    "on or off": "开或关",
    "Penalty: a team's or a seat's night power does not act next night": "处罚：某阵营或某座位下一夜不能行使夜间权利",
    "Who has not confirmed their role, used a power, or voted": "谁还没有确认身份、行使权利或投票",
    "Where overrides are logged (empty: nowhere)": "管理操作的日志频道（留空则取消）",
    "Start a new season of the standings": "开始积分榜的新赛季",
    "The season standings: rank, player, games, wins, points": "本赛季积分榜：名次、玩家、局数、胜场、积分",
    "Turn your private deadline reminders on or off": "开启或关闭截止前的私信提醒",
}


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
