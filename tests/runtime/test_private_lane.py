"""A game's private effects have a lane of their own (docs/architecture.md, "What stays
hidden"): how long they take depends on roles (the role DMs at the deal, a check result at
dawn), so the game's next input does not wait for them — its public effects go out meanwhile —
while the private ones still go out once each, in the order they were recorded."""

from __future__ import annotations

import asyncio
from typing import Any

from fakes import Wired
from test_delivery_races import BLOCKED, Platform, all_effects, assert_once, refused_vote, wired
from test_runtime import new_game

from bot.runtime.service import is_private
from bot.store import OutboxItem
from engine.commands import ReplacePlayer, SubmitPower
from engine.model import Power
from engine.state import SeatState

__all__ = ["wired"]  # the fixture, shared with the delivery races


class HoldingPrivate(Platform):
    """Holds every private effect until `released` (the first one sets `inside`)."""

    async def __call__(self, item: OutboxItem) -> None:
        if is_private(item) and not self.released.is_set():
            self.inside.set()
            await self.released.wait()
        await super().__call__(item)


async def test_the_next_input_is_answered_while_the_previous_inputs_dms_are_in_flight(
    wired: tuple[Wired, Any],
) -> None:
    w, _ = wired
    platform = HoldingPrivate()
    w.runtime.service.set_performer(platform)
    starting = asyncio.create_task(new_game(w))
    await platform.inside.wait()  # the deal's public posts are out, its first role DM in flight
    (game_id,) = await w.runtime.service.active_games()
    replying = asyncio.create_task(refused_vote(w, game_id, 1001, 1))
    done, _ = await asyncio.wait({replying}, timeout=BLOCKED)
    assert replying in done, "the vote's reply waited for the deal's role DMs"
    assert "ReplyToPost" in platform.kinds.values()
    # a night power's confirmation (private) queues behind the deal's role DMs
    state = await w.runtime.service.state(game_id)
    killer = next(s for s in state.seats if s.role.value == "killer")
    target = next(s for s in state.seats if s.role.value == "civilian")
    acting = asyncio.create_task(
        w.runtime.service.submit(
            game_id,
            SubmitPower(player=killer.player, power=Power.KILL, target=target.seat, passed=False),
        )
    )
    await asyncio.wait({acting}, timeout=BLOCKED)
    assert not acting.done(), "a private effect overtook the deal's"
    platform.released.set()
    await asyncio.gather(starting, acting)
    every = await all_effects(w, game_id)
    assert_once(platform, every)
    private = [i for i in platform.performed if platform.kinds[i] in ("Whisper", "TeamJoin")]
    assert private == sorted(private), "private effects out of their recorded order"


async def kill_confirmation_in_flight(
    w: Wired,
) -> tuple[HoldingPrivate, int, SeatState, SeatState, asyncio.Task[Any]]:
    """A started game whose killer's kill is recorded and its confirmation (private) held in
    flight: the platform, the game, the killer, the target and the submission's task."""
    platform = HoldingPrivate()
    platform.released.set()
    w.runtime.service.set_performer(platform)
    game_id = await new_game(w)
    state = await w.runtime.service.state(game_id)
    killer = next(s for s in state.seats if s.role.value == "killer")
    target = next(s for s in state.seats if s.role.value == "civilian")
    platform.released.clear()
    acting = asyncio.create_task(
        w.runtime.service.submit(
            game_id,
            SubmitPower(player=killer.player, power=Power.KILL, target=target.seat, passed=False),
        )
    )
    await platform.inside.wait()
    return platform, game_id, killer, target, acting


async def test_a_substitute_waits_for_the_private_effects_of_the_seats_old_player(
    wired: tuple[Wired, Any],
) -> None:
    """A private effect goes to whoever holds its seat when it is performed: a replacement
    waits until those recorded before it are out (the killer's confirmation is theirs, not the
    substitute's). Before: the replacement was committed while the confirmation waited."""
    w, _ = wired
    platform, game_id, killer, _, acting = await kill_confirmation_in_flight(w)
    confirming = len(platform.performed)  # its index once performed
    replacing = asyncio.create_task(
        w.runtime.service.submit(
            game_id, ReplacePlayer(seat=killer.seat, new_player="2000", by="mod")
        )
    )
    await asyncio.wait({replacing}, timeout=BLOCKED)
    assert len(platform.performed) == confirming, "the seat changed hands meanwhile"
    platform.released.set()
    await asyncio.gather(acting, replacing)
    assert platform.kinds[platform.performed[confirming]] in ("Whisper", "TeamNotice")
    assert_once(platform, await all_effects(w, game_id))


async def test_a_replacement_waiting_for_the_lane_holds_up_no_other_input(
    wired: tuple[Wired, Any],
) -> None:
    """A replacement waits for the private effects under way, and how long depends on roles
    (who is DMed): it waits outside the game's turn, so the game's other inputs and their
    public replies go on meanwhile. Before: it waited holding the turn, and a vote's ✅ came
    when the DMs were out."""
    w, _ = wired
    platform, game_id, _, target, acting = await kill_confirmation_in_flight(w)
    replacing = asyncio.create_task(
        w.runtime.service.submit(
            game_id, ReplacePlayer(seat=target.seat, new_player="2000", by="mod")
        )
    )
    await asyncio.wait({replacing}, timeout=BLOCKED)
    assert not replacing.done()  # it waits for the confirmation
    replying = asyncio.create_task(refused_vote(w, game_id, 1002, 1))
    done, _ = await asyncio.wait({replying}, timeout=BLOCKED)
    assert replying in done, "the vote's reply waited for the replacement's wait"
    platform.released.set()
    await asyncio.gather(acting, replacing)
    after = await w.runtime.service.state(game_id)
    assert after.seat(target.seat).player == "2000"
    assert_once(platform, await all_effects(w, game_id))


class NotingRecipients(HoldingPrivate):
    """`HoldingPrivate`, noting who holds each whisper's seat when it is performed."""

    def __init__(self, service: Any) -> None:
        super().__init__()
        self.service = service
        self.to: list[tuple[str, str]] = []  # (key, player)

    async def __call__(self, item: OutboxItem) -> None:
        if is_private(item) and not self.released.is_set():
            self.inside.set()
            await self.released.wait()
        if item.payload.get("type") == "Whisper":
            state = await self.service.state(item.game_id)
            holder = state.seat(item.payload["seat"]).player
            self.to.append((str(item.payload.get("key")), holder))
        await Platform.__call__(self, item)


async def test_a_replacement_waits_for_a_delivery_queued_behind_it_on_the_lane(
    wired: tuple[Wired, Any],
) -> None:
    """The replacement waits for the lane; meanwhile the seat's old player's check is recorded
    and its confirmation queues on the lane behind the replacement. When the lane frees, the
    replacement must not take the turn before that delivery: it goes to the old player. Before:
    the replacement found the lane unlocked (its next user not yet running) and was recorded,
    and the confirmation went to the substitute."""
    w, _ = wired
    service = w.runtime.service
    platform = NotingRecipients(service)
    platform.released.set()
    service.set_performer(platform)
    game_id = await new_game(w)
    state = await service.state(game_id)
    killer = next(s for s in state.seats if s.role.value == "killer")
    police = next(s for s in state.seats if s.role.value == "police")
    target = next(s for s in state.seats if s.role.value == "civilian")
    platform.released.clear()
    kill = SubmitPower(player=killer.player, power=Power.KILL, target=target.seat, passed=False)
    acting = asyncio.create_task(service.submit(game_id, kill))
    await platform.inside.wait()  # the kill's confirmation holds the lane
    replace = ReplacePlayer(seat=police.seat, new_player="2000", by="mod")
    replacing = asyncio.create_task(service.submit(game_id, replace))
    await asyncio.wait({replacing}, timeout=BLOCKED)
    check = SubmitPower(player=police.player, power=Power.CHECK, target=target.seat, passed=False)
    checking = asyncio.create_task(service.submit(game_id, check))
    await asyncio.wait({checking}, timeout=BLOCKED)
    assert not checking.done()  # recorded; its confirmation waits on the lane
    read = service.repo.undone_effects

    async def slow_read(*args: Any, **kwargs: Any) -> Any:
        await asyncio.sleep(0.05)  # a loaded database: the lane's read takes a while
        return await read(*args, **kwargs)

    service.repo.undone_effects = slow_read  # type: ignore[method-assign]
    platform.released.set()
    await asyncio.gather(acting, replacing, checking)
    checked = [to for key, to in platform.to if key == "power.accepted" and to != killer.player]
    assert checked == [police.player], checked
    assert_once(platform, await all_effects(w, game_id))
