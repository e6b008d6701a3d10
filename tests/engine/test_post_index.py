"""The duplicate-post index answers exactly what a scan of the day's posts answers."""

from __future__ import annotations

import dataclasses
import random

from gamekit import Game

from engine.model import Instant, Seat
from engine.state import POSTS, PostIndex, VotePost


def _post(n: int) -> VotePost:
    return VotePost(post_id=str(n), author="1", seat=Seat(1), target=Seat(2), abstain=False,
                    at=Instant(n))  # fmt: skip


def _one_voided(rng: random.Random, posts: tuple[VotePost, ...]) -> tuple[VotePost, ...]:
    """A moderator voids one post: the same ids, a new object in its place."""
    at = rng.randrange(len(posts))
    voided = dataclasses.replace(posts[at], void_reason="void")
    return tuple(voided if i == at else p for i, p in enumerate(posts))


def _agrees_with_a_scan(
    index: PostIndex, posts: tuple[VotePost, ...], ids: set[str], step: int
) -> None:
    for post_id in ids:
        assert index.holds(posts, post_id) == any(p.post_id == post_id for p in posts), step


def test_the_index_agrees_with_a_scan_through_appends_voids_branches_and_new_days() -> None:
    rng = random.Random(16)
    index = PostIndex()
    seen: list[tuple[VotePost, ...]] = [()]
    posts: tuple[VotePost, ...] = ()
    for step in range(3000):
        move = rng.random()
        if move < 0.6:  # a vote post (what evolve does)
            posts = (*posts, _post(rng.randrange(400)))
        elif move < 0.7 and posts:  # a moderator voids one
            posts = _one_voided(rng, posts)
        elif move < 0.85:  # an older state of the day (a branch, a refused input's state)
            posts = rng.choice(seen)
        elif move < 0.9:  # the lock: a new day
            posts = ()
        else:  # the same day read back from a snapshot: equal posts, new objects
            posts = tuple(dataclasses.replace(p) for p in posts)
        seen.append(posts)
        ids = {str(rng.randrange(400)) for _ in range(3)} | {p.post_id for p in posts[-2:]}
        _agrees_with_a_scan(index, posts, ids, step)


def test_a_redelivered_post_is_found_however_long_the_day() -> None:
    index = PostIndex()
    posts: tuple[VotePost, ...] = ()
    for n in range(5000):
        assert not index.holds(posts, str(n))
        posts = (*posts, _post(n))
    assert index.holds(posts, "0") and index.holds(posts, "4999") and not index.holds(posts, "x")


def test_one_post_object_in_two_histories_is_no_false_extension() -> None:
    """The same VotePost object appended to two different days' states of equal length (first,
    middle and last posts shared): the other history's ids must not be taken for this one's."""
    index = PostIndex()
    a, b, c, d, e, x, y, z = (_post(n) for n in range(8))
    known = (a, b, c, d, e)
    assert index.holds(known, "1")
    other = (a, x, c, y, e, z)  # shares the first, middle and last known objects, not the prefix
    assert not index.holds(other, "1") and not index.holds(other, "3")
    assert index.holds(other, "5") and index.holds(other, "7")


def test_a_locked_day_is_forgotten() -> None:
    g = Game(
        "v2",
        ["killer", "killer", "police", "police", "civilian", "civilian", "civilian", "civilian"],
    )
    g.lock()  # night 1 → day 1
    g.vote(1, 3)
    g.vote(2, 3)  # the day is indexed by the second post's duplicate check
    remembered = len(POSTS)
    day = g.state.posts
    g.lock()
    assert len(POSTS) == remembered - 1
    assert g.state.history[-1].posts == day  # the record keeps the posts; only the index goes


def test_the_index_handed_on_by_evolve_agrees_with_a_scan() -> None:
    """`appended` (what `evolve` says of each tuple it appends to), between checks of the newest
    day, of an older state of it and of other tuples: every answer is the scan's."""
    rng = random.Random(61)
    index = PostIndex()
    seen: list[tuple[VotePost, ...]] = [()]
    posts: tuple[VotePost, ...] = ()
    for step in range(3000):
        move = rng.random()
        if move < 0.7:  # a vote post folded by evolve, from the newest state or an older one
            before = posts if rng.random() < 0.9 else rng.choice(seen)
            posts = (*before, _post(rng.randrange(400)))
            index.appended(before, posts)
        elif move < 0.8:  # a voided post
            if posts:
                posts = _one_voided(rng, posts)
        elif move < 0.95:
            posts = rng.choice(seen)
        else:
            posts = ()
        seen.append(posts)
        if rng.random() < 0.5:  # not every state is checked before the next post
            ids = {str(rng.randrange(400)), *(p.post_id for p in posts[-2:])}
            _agrees_with_a_scan(index, posts, ids, step)


def test_evolve_hands_the_day_on_without_comparing_it() -> None:
    g = Game("v2", ["killer", "killer", "police", "police", *["civilian"] * 4])
    g.lock()
    for n in range(1, 30):
        g.vote(1 + n % 8, 3)
    known = POSTS._days[id(g.state.posts[0])]
    assert known[0] is g.state.posts and known[1] == {p.post_id: i for i, p in enumerate(known[0])}
