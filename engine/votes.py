"""Vote posts and the tally (docs/rules.md §1.1–1.2).

A post is judged twice: when it arrives (who posted, for whom, in which window) and at the lock
(stamped after the deadline?). The tally takes each living player's last valid post by its own
timestamp (then post id), so the order in which posts reach the bot never matters.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from engine.commands import PostVote
from engine.model import Instant, Seat
from engine.rulesets import Ruleset, rules_for
from engine.state import GameState, VotePost, Window

if TYPE_CHECKING:  # mypy checks each call against the class
    _vote_post = VotePost
else:  # the same object, built faster (`engine.replacing`): one for every vote post
    from engine.replacing import maker

    _vote_post = maker(VotePost)


def judge_post(state: GameState, cmd: PostVote, rules: Ruleset | None = None) -> VotePost:
    """The post as recorded: valid, or void with a reason key (the window is open). `rules`:
    the game's (`rules_for(state)`), when the caller has them already."""
    window = state.window
    assert window is not None
    seat = state.seat_of(cmd.player)
    rules = rules if rules is not None else rules_for(state)
    reason, params = _void_reason(state, rules, window, cmd, seat)
    return _vote_post(
        post_id=cmd.post_id,
        author=cmd.player,
        seat=seat,
        target=None if cmd.abstain else cmd.target,  # an abstention names nobody
        abstain=cmd.abstain,
        at=cmd.at,
        void_reason=reason or None,
        void_params=tuple(sorted(params.items())) if reason else (),
    )


def _void_reason(
    state: GameState, rules: Ruleset, window: Window, cmd: PostVote, seat: Seat | None
) -> tuple[str | None, dict[str, str]]:
    """Why a post arriving in an open window does not count, if it does not."""
    n = len(state.seats)
    if seat is None:
        return "vote.not_player", {}
    if not state.seat(seat).alive:
        return "vote.out_of_game", {"seat": str(seat)}
    cards = state.seats_of(cmd.player)  # every card the player holds (5.0: two)
    if any(s in window.barred_voters for s in cards):  # a player tied on any card is barred
        return "vote.barred_in_runoff", {"seat": str(seat)}
    if state.deadline is not None and cmd.at is not None and cmd.at > state.deadline:
        return "vote.after_deadline", {}
    if cmd.edited_unseen:
        return "vote.edited_unseen", {}
    if window.revote and cmd.opened_for is not None and cmd.opened_for != state.window_index:
        return "vote.before_window", {}
    if cmd.abstain:
        return None, {}
    if cmd.target is None:
        return "vote.unknown_target", {"raw": cmd.raw}
    if not 1 <= cmd.target <= n:
        return "vote.no_such_seat", {"target": str(cmd.target), "max": str(n)}
    if not state.seat(cmd.target).alive:
        return "vote.target_out", {"target": str(cmd.target)}
    if window.candidates and cmd.target not in window.candidates:
        return "vote.not_candidate", {
            "target": str(cmd.target),
            "candidates": ",".join(str(c) for c in window.candidates),
        }
    if not state.options.self_vote and cmd.target in cards:  # any of the voter's own cards
        return "vote.self_vote", {}
    groups = rules.vote_groups(state)
    if groups:
        mine = next((g for g in groups if seat in g.voters), None)
        if mine is None or cmd.target not in mine.candidates:
            return "vote.not_in_group", {"target": str(cmd.target)}
    return None, {}


def _order_key(post: VotePost) -> tuple[int, int, str]:
    """Posts in time order: own timestamp, then the (snowflake or step) id."""
    pid = post.post_id
    return (post.at if post.at is not None else -1, int(pid) if pid.isdigit() else 0, pid)


@dataclass(frozen=True, kw_only=True, slots=True)
class Tally:
    """The count at a lock."""

    votes: dict[Seat, Seat | None]
    """Each counted voter's last valid vote (None: abstained)."""
    void: tuple[VotePost, ...]
    """Every post of the window that does not count, with its reason."""
    weights: dict[Seat, int] = field(default_factory=dict)
    """Votes a voter's post carries, where not 1 (5.0: one per living card)."""

    @property
    def counts(self) -> Counter[Seat]:
        """Votes received per target."""
        counts: Counter[Seat] = Counter()
        for voter, target in self.votes.items():
            if target is not None:
                counts[target] += self.weights.get(voter, 1)
        return counts

    @property
    def abstained(self) -> tuple[Seat, ...]:
        """Voters whose last post was an abstention, in seat order."""
        return tuple(sorted(s for s, t in self.votes.items() if t is None))

    def leaders(self) -> tuple[Seat, ...]:
        """The players with the most votes, in seat order (empty when nobody was voted for)."""
        counts = self.counts
        if not counts:
            return ()
        top = max(counts.values())
        return tuple(sorted(s for s, n in counts.items() if n == top))


def tally(state: GameState, posts: Iterable[VotePost], cutoff: Instant | None) -> Tally:
    """Count the window's posts at the lock: the late ones are void, the rest each voter's last."""
    void: list[VotePost] = []
    votes: dict[Seat, Seat | None] = {}
    for post in sorted(posts, key=_order_key):
        if (
            post.void_reason is None
            and cutoff is not None
            and post.at is not None
            and post.at > cutoff
        ):
            post = replace(post, void_reason="vote.after_deadline")
        if (
            post.void_reason is None
            and post.target is not None
            and not state.seat(post.target).alive
        ):
            post = replace(
                post, void_reason="vote.target_out", void_params=(("target", str(post.target)),)
            )
        if post.void_reason is not None:
            void.append(post)
            continue
        assert post.seat is not None
        if state.seat(post.seat).alive:
            votes[post.seat] = None if post.abstain else post.target
    rules = rules_for(state)
    weights = {v: rules.vote_weight(state, state.seat(v)) for v in votes}
    heavier = {v: w for v, w in weights.items() if w != 1}
    return Tally(votes=votes, void=tuple(void), weights=heavier)


def runoff_barred(rules: Ruleset, tied: tuple[Seat, ...], revote: int) -> tuple[Seat, ...]:
    """Who may not vote in run-off `revote` (1: the second window, 2: the third): the tied
    players where the ruleset bars them (by default only in the third window)."""
    allowed = rules.tied_vote_in_second_window if revote == 1 else rules.tied_vote_in_third_window
    return () if allowed else tied
