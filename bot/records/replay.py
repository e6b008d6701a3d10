"""`faguan replay GAME.toml`: run a whole game from a file, without Discord (docs/replay.md).

Reading the file is strict (a bad file is an error naming the step and key); playing it is not:
a step the engine refuses is recorded under `rejected` with the reason the bot would give, and
the game goes on.
"""

from __future__ import annotations

import json
import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from bot.records.i18n import render
from engine.commands import (
    ChooseTied,
    Command,
    EndGame,
    ExtendDeadline,
    GiveLastWords,
    Lock,
    ModKill,
    Pause,
    Penalize,
    PostVote,
    ReplacePlayer,
    Resume,
    SetDeadline,
    SubmitPower,
    VoidPost,
)
from engine.errors import EngineError, SetupError
from engine.events import (
    DayResolved,
    Event,
    NightResolved,
    PowerSubmitted,
    VotePosted,
    WindowOpened,
)
from engine.game import apply, new_game, start_events
from engine.game import replay_events as fold
from engine.model import Camp, Instant, Power, Seat, Team
from engine.record import record_of
from engine.setup import card_names
from engine.state import DayRecord, GameState, Submission

GAME_TZ = ZoneInfo("Asia/Shanghai")
TOP_KEYS = {"ruleset", "seed", "players", "options", "roles", "steps"}


class ReplayFileError(Exception):
    """The replay file cannot be played: bad TOML, a missing or wrong key, an unknown name."""


def _kind(value: object) -> str:
    """What a TOML value is, in the words of an error message."""
    if isinstance(value, bool):
        return "a boolean"
    kinds: list[tuple[type | tuple[type, ...], str]] = [
        (str, "text"), (int, "an integer"), (float, "a float"), (datetime, "a date-time"),
        (date, "a date"), (time, "a time of day"), (list, "an array"), (dict, "a table"),
    ]  # fmt: skip
    return next((name for cls, name in kinds if isinstance(value, cls)), type(value).__name__)


def _toml(value: object) -> str:
    """A value as it is written in TOML."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, date | time):
        return value.isoformat()
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + "}"
    return repr(value)


def wrong(where: str, key: str, wanted: str, value: object) -> ReplayFileError:
    """A key whose value is of the wrong type or out of range: what it must be, what it is."""
    prefix = f"{where}: " if where else ""
    return ReplayFileError(f"{prefix}{key} must be {wanted}, not {_toml(value)} ({_kind(value)})")


def _text(step: Mapping[str, Any], key: str, where: str, wanted: str, default: str = "") -> str:
    """An optional text key (`reason`, a moderator's `by`)."""
    value = step.get(key, default)
    if not isinstance(value, str):
        raise wrong(where, key, wanted, value)
    return value


def _post_id(value: object, where: str, key: str) -> str:
    """A post id: text or a whole number (the step number by default)."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise wrong(where, key, "a post id (text or a whole number)", value)
    return str(value)


@dataclass
class Replay:
    """A finished replay: the final state, every event, and the record."""

    state: GameState
    events: list[Event]
    record: dict[str, Any]


def load_file(path: str | Path) -> dict[str, Any]:
    """Read a replay file, naming the line of a TOML syntax error."""
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ReplayFileError(f"{path}: not valid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ReplayFileError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise ReplayFileError(f"{path}: cannot read: {exc.strerror}") from None


def to_instant(value: object, where: str, key: str = "at") -> Instant:
    """An `at` value (TOML datetime or ISO text; no offset = Asia/Shanghai) as epoch ms, from
    1970 on (the engine's instants are not negative)."""
    wanted = "a time between 1970 and 9999 (ISO 8601 text or a TOML date-time)"
    given = value
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise wrong(where, key, wanted, given) from None
    if isinstance(value, date) and not isinstance(value, datetime):
        value = datetime.combine(value, time(0))
    if not isinstance(value, datetime):
        raise wrong(where, key, wanted, given)
    if value.tzinfo is None:
        value = value.replace(tzinfo=GAME_TZ)
    try:
        ms = round(value.astimezone(UTC).timestamp() * 1000)
    except (OverflowError, ValueError):
        raise wrong(where, key, wanted, given) from None
    if ms < 0:
        raise wrong(where, key, wanted, given)
    return Instant(ms)


class _Steps:
    """Turns `[[steps]]` tables into engine commands, resolving names to seats."""

    def __init__(self, players: list[str], cards: int = 1) -> None:
        names = card_names(players, cards)  # `A#1`, `A#2` where each player holds several cards
        self.seats: dict[str, Seat] = {name: Seat(i + 1) for i, name in enumerate(names)}
        self.current = {Seat(i + 1): players[i // cards] for i in range(len(names))}
        self.cards = set(names) if cards > 1 else set()
        self.seats.update({p: Seat(i * cards + 1) for i, p in enumerate(players) if cards > 1})

    def seat(self, step: Mapping[str, Any], key: str, where: str) -> Seat:
        name = self.require(step, key, where)
        if not isinstance(name, str):
            raise wrong(where, key, "a player's name (text)", name)
        if name not in self.seats:
            raise ReplayFileError(f"{where}: {key} = {name!r} is not a player of this game")
        return self.seats[name]

    def player(self, step: Mapping[str, Any], key: str, where: str) -> str:
        return self.current[self.seat(step, key, where)]

    @staticmethod
    def require(step: Mapping[str, Any], key: str, where: str) -> Any:
        if key not in step:
            raise ReplayFileError(f"{where}: missing key “{key}”")
        return step[key]

    def at(self, step: Mapping[str, Any], where: str, key: str = "at") -> Instant | None:
        return to_instant(step[key], where, key) if key in step else None

    @staticmethod
    def window(step: Mapping[str, Any], where: str) -> int | None:
        """The optional `window` of a lock or clock step: the window it was issued against, by
        its place in the game (1 = night 1; run-offs and other extra windows count too)."""
        if "window" not in step:
            return None
        value = step["window"]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise wrong(where, "window", "a whole number from 1", value)
        return value

    def command(self, number: int, step: Mapping[str, Any]) -> Command:
        where = f"step {number}"
        if not isinstance(step, Mapping):
            raise ReplayFileError(f"{where}: a step must be a table")
        do = self.require(step, "do", where)
        match do:
            case "power":
                return self._power(step, where)
            case "vote":
                target = self.require(step, "target", where)
                abstain = target == "abstain"
                return PostVote(
                    player=self.player(step, "by", where),
                    post_id=_post_id(step.get("id", number), where, "id"),
                    target=None if abstain else self.seat(step, "target", where),
                    abstain=abstain,
                    at=self.at(step, where),
                )
            case "lock":
                return Lock(at=self.at(step, where), window=self.window(step, where))
            case "last_words":
                text = self.require(step, "text", where)
                if not isinstance(text, str):
                    raise wrong(where, "text", "the last words (text)", text)
                return GiveLastWords(player=self.player(step, "by", where), text=text)
            case "choose":
                return ChooseTied(
                    player=self.player(step, "by", where),
                    target=self.seat(step, "target", where),
                    at=self.at(step, where),
                )
            case "mod":
                return self._mod(step, where)
            case _:
                raise ReplayFileError(
                    f"{where}: unknown do = {do!r} (power, vote, lock, last_words, choose, mod)"
                )

    def _power(self, step: Mapping[str, Any], where: str) -> SubmitPower:
        power_id = self.require(step, "power", where)
        if not isinstance(power_id, str):
            raise wrong(where, "power", "a power id (text)", power_id)
        try:
            power = Power(power_id)
        except ValueError:
            known = ", ".join(p.value for p in Power)
            raise ReplayFileError(f"{where}: unknown power {power_id!r} (known: {known})") from None
        passed = step.get("pass", False)
        if not isinstance(passed, bool):
            raise wrong(where, "pass", "true or false", passed)
        target = None
        if not passed and "target" in step:
            target = self.seat(step, "target", where)
        return SubmitPower(
            player=self.player(step, "by", where),
            power=power,
            target=target,
            passed=passed,
            at=self.at(step, where),
            seat=self.seats[step["by"]] if step.get("by") in self.cards else None,
        )

    def _mod(self, step: Mapping[str, Any], where: str) -> Command:
        command = self.require(step, "command", where)
        by = _text(step, "by", where, "the moderator's name (text)")
        window = self.window(step, where)
        match command:
            case "extend" | "shorten":
                minutes = self.require(step, "minutes", where)
                if isinstance(minutes, bool) or not isinstance(minutes, int | float):
                    raise wrong(where, "minutes", "a number of minutes", minutes)
                if not (math.isfinite(minutes * 60_000) and minutes > 0):
                    raise wrong(where, "minutes", "a finite number of minutes above 0", minutes)
                sign = 1 if command == "extend" else -1
                return ExtendDeadline(
                    delta_ms=sign * round(minutes * 60_000),
                    by=by,
                    at=self.at(step, where),
                    window=window,
                )
            case "set_deadline":
                return SetDeadline(
                    deadline=to_instant(self.require(step, "at", where), where),
                    by=by,
                    at=self.at(step, where, "now"),
                    window=window,
                )
            case "pause" | "resume":
                at = to_instant(self.require(step, "at", where), where)
                if command == "pause":
                    return Pause(at=at, by=by, window=window)
                return Resume(at=at, by=by, window=window)
            case "advance":
                return Lock(at=self.at(step, where), forced=True, window=window)
            case "replace":
                seat = self.seat(step, "target", where)
                new = self.require(step, "player", where)
                if not isinstance(new, str) or not new:
                    raise ReplayFileError(f"{where}: player must be the substitute's name")
                return ReplacePlayer(seat=seat, new_player=new, by=by)
            case "modkill":
                return ModKill(seat=self.seat(step, "target", where), by=by)
            case "void":
                return VoidPost(
                    post_id=_post_id(self.require(step, "post", where), where, "post"),
                    reason=_text(step, "reason", where, "text"),
                    by=by,
                )
            case "end":
                winner = self.require(step, "winner", where)
                try:
                    return EndGame(winner=Camp(winner), by=by)
                except ValueError:
                    camps = ", ".join(c.value for c in Camp)
                    raise wrong(where, "winner", f"a camp ({camps})", winner) from None
            case "penalty":
                return self._penalty(step, where, by)
            case _:
                raise ReplayFileError(
                    f"{where}: unknown mod command {command!r} (extend, shorten, set_deadline, "
                    "pause, resume, advance, replace, modkill, void, end, penalty)"
                )

    def _penalty(self, step: Mapping[str, Any], where: str, by: str) -> Command:
        """A penalty: `team` (killers, police) or `target` (a player), optional `power`."""
        team = power = None
        if "team" in step:
            try:
                team = Team(step["team"])
            except ValueError:
                teams = ", ".join(t.value for t in Team)
                raise wrong(where, "team", f"a team ({teams})", step["team"]) from None
        if "power" in step:
            try:
                power = Power(step["power"])
            except ValueError:
                known = ", ".join(p.value for p in Power)
                raise wrong(where, "power", f"a power ({known})", step["power"]) from None
        seat = self.seat(step, "target", where) if "target" in step else None
        reason = _text(step, "reason", where, "text")
        return Penalize(team=team, seat=seat, power=power, reason=reason, by=by)

    def applied(self, command: Command) -> None:
        """Track substitutes so that later steps may name either player."""
        if isinstance(command, ReplacePlayer):
            self.seats[command.new_player] = command.seat
            old = self.current[command.seat]
            mine = [s for s, p in self.current.items() if p == old]
            self.current.update(dict.fromkeys(mine, command.new_player))


def _check_top(
    data: Mapping[str, Any],
) -> tuple[str, str, list[str], dict[str, Any], dict[str, str], list[Any]]:
    unknown = set(data) - TOP_KEYS
    if unknown:
        raise ReplayFileError(
            f"unknown top-level key(s): {', '.join(sorted(unknown))}"
            f" (known: {', '.join(sorted(TOP_KEYS))})"
        )
    for key, wanted in (("ruleset", 'a ruleset id such as "v2"'), ("seed", "any text"),
                        ("players", "the names in seat order")):  # fmt: skip
        if key not in data:
            raise ReplayFileError(f"missing key “{key}” ({wanted})")
    ruleset, seed, players = data["ruleset"], data["seed"], data["players"]
    if not isinstance(ruleset, str):
        raise wrong("", "ruleset", 'a ruleset id (text, such as "v2")', ruleset)
    if not isinstance(seed, str):
        raise wrong("", "seed", "text", seed)
    if not isinstance(players, list):
        raise wrong("", "players", "an array of names", players)
    for i, name in enumerate(players, start=1):
        if not isinstance(name, str) or not name.strip():
            raise wrong("", f"players[{i}]", "a name (non-empty text)", name)
    options = data.get("options", {})
    roles = data.get("roles", {})
    steps = data.get("steps", [])
    for key, value, wanted in (("options", options, "a table"), ("roles", roles, "a table"),
                               ("steps", steps, "an array of tables")):  # fmt: skip
        want = list if key == "steps" else dict
        if not isinstance(value, want):
            raise wrong("", key, wanted, value)
    for name, role in roles.items():
        if not isinstance(role, str):
            raise wrong("", f"roles.{name}", "a role id (text)", role)
    return ruleset, seed, players, options, dict(roles), steps


def run(data: Mapping[str, Any], *, locale: str = "en") -> Replay:
    """Play a parsed replay file."""
    ruleset, seed, players, options, roles, steps = _check_top(data)
    try:
        created = new_game(
            ruleset=ruleset, players=players, seed=seed, options=options, roles=roles
        )
    except SetupError as exc:
        raise ReplayFileError(render("en", exc.key, exc.params)) from None
    events = start_events(created)
    state = fold(events)
    reader = _Steps(players, len(created.players) // len(players))
    rejected: list[dict[str, Any]] = []
    overrides: list[dict[str, Any]] = []
    post_steps: dict[str, int] = {}
    power_steps: list[tuple[int, Submission]] = []
    for number, step in enumerate(steps, start=1):
        command = reader.command(number, step)
        before = state
        try:
            state, new = apply(state, command)
        except EngineError as exc:
            rejected.append(
                {"step": number, "reason": _reason(reader, step, exc.key, exc.params, locale)}
            )
            continue
        reader.applied(command)
        events.extend(new)
        for event in new:
            if isinstance(event, PowerSubmitted):
                power_steps.append((number, event.submission))
            if isinstance(event, NightResolved | DayResolved):
                cutoff = command.at if isinstance(command, Lock) and command.at else before.deadline
                for late_step, sub in power_steps:
                    if cutoff is not None and sub.at is not None and sub.at > cutoff:
                        rejected.append(
                            {
                                "step": late_step,
                                "reason": _reason(
                                    reader, steps[late_step - 1], "phase.after_deadline", {}, locale
                                ),
                            }
                        )
            if isinstance(event, WindowOpened):
                power_steps.clear()
            if isinstance(event, VotePosted):
                post_steps[event.post.post_id] = number
                if event.post.void_reason:
                    rejected.append(
                        {
                            "step": number,
                            "reason": _reason(
                                reader,
                                step,
                                event.post.void_reason,
                                dict(event.post.void_params),
                                locale,
                            ),
                        }
                    )
            if isinstance(event, DayResolved):
                _late_posts(event, post_steps, rejected, reader, steps, locale)
        if step.get("do") == "mod":
            overrides.append({"step": number, **_mod_summary(step)})
    rejected.sort(key=lambda r: r["step"])
    record = with_reason_text(record_of(state, rejected=rejected, overrides=overrides), locale)
    return Replay(state=state, events=events, record=record)


def with_reason_text(record: dict[str, Any], locale: str = "en") -> dict[str, Any]:
    """The record with `result.reason` as text (`result.reason_key` keeps the key): a replay's,
    and the bot's in English too, so the two compare field by field."""
    if record["result"] is not None:
        record["result"]["reason"] = render(locale, record["result"]["reason_key"])
    return record


def _late_posts(
    event: DayResolved,
    post_steps: dict[str, int],
    rejected: list[dict[str, Any]],
    reader: _Steps,
    steps: list[Any],
    locale: str,
) -> None:
    """Posts valid when made but void at the lock (stamped after the deadline, target gone)."""
    already = {r["step"] for r in rejected}
    record: DayRecord = event.record
    for post in record.void_posts:
        number = post_steps.get(post.post_id)
        if number is None or number in already:
            continue
        rejected.append(
            {
                "step": number,
                "reason": _reason(
                    reader,
                    steps[number - 1],
                    post.void_reason or "",
                    dict(post.void_params),
                    locale,
                ),
            }
        )


def _reason(
    reader: _Steps, step: Mapping[str, Any], key: str, params: Mapping[str, object], locale: str
) -> str:
    who = step.get("by")
    shown = dict(params)
    for name in ("now", "deadline"):  # moments (epoch ms) in the replay's time zone
        moment = shown.get(name)
        if isinstance(moment, int) and not isinstance(moment, bool):
            local = datetime.fromtimestamp(moment / 1000, UTC).astimezone(GAME_TZ)
            shown[name], shown["zone"] = local.strftime("%Y-%m-%d %H:%M:%S"), GAME_TZ.key
    text = render(locale, key, shown)
    return f"{who}: {text}" if isinstance(who, str) else text


def _mod_summary(step: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _plain(v) for k, v in step.items() if k != "do"}


def _plain(value: Any) -> Any:
    """A TOML value as JSON can hold it (dates and times as ISO text, at any depth)."""
    if isinstance(value, date | time):
        return value.isoformat()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def replay_file(path: str | Path) -> Replay:
    """Read and play a replay file."""
    return run(load_file(path))
