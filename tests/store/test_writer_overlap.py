"""The group queue's overlap (``bot.store.writer.Writer(overlap=True)``): when the write runs
outside this process, the first group of a burst is halved, so that from then on the writer
writes one group while the event loop makes the next; without it, a burst is one group.

The queue is driven here with a write that records what each group held and answers it, as the
repository's does, with nothing written anywhere."""

from __future__ import annotations

import asyncio

from bot.store.values import RecordResult
from bot.store.writer import Batch, Group, Writer


def _answer(group: Group, written: list[list[int | None]]) -> None:
    written.append([a.batch.message_id for a in group.appends])
    for append in group.appends:
        append.answer(
            RecordResult(game_id=append.game_id, duplicate=False, first_seq=None, last_seq=None,
                         outcome=None, outbox=())
        )  # fmt: skip
    group.release()


def _writer(overlap: bool, written: list[list[int | None]]) -> Writer:
    async def write(group: Group) -> None:
        await asyncio.sleep(0)  # the write is away from the loop: others run meanwhile
        _answer(group, written)

    return Writer(asyncio.get_running_loop(), write, overlap=overlap)


def _append(writer: Writer, game_id: int, message_id: int) -> asyncio.Future[RecordResult]:
    return writer.append(game_id, Batch((), (), message_id, None), None, False)


async def test_a_burst_is_one_group_without_overlap() -> None:
    written: list[list[int | None]] = []
    writer = _writer(False, written)
    waiting = [_append(writer, game, 100 + game) for game in range(4)]
    await asyncio.gather(*waiting)
    assert written == [[100, 101, 102, 103]]


async def test_with_overlap_the_first_group_is_halved_in_order() -> None:
    written: list[list[int | None]] = []
    writer = _writer(True, written)
    waiting = [_append(writer, game, 100 + game) for game in range(5)]
    await asyncio.gather(*waiting)
    assert written == [[100, 101, 102], [103, 104]]


async def test_with_overlap_each_half_makes_its_next_inputs_while_the_other_is_written() -> None:
    """Five games, each making its next input as soon as its last one is answered: after the
    first halving, the two halves take turns, and no game's inputs ever share a group or go
    out of order."""
    written: list[list[int | None]] = []
    writer = _writer(True, written)

    async def game(game_id: int) -> None:
        for n in range(3):
            await _append(writer, game_id, 1000 * n + game_id)

    await asyncio.gather(*(game(g) for g in range(5)))
    assert written[:2] == [[0, 1, 2], [3, 4]]
    assert [set(group) for group in written[2:4]] == [{1000, 1001, 1002}, {1003, 1004}]
    for game_id in range(5):  # each game's inputs in its own order, one group after another
        groups = [i for i, group in enumerate(written) for m in group if m % 1000 == game_id]
        assert groups == sorted(groups) and len(set(groups)) == 3


async def test_the_halving_keeps_duplicates_apart_and_barriers_after_every_input() -> None:
    written: list[list[int | None]] = []
    writer = _writer(True, written)
    first = _append(writer, 1, 500)
    again = _append(writer, 1, 500)  # the same message id: never in the same group
    other = _append(writer, 2, 501)
    later = _append(writer, 3, 502)
    barrier = writer.barrier()
    assert barrier is not None
    await barrier
    # the barrier waits for the inputs asked for before it, wherever the halving put them
    assert first.done() and again.done() and other.done() and later.done()
    assert written == [[500, 501], [502, 500]]
