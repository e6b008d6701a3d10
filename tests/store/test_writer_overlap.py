"""The group queue's overlap (``Writer(split_from=...)``, for a writer outside this process): the
first group of a burst that large takes half its inputs, so one group is written while the loop
makes the next; every input is still written once, in the order asked, and a barrier waits for
all of them. A smaller burst stays one group."""

from __future__ import annotations

import asyncio

import pytest

from bot.store import Repository, open_database
from bot.store.values import RecordResult
from bot.store.writer import SPLIT_FROM, Batch, Group, Writer

pytestmark = pytest.mark.asyncio


def _batch(message_id: int) -> Batch:
    return Batch(
        events=[{"type": "Added", "n": 1}], effects=[], message_id=message_id, outcome=None
    )


class Disk:
    """A write that takes a turn of the loop and answers every input of its group."""

    def __init__(self) -> None:
        self.groups: list[list[int]] = []
        self.released: list[int] = []

    async def write(self, group: Group) -> None:
        await asyncio.sleep(0)
        self.groups.append([a.batch.message_id or 0 for a in group.appends])
        for append in group.appends:
            append.answer(
                RecordResult(game_id=append.game_id, duplicate=False, first_seq=None,
                             last_seq=None, outcome=None, outbox=())
            )  # fmt: skip
        if group.barriers:
            self.released.append(len(self.groups))
        group.release()


async def test_a_burst_is_written_in_halves_each_input_once_in_order() -> None:
    disk = Disk()
    writer = Writer(asyncio.get_running_loop(), disk.write, split_from=2)
    futures = [writer.append(g, _batch(100 + g), None, False) for g in range(10)]
    barrier = writer.barrier()
    assert barrier is not None
    await asyncio.gather(*futures, barrier)
    assert disk.groups == [[100, 101, 102, 103, 104], [105, 106, 107, 108, 109]]
    assert disk.released == [2]  # the barrier waited for the half left for the second group


async def test_inputs_asked_while_the_first_half_is_written_follow_the_second_half() -> None:
    disk = Disk()
    writer = Writer(asyncio.get_running_loop(), disk.write, split_from=2)
    first = [writer.append(g, _batch(100 + g), None, False) for g in range(4)]
    await first[0]  # the first half is written; the second half waits as the next group
    later = writer.append(9, _batch(200), None, False)
    await asyncio.gather(*first, later)
    assert disk.groups[0] == [100, 101]
    assert [m for group in disk.groups for m in group] == [100, 101, 102, 103, 200]


async def test_without_overlap_a_burst_is_one_group() -> None:
    disk = Disk()
    writer = Writer(asyncio.get_running_loop(), disk.write)
    await asyncio.gather(*(writer.append(g, _batch(100 + g), None, False) for g in range(10)))
    assert disk.groups == [list(range(100, 110))]


async def test_a_burst_smaller_than_split_from_is_one_group() -> None:
    disk = Disk()
    writer = Writer(asyncio.get_running_loop(), disk.write, split_from=11)
    await asyncio.gather(*(writer.append(g, _batch(100 + g), None, False) for g in range(10)))
    assert disk.groups == [list(range(100, 110))]
    await asyncio.gather(*(writer.append(g, _batch(200 + g), None, False) for g in range(11)))
    assert disk.groups[1:] == [list(range(200, 205)), list(range(205, 211))]


async def test_the_store_splits_only_for_its_sqlite_writer_process(
    backend: str, migrated_url: str
) -> None:
    """SQLite's group commits run in a writer process beside the loop: bursts split from
    ``SPLIT_FROM``. PostgreSQL's server shares the machine's cores (no gain measured) and a memory
    database has no writer process: they never split."""
    expected = SPLIT_FROM if backend == "sqlite" else None
    for url, split in ((migrated_url, expected), ("sqlite+aiosqlite://", None)):
        db = open_database(url)
        repo = Repository(db.sessions)
        try:
            assert repo._grouped().split_from == split
        finally:
            await repo.close()
            await db.dispose()


async def test_a_repeated_message_id_still_waits_for_a_group_after_its_first() -> None:
    disk = Disk()
    writer = Writer(asyncio.get_running_loop(), disk.write, split_from=2)
    ids = [1, 2, 1, 3]
    await asyncio.gather(*(writer.append(g, _batch(m), None, False) for g, m in enumerate(ids)))
    assert disk.groups == [[1], [2, 3, 1]]
