"""Two ways of doing one thing agree (`tests/robustness/test_rb_interfaces.py` found these).

5.0 双身份 deals two cards a player. The store's seat rows (who holds a seat from when, and the
role confirmations) were written one per *player* at the start (seats 1…8), while everything
else names a card (seats 1…16): the role DM's button of a card confirmed the row of the player
with that number, and a substitute's row was written under the card the moderator named. So:

- a player's role DM button answered "you are not a player in this game" for most cards (card
  2k's button checked player 2k's row), and `/mod pending` listed them unconfirmed for good;
- after a replacement, the player whose number was the card named lost their game in every
  command from a DM (`/role`, `/act`, `/vote` there: "no game here"), while the same command
  in the game's channel worked; the replaced player kept it there (and was told, in a DM,
  that they were no longer a player, not that they had no game).
"""

from __future__ import annotations

from pathlib import Path

from envclock import EnvClock
from gamebot import Driver, Table, running_table
from simcord import MemberActor

from bot.records.i18n import render

SEED = "interfaces-agree"
PLAYERS = 8  # 16 cards


def _confirm_messages(t: Table, member: MemberActor) -> list[object]:
    """The member's role DMs, each with its confirm button."""
    return [
        message
        for message in t.dms(member)
        for row in message.components
        for child in getattr(row, "children", [])
        if str(getattr(child, "custom_id", "")).startswith("faguan:confirm:")
    ]


async def test_each_card_of_a_5_0_player_confirms_its_role_by_its_button(tmp_path: Path) -> None:
    async with running_table(tmp_path / "g.db", PLAYERS, EnvClock(), SEED) as t:
        d = Driver(t, "v5")
        await d.start()
        confirmed = render("en", "notice.confirmed", {})
        for member in t.players:
            messages = _confirm_messages(t, member)
            assert len(messages) == 2, member.name  # a role DM per card
            for message in messages:
                answer = await member.user.click(message)
                assert answer.response is not None
                assert answer.response.content == confirmed, (member.name, answer.response)
        pending = await t.moderator.slash(t.channel, "mod pending")
        assert pending.response is not None
        nobody = render("en", "pending.unconfirmed", {"seats": render("en", "pending.nobody", {})})
        assert nobody in pending.response.content, pending.response.content


async def test_after_a_5_0_replacement_a_dm_finds_the_same_game_as_the_channel(
    tmp_path: Path,
) -> None:
    async with running_table(tmp_path / "g.db", PLAYERS, EnvClock(), SEED) as t:
        d = Driver(t, "v5")
        await d.start()
        replaced, third = t.players[1], t.players[2]  # cards 3-4 and 5-6
        answer = await t.moderator.slash(t.channel, "mod replace", seat=3, member=t.outside)
        assert answer.response is not None
        assert render("en", "notice.accepted", {}) in answer.response.content
        no_game = render("en", "notice.no_game", {})
        for member, cards in ((third, "#5 玩家3"), (t.outside, "#3 路人")):
            in_channel = await member.slash(t.channel, "role")
            in_dm = await member.user.slash("role")
            assert in_channel.response is not None and in_dm.response is not None
            assert cards in in_channel.response.content, in_channel.response.content
            assert in_dm.response.content == in_channel.response.content, member.name
        # the replaced player plays no longer: from a DM, as anyone in no game, no game there
        gone = await replaced.user.slash("role")
        assert gone.response is not None and gone.response.content == no_game
