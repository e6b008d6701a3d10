"""Persistent buttons and menus in DMs: confirm the role, choose a night target.

They are `DynamicItem`s: their custom ids carry the game, seat or power, so a click on a message
sent before a restart still reaches the right game.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any

import discord

from bot.discord.interactions import (
    AnswersFailures,
    answer_command,
    confirm_role,
)
from bot.discord.judge import judge_of
from bot.records.render import label
from engine.commands import SubmitPower
from engine.effects import Whisper
from engine.errors import EngineError
from engine.game import decide
from engine.model import Instant, PhaseKind, Power, Seat
from engine.rulesets import rules_for
from engine.state import GameState

if TYPE_CHECKING:
    from bot.records.render import Context

log = logging.getLogger(__name__)

PASS = "pass"
USE = "use"
"""The menu choice that uses a power taking no target (天下无贼: guard or rob 傻根)."""


def valid_targets(
    state: GameState, seat: Seat, power: Power, at: Instant | None = None
) -> list[Seat]:
    """Seats the card `seat` may target with `power` now: exactly what the engine would accept
    from its holder, asked of the engine itself (a pure `decide` on each hypothetical
    submission, the events discarded). A card that does not hold the power gets no seat at all,
    so the list never depends on the hidden roles of others (a killer asking for the police's
    check learns nothing)."""
    player = state.seat(seat).player
    accepted: list[Seat] = []
    for candidate in state.seats:
        if not candidate.alive:
            continue
        command = SubmitPower(player=player, power=power, target=candidate.seat, at=at, seat=seat)
        try:
            decide(state, command)
        except EngineError:
            continue
        accepted.append(candidate.seat)
    return accepted


class ConfirmButton(
    AnswersFailures,
    discord.ui.DynamicItem[discord.ui.Button[Any]],
    template=r"faguan:confirm:(?P<game>\d+):(?P<seat>\d+)",
):
    """ "I have received my role" (the moderator sees who has not confirmed)."""

    def __init__(self, game_id: int, seat: int, label: str = "确认收到 / Confirm") -> None:
        super().__init__(
            discord.ui.Button(
                label=label,
                style=discord.ButtonStyle.success,
                custom_id=f"faguan:confirm:{game_id}:{seat}",
            )
        )
        self.game_id = game_id
        self.seat = seat

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[Any],
        item: discord.ui.Item[Any],
        match: re.Match[str],
        /,
    ) -> ConfirmButton:
        return cls(int(match["game"]), int(match["seat"]))

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        try:
            await confirm_role(judge_of(interaction.client), interaction, self.game_id, self.seat)
        except Exception as error:  # discord.py only logs a dynamic item's failure
            await self.on_error(interaction, error)


OPTIONS_PER_SELECT = 25
"""Discord's limit of options in one select."""
ROWS_PER_MESSAGE = 5
"""Discord's limit of action rows in one message (a select fills a row)."""


class PowerSelect(
    AnswersFailures,
    discord.ui.DynamicItem[discord.ui.Select[Any]],
    template=(
        r"faguan:act:(?P<game>\d+):(?P<night>\d+):(?P<power>[a-z_]+)"
        r"(?::(?P<card>\d+))?(?::p(?P<page>\d+))?"
    ),
):
    """A menu of valid targets (and pass) for one night power of one seat (card, 5.0 双身份): the
    custom id names the seat it was sent for (`…:kill:3`), and the menu acts for that seat only
    (a player re-seated by moderators since is refused, never acting for the seat they hold
    now). A power with more choices than a select takes has a select for each further 25
    (`…:kill:3:p2`): each submits the same power for the same seat. Ids without the seat
    (`…:kill`, menus sent before every menu named it) act as they did: for the clicker's seat
    holding the power."""

    def __init__(
        self,
        game_id: int,
        night: int,
        power: Power,
        options: list[discord.SelectOption] | None = None,
        card: int | None = None,
        page: int = 1,
        placeholder: str | None = None,
    ) -> None:
        suffix = f":{card}" if card is not None else ""
        if page > 1:
            suffix += f":p{page}"
        super().__init__(
            discord.ui.Select(
                custom_id=f"faguan:act:{game_id}:{night}:{power.value}{suffix}",
                options=options or [discord.SelectOption(label=PASS, value=PASS)],
                min_values=1,
                max_values=1,
                placeholder=placeholder,
            )
        )
        self.game_id = game_id
        self.night = night
        self.power = power
        self.card = card
        self.page = page

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[Any],
        item: discord.ui.Item[Any],
        match: re.Match[str],
        /,
    ) -> PowerSelect:
        card = int(match["card"]) if match["card"] else None
        page = int(match["page"]) if match["page"] else 1
        return cls(
            int(match["game"]), int(match["night"]), Power(match["power"]), card=card, page=page
        )

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        try:
            await self.choose(interaction)
        except Exception as error:  # discord.py only logs a dynamic item's failure
            await self.on_error(interaction, error)

    async def choose(self, interaction: discord.Interaction[Any]) -> None:
        """Submit the night choice picked in the menu, while the menu's own night is open: a
        menu is kept in the DM after its night, and a choice made in it later must not act in
        whatever window is open then (the next night's, or a last act by day)."""
        judge = judge_of(interaction.client)
        data: dict[str, Any] = dict(interaction.data or {})
        values: list[str] = list(data.get("values", []))
        choice = values[0] if values else PASS
        command = SubmitPower(
            player=str(interaction.user.id),
            power=self.power,
            target=Seat(int(choice)) if choice.isdecimal() else None,
            passed=choice == PASS,
            at=judge.runtime.now_ms(),
            seat=Seat(self.card) if self.card is not None else None,
            night=self.night,  # the engine refuses it in any other window, under the lock
        )
        await answer_command(judge, interaction, self.game_id, command, by_menu=True)


def _open_night(state: GameState, number: object) -> int | None:
    """The night a power menu was made for, if it is the window open in `state` (else None): a
    private message may be performed after its night locked (its lane runs after the game's
    lock is released; a retry, later still), and a menu made from a later window's state would
    offer that window's targets."""
    window = state.window
    if window is None or window.kind is not PhaseKind.NIGHT or window.number != number:
        return None
    return window.number


def views_for_whisper(
    game_id: int, state: GameState, effect: Whisper, ctx: Context
) -> discord.ui.View | None:
    """The components that go with a private message, if any (labels in the game's language)."""
    if effect.key == "role.dealt":
        view = discord.ui.View(timeout=None)
        view.add_item(ConfirmButton(game_id, int(effect.seat), ctx.t("role_embed.confirm")))
        return view
    params = dict(effect.params)
    night = _open_night(state, params.get("number"))
    if effect.key == "window.powers" and night is not None:
        rules = rules_for(state)
        card = int(effect.seat)  # the menu acts for this seat only, in every game
        menus: list[PowerSelect] = []
        for power_id in str(params.get("powers", "")).split(","):
            if not power_id:
                continue
            power = Power(power_id)
            name = ctx.t(f"power.{power.value}")
            options = [discord.SelectOption(label=f"{name}: {ctx.t('power.pass')}", value=PASS)]
            if power in rules.untargeted_powers:  # no seat to choose: use it, or pass
                options.insert(
                    0, discord.SelectOption(label=f"{name}: {ctx.t('power.use')}", value=USE)
                )
            else:
                for seat in valid_targets(state, effect.seat, power):
                    # a menu shows no Markdown: the name as written (`label`), not escaped
                    shown = label(f"{name} → {ctx.seat_label(seat)}")
                    options.append(discord.SelectOption(label=shown, value=str(seat)))
            menus.extend(_power_selects(game_id, night, power, name, options, card))
        if len(menus) > ROWS_PER_MESSAGE:  # no ruleset comes near (2 powers × 2 selects at most)
            # DEBUG only: how many selects a seat needs depends on its powers (its role)
            log.debug(
                "game %s: a power menu needs %d selects: sent without it", game_id, len(menus)
            )
            return None  # the message alone (it names /act and /pass), never a menu cut short
        view = discord.ui.View(timeout=None)
        for menu in menus:
            view.add_item(menu)
        return view
    return None


def _power_selects(
    game_id: int,
    night: int,
    power: Power,
    name: str,
    options: list[discord.SelectOption],
    card: int,
) -> list[PowerSelect]:
    """One power's choices as selects of at most 25 options each, "pass" (and "use") in the
    first; where there are several, each is titled with the seats it offers (`杀人 → 26–32`)."""
    pages = [
        options[i : i + OPTIONS_PER_SELECT] for i in range(0, len(options), OPTIONS_PER_SELECT)
    ]
    if len(pages) == 1:
        return [PowerSelect(game_id, night, power, pages[0], card=card)]
    selects = []
    for number, page in enumerate(pages, start=1):
        seats = [int(o.value) for o in page if o.value.isdecimal()]
        shown = f"{name} → {min(seats)}–{max(seats)}" if seats else name
        selects.append(
            PowerSelect(
                game_id, night, power, page, card=card, page=number, placeholder=shown[:150]
            )
        )
    return selects
