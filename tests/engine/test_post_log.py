"""`PostLog`, a window's posts: every view reads as the tuple of its posts would, whatever other
views of the same day append (states decided again from an older one), it equals and hashes as
that tuple, and it is stored and pickled as the posts themselves."""

from __future__ import annotations

import dataclasses
import pickle

from hypothesis import given
from hypothesis import strategies as st
from playouts import steps_of

from engine import codec
from engine.model import Instant, Seat
from engine.state import NO_POSTS, PostLog, VotePost


def _post(n: int) -> VotePost:
    return VotePost(
        post_id=str(n), author=f"p{n % 7}", seat=Seat(n % 7 + 1), target=None,
        abstain=True, at=Instant(n),
    )  # fmt: skip


@given(st.lists(st.integers(min_value=0, max_value=30), max_size=60))
def test_every_view_reads_as_its_tuple_whatever_the_others_append(picks: list[int]) -> None:
    """Each step appends a new post to a view chosen among those made so far (the newest or an
    older one); every view made still reads as the tuple it was made as."""
    views: list[tuple[PostLog, tuple[VotePost, ...]]] = [(NO_POSTS, ())]
    for n, pick in enumerate(picks):
        view, posts = views[pick % len(views)]
        post = _post(n)
        views.append((view.plus(post), (*posts, post)))
        for made, expected in views:
            assert len(made) == len(expected)
            assert tuple(made) == expected and made == expected and expected == made
            assert hash(made) == hash(expected)
            assert made[1:3] == expected[1:3] and made[::-1] == expected[::-1]
            if expected:
                assert made[-1] == expected[-1] and made[0] is expected[0]


def test_views_of_one_day_differ_by_their_posts_not_by_their_list() -> None:
    one = NO_POSTS.plus(_post(1))
    two = one.plus(_post(2))
    other = one.plus(_post(3))  # decided again from `one`: a copy, `two` unchanged
    assert two == (_post(1), _post(2)) and other == (_post(1), _post(3))
    assert two != other and one != two and PostLog([_post(1), _post(2)]) == two
    assert NO_POSTS == () and not NO_POSTS and len(NO_POSTS) == 0
    assert _post(2) in two and _post(3) not in two
    # the newest view lends its list: a post is appended, the day not copied
    assert two.plus(_post(4))._items is two._items and other._items is not two._items


def test_a_state_with_posts_is_stored_pickled_and_compared_as_with_a_tuple() -> None:
    posts = NO_POSTS.plus(_post(1)).plus(_post(2))
    state = dataclasses.replace(steps_of(3, games=1)[0].after, posts=posts)
    dumped = codec.dump(state)
    assert [p["post_id"] for p in dumped["posts"]] == ["1", "2"]
    loaded = codec.load(dumped)
    assert isinstance(loaded.posts, PostLog) and loaded == state and loaded.posts == posts
    again = pickle.loads(pickle.dumps(state))
    assert again == state and isinstance(again.posts, PostLog)
