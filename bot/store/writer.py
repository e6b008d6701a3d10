"""The group commit's queue: requests made while a transaction is being written share the next.

So many inputs cost one durable commit. Only the queueing lives here: which inputs, done marks and
snapshots go in one transaction, and who waits for what. Writing a group is the repository's
(``Repository._commit_group``, passed in as ``write``); nothing here runs SQL.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from bot.store.values import JsonDict, RecordResult, SeatSpec


@dataclass(slots=True)
class Batch:
    """One input's rows to append: events, effects, its message id and outcome, substitutes."""

    events: Sequence[Mapping[str, Any]]
    effects: Sequence[Mapping[str, Any]]
    message_id: int | None
    outcome: Mapping[str, Any] | None
    seats: Sequence[SeatSpec] = field(default_factory=tuple)
    types: Sequence[str] = ()
    """Each event's type, where the caller checked them already (else read again)."""


@dataclass(slots=True)
class Append:
    """One input waiting for the group commit, and its caller's future."""

    game_id: int
    batch: Batch
    expected_seq: int | None
    finish: bool
    future: asyncio.Future[RecordResult]

    def answer(self, result: RecordResult | BaseException) -> None:
        """Give the caller its answer, unless it stopped waiting (cancelled: the input is written
        or refused all the same, as it would have been had it waited)."""
        if self.future.done():
            return
        if isinstance(result, BaseException):
            self.future.set_exception(result)
        else:
            self.future.set_result(result)


@dataclass(slots=True)
class Group:
    """What one transaction of the group commit writes."""

    appends: list[Append] = field(default_factory=list)
    marks: dict[int, asyncio.Future[bool] | None] = field(default_factory=dict)
    snapshots: dict[int, tuple[int, str, JsonDict]] = field(default_factory=dict)
    """Game id → (seq, version, state): the newest asked for."""
    barriers: list[asyncio.Future[None]] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.appends or self.marks or self.snapshots or self.barriers)

    def fail(self, exc: BaseException) -> None:
        """Every caller waiting on this group gets ``exc``."""
        waiting: list[asyncio.Future[Any]] = [a.future for a in self.appends]
        waiting += [f for f in self.marks.values() if f is not None]
        waiting += self.barriers
        for future in waiting:
            if not future.done():
                future.set_exception(exc)

    def release(self) -> None:
        """Wake those waiting only for the group to be written."""
        for future in self.barriers:
            if not future.done():
                future.set_result(None)


SPLIT_FROM = 24
"""The least burst a writer process's group commit splits (``Writer``'s ``split_from``).
Measured on SQLite with 10, 30 and 100 games posting at once (docs/performance.md, tenth pass):
splitting from 2 cost 10 games 10 % of their rate (groups of 5: the writer's CPU per post
53 → 82 µs); from 24, 10 games as unsplit, 30 games +30 %, 100 games +38 %."""


class Stage:
    """Whether a group's transaction reached its commit: a failure there has an unknown outcome."""

    committing = False


def _told(task: asyncio.Task[None]) -> None:
    """The writer's exception was given to everyone waiting: nothing more to report."""
    if not task.cancelled():
        task.exception()


class Writer:
    """Group commit: what is asked for while a transaction is being written goes in the next.

    The first request starts a task that writes groups until none is waiting; a request alone is
    written at once (a group of one). Each caller waits only for the group that holds its
    request. Inputs with the same message id never share a group: the later one waits for the
    next group, where it is found recorded.

    ``split_from``: for a write outside this process's interpreter (a writer process), so the
    event loop can make one group while the other is written. The first group of a burst with at
    least this many inputs takes only half of them: while that half is written, the other half
    waits as the next group, and from then on the callers of one group make their next inputs
    while the other group is on its way to disk (without it, every caller of a burst waits on the
    same group, and the loop idles through each write). A smaller burst stays one group: halves
    of a few inputs would each touch as many pages as the whole, so the writer's work per input
    grows more than the overlap saves (measured: ``SPLIT_FROM``). None: never split.
    """

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        write: Callable[[Group], Awaitable[None]],
        *,
        split_from: int | None = None,
    ) -> None:
        self.loop = loop
        self._write = write
        self.split_from = split_from
        """The least burst split in halves (None: never)."""
        self._next = Group()
        self._task: asyncio.Task[None] | None = None

    def _start(self) -> None:
        if self._task is None:
            self._task = self.loop.create_task(self._drain())
            self._task.add_done_callback(_told)

    def append(
        self, game_id: int, batch: Batch, expected_seq: int | None, finish: bool
    ) -> asyncio.Future[RecordResult]:
        future: asyncio.Future[RecordResult] = self.loop.create_future()
        self._next.appends.append(Append(game_id, batch, expected_seq, finish, future))
        self._start()
        return future

    def mark(self, outbox_id: int, *, wait: bool) -> asyncio.Future[bool] | None:
        future = self.loop.create_future() if wait else None
        earlier = self._next.marks.get(outbox_id)
        if earlier is not None:
            # marked twice in one group: the first waiter learns it changed, the second not
            def chain(
                done: asyncio.Future[bool], later: asyncio.Future[bool] | None = future
            ) -> None:
                if later is not None and not later.done():
                    if done.exception() is not None:
                        later.set_exception(cast(BaseException, done.exception()))
                    else:
                        later.set_result(False)

            earlier.add_done_callback(chain)
        else:
            self._next.marks[outbox_id] = future
        self._start()
        return future

    def snapshot(self, game_id: int, seq: int, version: str, state: JsonDict) -> None:
        known = self._next.snapshots.get(game_id)
        if known is None or known[0] < seq:
            self._next.snapshots[game_id] = (seq, version, state)
        self._start()

    def barrier(self) -> asyncio.Future[None] | None:
        if self._task is None and not self._next:
            return None
        future: asyncio.Future[None] = self.loop.create_future()
        self._next.barriers.append(future)
        self._start()
        return future

    async def _drain(self) -> None:
        try:
            await self._drain_all()
        except BaseException as exc:  # the process is going down (cancelled, interrupted)
            self._next.fail(exc)
            self._next = Group()
            raise

    async def _drain_all(self) -> None:
        try:
            first = True
            while self._next:
                group, self._next = self._next, Group()
                seen: set[int] = set()
                for append in list(group.appends):
                    message_id = append.batch.message_id
                    if message_id is None:
                        continue
                    if message_id in seen:
                        group.appends.remove(append)
                        self._next.appends.append(append)
                    seen.add(message_id)
                if first and self.split_from is not None:
                    self._halve(group, self.split_from)
                first = False
                await self._write(group)
        finally:
            self._task = None

    def _halve(self, group: Group, least: int) -> None:
        """Leave the later half of ``group``'s inputs (when it has at least ``least``, and two)
        for the next group, ahead of what is asked for from now on, and its barriers with them
        (they wait for every input asked for before them)."""
        if len(group.appends) < max(2, least):
            return
        half = len(group.appends) // 2
        later, group.appends = group.appends[half:], group.appends[:half]
        self._next.appends[:0] = later
        self._next.barriers[:0] = group.barriers
        group.barriers = []
