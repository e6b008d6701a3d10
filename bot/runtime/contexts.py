"""How to render for a game: its language, timezone and the names of its seats' holders."""

from __future__ import annotations

from collections.abc import Mapping
from zoneinfo import ZoneInfo

from bot.records.render import Context
from bot.runtime.hosting import is_forum
from bot.runtime.port import ChatPort
from bot.runtime.service import GameService
from bot.store.values import GameInfo
from engine.record import holders
from engine.state import GameState, SeatState


class Contexts:
    """Builds the renderer's `Context` for a game; caches the names recorded for its seats."""

    def __init__(self, service: GameService, port: ChatPort, language: str) -> None:
        self.service = service
        self.port = port
        self.language = language
        self._names: dict[int, dict[str, str]] = {}
        """Per game, user id → the name recorded for them (sign-up, /mod replace)."""
        self._seated: dict[int, tuple[tuple[SeatState, ...], dict[int, str]]] = {}
        """Per game, the seats last named and their names, when every name was recorded (none
        from the member cache, which may change): the same seats tuple gets the same names."""

    def locale_of(self, info: GameInfo) -> str:
        """The game's language: chosen at `/game new`, else the server's configured one."""
        return str(info.options.get("language", self.language))

    async def context(
        self, game_id: int, state: GameState | None = None, locale: str | None = None
    ) -> Context:
        """How to render for a game: its language (or `locale`), timezone and seat names."""
        info = await self.service.info(game_id)
        state = state or await self.service.state(game_id)
        return Context(
            locale=locale or self.locale_of(info),
            timezone=ZoneInfo(str(info.schedule.get("timezone", "Asia/Shanghai"))),
            names=await self.seat_names(game_id, state),
            # a forum game's votes go to the day's 投票帖, linked in its own post once opened
            vote_channel="" if is_forum(info.channels) else str(info.channels.get("vote", "")),
            vote_posts=is_forum(info.channels),
        )

    def known_seat_names(self, game_id: int, state: GameState) -> Mapping[int, str] | None:
        """``seat_names`` with no await, if these seats' names are cached (every one recorded):
        the cached mapping itself, to read only; None: ask ``seat_names``."""
        seated = self._seated.get(game_id)
        return seated[1] if seated is not None and seated[0] is state.seats else None

    async def player_names(self, game_id: int, state: GameState) -> dict[str, str]:
        """Every holder of every seat (original players and substitutes, by user id) → the name
        recorded at sign-up or `/mod replace`, as `seat_names` names them: for the record."""
        terms = await self.service.repo.seats(game_id)
        recorded = {str(t.user_id): t.name for t in terms if t.user_id is not None}
        server_id = (await self.service.info(game_id)).server_id
        names: dict[str, str] = {}
        for who in (w for s in state.seats for w in holders(s)):
            name = recorded.get(who, "")
            names[who] = name if name and name != who else self._cached_name(server_id, who, name)
        return names

    def _cached_name(self, server_id: int, who: str, recorded: str) -> str:
        """A holder recorded without a name: from the member cache if there, else as recorded
        (or their id)."""
        cached = self.port.member_name(server_id, int(who)) if who.isdigit() else None
        return cached or recorded or who

    async def seat_names(self, game_id: int, state: GameState) -> dict[int, str]:
        """Seat (card) → the name recorded for its present holder at sign-up or at `/mod
        replace` (the store's seat terms, read once per new holder and cached), so names never
        depend on the member cache and a restart shows the same ones. Only a holder recorded
        without a name (a substitute recorded by id) is named from the member cache, if there."""
        seated = self._seated.get(game_id)
        if seated is not None and seated[0] is state.seats:
            return dict(seated[1])  # a day's posts share the seats tuple (`evolve` keeps it)
        recorded = self._names.get(game_id, {})
        if any(s.player not in recorded for s in state.seats):
            terms = await self.service.repo.seats(game_id)  # by seat then term: the last wins
            recorded = {str(t.user_id): t.name for t in terms if t.user_id is not None}
            self._names[game_id] = recorded
        all_recorded = True
        server_id: int | None = None
        names: dict[int, str] = {}
        for seat in state.seats:
            who = seat.player
            name = recorded.get(who, "")
            if not name or name == who:  # no name recorded for this holder
                all_recorded = False
                if server_id is None:
                    server_id = (await self.service.info(game_id)).server_id
                name = self._cached_name(server_id, who, name)
            names[int(seat.seat)] = name
        if all_recorded:
            self._seated[game_id] = (state.seats, names)
        else:
            self._seated.pop(game_id, None)
        return dict(names)
