"""`faguan replay GAME.toml`: run a whole game from a file, without Discord (docs/replay.md).

Reading the file is strict (a bad file is an error naming the step and key); playing it is not:
a step the engine refuses is recorded under `rejected` with the reason the bot would give, and
the game goes on.
"""

from __future__ import annotations

import json
import math
import tomllib
import unicodedata
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
from engine.state import DayRecord, GameState, Submission, VotePost

GAME_TZ = ZoneInfo("Asia/Shanghai")
TOP_KEYS = {"ruleset", "seed", "players", "options", "roles", "steps"}
STEP_KEYS = {
    "power": ("by", "power", "target", "pass", "at"),
    "vote": ("by", "target", "at", "id"),
    "lock": ("at", "window"),
    "last_words": ("by", "text"),
    "choose": ("by", "target", "at"),
}
"""The keys each kind of step may have (besides `do`): any other is an error, for a misspelt key
(`taget`, `pas`, `tme`) would otherwise change the game without a word. A `mod` step's keys
beyond its command's are notes, copied into its `overrides` entry (docs/replay.md)."""
MAX_FILE_BYTES = 16 * 1024 * 1024
"""A game file is read up to this size (a whole game is some kilobytes): a bigger file, or a
device that never ends (`/dev/zero`), is refused rather than read into memory."""
RESERVED_NAMES = ("abstain", "pass")
"""Words of the file and the record (a vote's target `abstain`; `pass` among a lot's options): a
player or a substitute of that name could not be told from them."""
INT_RANGE = (-(2**63), 2**63 - 1)
"""TOML's integers (TOML 1.0: a number it cannot hold losslessly is an error); Python's `tomllib`
reads longer ones, which no other reader of the file would."""
SHOWN = 60
"""The characters of a value a message repeats (a 10 MB name is not echoed whole)."""


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
    """A value as it is written in TOML (text cut to `SHOWN` characters)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):  # what does not print (NUL, U+200B, U+202E) as \uXXXX
        return "".join(map(_printable, json.dumps(_cut(value), ensure_ascii=False)))
    if isinstance(value, date | time):
        return value.isoformat()
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + "}"
    return repr(value)


def _printable(ch: str) -> str:
    """A character as a message shows it: itself, or its TOML escape if it does not print."""
    if ch.isprintable():
        return ch
    return f"\\u{ord(ch):04x}" if ord(ch) < 0x10000 else f"\\U{ord(ch):08x}"


def _quoted(value: object) -> str:
    """A value named in a message: text in Python's quotes, as the messages always were (cut to
    `SHOWN` characters), anything else as TOML writes it."""
    return repr(_cut(value)) if isinstance(value, str) else _toml(value)  # repr escapes too


def setup_refusal(key: str, params: Mapping[str, object]) -> str:
    """A game's setup refused (`engine.setup`), in English words: the values it was given (a
    ruleset, a player's name) cut to `SHOWN` characters, not the lists it names."""
    given = ("ruleset", "player", "role", "option", "value")
    return render("en", key, {k: _cut(v) if k in given else v for k, v in params.items()})


def _cut(text: object) -> object:
    """Text as a message repeats it: at most `SHOWN` characters, then how many more."""
    if not isinstance(text, str) or len(text) <= SHOWN:
        return text
    return f"{text[:SHOWN]}… ({len(text) - SHOWN} more)"


def _name_problem(name: str) -> str | None:
    """Why a player's or substitute's name cannot be used, or None. A name must show something
    (not only spaces and invisible characters), hold no control character (NUL, a line break:
    they break the record's text) and not be a word of the file (`abstain`, `pass`)."""
    if any(unicodedata.category(ch) == "Cc" for ch in name):
        ch = next(ch for ch in name if unicodedata.category(ch) == "Cc")
        return f"holds a control character (U+{ord(ch):04X}): a name is printable text"
    if not any(unicodedata.category(ch) not in ("Zs", "Zl", "Zp", "Cf") for ch in name):
        return "shows nothing (only spaces or invisible characters)"
    if name in RESERVED_NAMES:
        return (
            f"is a word of the file (a vote's target {_toml('abstain')}, {_toml('pass')} among "
            "a lot's options): give the player another name"
        )
    return None


def _check_integers(data: Mapping[str, Any]) -> None:
    """Every integer of the file fits TOML's 64 bits; the first that does not is named (the
    top-level keys first, then the steps in order)."""
    todo: list[tuple[object, str, str]] = [(v, "", k) for k, v in data.items() if k != "steps"]
    steps = data.get("steps")
    if isinstance(steps, list):  # a step's keys are named as everywhere: "step n: key"
        todo += [(v, f"step {n}", "") for n, v in enumerate(steps, start=1)]
    elif "steps" in data:
        todo.append((steps, "", "steps"))
    for value, where, key in todo:  # breadth first: what is appended is visited in turn
        if isinstance(value, int) and not isinstance(value, bool):
            if not INT_RANGE[0] <= value <= INT_RANGE[1]:
                digits = str(len(str(abs(value)))) if value.bit_length() <= 9_000 else "over 2700"
                prefix = f"{where}: " if where else ""
                raise ReplayFileError(
                    f"{prefix}{key or 'the step'} must be an integer from -2^63 to 2^63-1 "
                    f"(TOML's range), not an integer of {digits} digits"
                )
        elif isinstance(value, list):
            todo += [(v, where, f"{key}[{i}]") for i, v in enumerate(value, start=1)]
        elif isinstance(value, dict):
            todo += [(v, where, f"{key}.{k}" if key else str(k)) for k, v in value.items()]


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
            data = fh.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        if str(path) == "-" and isinstance(exc, FileNotFoundError):  # the habit for stdin
            raise ReplayFileError(
                "-: standard input is not read: give the game file's path (or /dev/stdin)"
            ) from None
        raise ReplayFileError(f"{path}: cannot read: {exc.strerror}") from None
    if len(data) > MAX_FILE_BYTES:
        raise ReplayFileError(
            f"{path}: too big: a game file holds at most {MAX_FILE_BYTES // 2**20} MiB"
        )
    return parse(data, str(path))


def parse(data: bytes, name: str) -> dict[str, Any]:
    """A game file's bytes as TOML (UTF-8; a leading byte-order mark is allowed)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ReplayFileError(f"{name}: not UTF-8 text (byte {exc.start})") from None
    try:
        return tomllib.loads(text.removeprefix("\ufeff"))
    except tomllib.TOMLDecodeError as exc:
        raise ReplayFileError(f"{name}: not valid TOML: {exc}") from None
    except RecursionError:  # `tomllib` reads nested arrays and inline tables recursively
        raise ReplayFileError(
            f"{name}: not valid TOML here: arrays or inline tables nested too deeply"
        ) from None
    except ValueError:  # an integer of over 4300 digits (Python's limit on reading one)
        raise ReplayFileError(
            f"{name}: not valid TOML: an integer beyond 64 bits (TOML's range is -2^63 to 2^63-1)"
        ) from None


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
            raise ReplayFileError(f"{where}: {key} = {_quoted(name)} is not a player of this game")
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
        if isinstance(do, str) and do in STEP_KEYS:
            unknown = [k for k in step if k != "do" and k not in STEP_KEYS[do]]
            if unknown:
                raise ReplayFileError(
                    f"{where}: unknown key {_toml(unknown[0])} in a {do} step (its keys: do, "
                    f"{', '.join(STEP_KEYS[do])})"
                )
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
                kinds = ", ".join([*STEP_KEYS, "mod"])
                raise ReplayFileError(f"{where}: unknown do = {_quoted(do)} ({kinds})")

    def _power(self, step: Mapping[str, Any], where: str) -> SubmitPower:
        power_id = self.require(step, "power", where)
        if not isinstance(power_id, str):
            raise wrong(where, "power", "a power id (text)", power_id)
        try:
            power = Power(power_id)
        except ValueError:
            known = ", ".join(p.value for p in Power)
            raise ReplayFileError(
                f"{where}: unknown power {_quoted(power_id)} (known: {known})"
            ) from None
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
                problem = _name_problem(new)
                if problem is None and new in self.cards:
                    problem = "is the name of a card of this game: a substitute needs their own"
                if problem:
                    raise ReplayFileError(f"{where}: player = {_toml(new)} {problem}")
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
                    f"{where}: unknown mod command {_quoted(command)} (extend, shorten, "
                    "set_deadline, pause, resume, advance, replace, modkill, void, end, penalty)"
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
        problem = _name_problem(name)
        if problem:
            raise ReplayFileError(f"players[{i}] = {_toml(name)} {problem}")
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
    _check_integers(data)
    ruleset, seed, players, options, roles, steps = _check_top(data)
    try:
        created = new_game(
            ruleset=ruleset, players=players, seed=seed, options=options, roles=roles
        )
    except SetupError as exc:
        raise ReplayFileError(setup_refusal(exc.key, exc.params)) from None
    cards = len(created.players) // len(players)
    reader = _Steps(players, cards)
    for i, name in enumerate(players, start=1):
        if name in reader.cards:  # `A#1`, a player's name, is also player A's first card's
            raise ReplayFileError(
                f"players[{i}] = {_toml(name)} is also the name of a card: in {ruleset} each "
                f"player holds {cards} cards, named name#1 … name#{cards}"
            )
    events = start_events(created)
    state = fold(events)
    rejected: list[dict[str, Any]] = []
    rejected_steps: set[int] = set()  # the steps in `rejected` (kept as it grows, not rebuilt)

    def reject(number: int, key: str, params: Mapping[str, object]) -> None:
        reason = _reason(reader, steps[number - 1], key, params, locale)
        rejected.append({"step": number, "reason": reason})
        rejected_steps.add(number)

    overrides: list[dict[str, Any]] = []
    post_steps: dict[str, int] = {}
    power_steps: list[tuple[int, Submission]] = []
    for number, step in enumerate(steps, start=1):
        command = reader.command(number, step)
        before = state
        try:
            state, new = apply(state, command)
        except EngineError as exc:
            reject(number, exc.key, exc.params)
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
                        reject(late_step, "phase.after_deadline", {})
            if isinstance(event, WindowOpened):
                power_steps.clear()
            if isinstance(event, VotePosted):
                post_steps[event.post.post_id] = number
                if event.post.void_reason:
                    reject(number, event.post.void_reason, dict(event.post.void_params))
            if isinstance(event, DayResolved):
                for late, post in _late_posts(event, post_steps, rejected_steps):
                    reject(late, post.void_reason or "", dict(post.void_params))
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
    event: DayResolved, post_steps: Mapping[str, int], already: set[int]
) -> list[tuple[int, VotePost]]:
    """Posts valid when made but void at the lock (stamped after the deadline, target gone),
    with their steps: those not `already` rejected."""
    record: DayRecord = event.record
    late = [(post_steps.get(post.post_id), post) for post in record.void_posts]
    return [(number, post) for number, post in late if number is not None and number not in already]


def _reason(
    reader: _Steps, step: Mapping[str, Any], key: str, params: Mapping[str, object], locale: str
) -> str:
    who = step.get("by")
    shown = dict(params)
    for name in ("now", "deadline"):  # moments (epoch ms) in the replay's time zone
        moment = shown.get(name)
        if isinstance(moment, int) and not isinstance(moment, bool):
            shown[name], shown["zone"] = _local_time(moment), GAME_TZ.key
    text = render(locale, key, shown)
    return f"{who}: {text}" if isinstance(who, str) else text


def _local_time(moment: int) -> str:
    """An instant (epoch ms) as the replay's local time. A deadline moved by a huge `extend`
    or `shorten` can leave the years 1–9999 that a date can show: it is then told in ms."""
    try:
        local = datetime.fromtimestamp(moment / 1000, UTC).astimezone(GAME_TZ)
    except (OverflowError, ValueError, OSError):
        return f"{moment} ms from 1970-01-01 00:00 UTC"
    return local.strftime("%Y-%m-%d %H:%M:%S")


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


def replay_file(path: str | Path, *, locale: str = "en") -> Replay:
    """Read and play a replay file (`locale`: the language of the refusals' reasons, `run`)."""
    return run(load_file(path), locale=locale)
