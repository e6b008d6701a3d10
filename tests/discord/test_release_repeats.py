"""An ended game's release (`bot.discord.permissions.release`) performed again after the next game
started in the same forum: retried late, or by the recovery after a restart. It leaves the forum
as the next game set it: closed to everyone but that game's players."""

from __future__ import annotations

import pytest
from faultkit import drain
from gamebot import Driver, Table, make_bot
from simcord import ChannelHandle
from simcord.backend.errors import BackendError
from test_faults import SEED, play

pytestmark = pytest.mark.table(seed=SEED, hosting="forum")


async def ended_with_its_release_undone(t: Table) -> None:
    """A forum game played to its end, whose release fails at the role's deletion (503): it is
    left in the outbox, to be tried again."""
    d = Driver(t, "v2")
    roles = await d.start()
    t.env.inject_error(
        "DELETE", f"/guilds/{t.guild.id}/roles/*", status=503, code=0, message="down", times=1
    )
    await play(d, roles)
    assert (await t.bot.runtime.service.state(d.game_id)).over
    assert await t.bot.runtime.service.repo.undone_effects()


async def next_game(t: Table) -> ChannelHandle:
    """The next game, started in the same forum; its main post."""
    assert t.forum is not None
    before = {thread.id for thread in t.forum.threads}
    lobby = t.guild.create_text_channel("下一局")
    await t.moderator.slash(lobby, "game new", ruleset="v2", forum=t.forum)
    (main,) = [thread for thread in t.forum.threads if thread.id not in before]
    for player in t.players:
        await player.slash(main, "game join")
    await t.moderator.slash(main, "game start")
    await t.env.settle()
    return main


async def assert_closed_to_everyone(t: Table, main: ChannelHandle) -> None:
    """Only the game's players post in its main post: the forum denies everyone else."""
    assert t.forum is not None
    forum = t.bot.get_channel(t.forum.id)
    everyone = t.bot.get_guild(t.guild.id).default_role  # type: ignore[union-attr]
    assert forum.overwrites_for(everyone).send_messages_in_threads is False  # type: ignore[union-attr]
    with pytest.raises(BackendError, match="Missing Permissions"):
        await t.outside.send(main, "路人 来捣乱")


async def test_a_release_retried_after_the_next_game_started_leaves_its_forum_closed(
    table: Table,
) -> None:
    t = table
    await ended_with_its_release_undone(t)
    main = await next_game(t)
    await drain(t)  # the ended game's release, tried again
    await assert_closed_to_everyone(t, main)


async def test_a_release_the_recovery_performs_leaves_the_next_games_forum_closed(
    table: Table,
) -> None:
    """After a restart the recovery performs the release before any catch-up: the next game's
    channels are routed to it by then."""
    t = table
    await ended_with_its_release_undone(t)
    main = await next_game(t)
    new = make_bot(t.db, t.clock, seed=SEED)  # type: ignore[attr-defined]
    await t.env.restart_bot(new)
    await t.env.settle()
    await new.runtime.caught_up()
    assert not await new.runtime.service.repo.undone_effects()
    await assert_closed_to_everyone(t, main)
