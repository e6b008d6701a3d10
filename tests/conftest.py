"""Hypothesis profiles: CI runs the same examples every time (derandomized, so a run fails only
on a change); `HYPOTHESIS_PROFILE=explore pytest` searches new examples, for finding bugs.

And the PostgreSQL server of the session (`tests/pgserver.py`): the one $FAGUAN_TEST_PG_URL
names, or one the tests start and remove themselves; started only if a test asks for it. And the
cyclic GC as each test found it (a test that starts a bot settles it for the whole process).
And nothing of ours left running by a test (`tests/leftovers.py`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import settings
from leftovers import nothing_left_running
from pgserver import PgServer, ThrowawayServer, given, throwaway

from bot.runtime.collector import collector_restored

# No per-example deadline: it is a timed assertion, and it failed tests on a loaded machine
# (a 200 ms example took 359 ms while other work ran). Speed is the bench's to measure.
settings.register_profile("ci", derandomize=True, print_blob=True, deadline=None)
settings.register_profile("explore", derandomize=False, print_blob=True, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


LEAVES_RUNNING = "leaves_running"
"""The marker of a test that leaves one of our threads or processes running on purpose."""


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{LEAVES_RUNNING}(why): the test leaves one of our threads or SQLite writer processes "
        "running on purpose, for the reason `why` (tests/leftovers.py; tests/conftest.py)",
    )


@pytest.fixture(autouse=True)
def _nothing_left_running(request: pytest.FixtureRequest) -> Iterator[None]:
    """The test fails if it leaves one of our threads or SQLite writer processes running
    (`tests/leftovers.py`): a bot, store or connection it did not close. First of the autouse
    fixtures, so it looks after every other function fixture is torn down. A test that does so
    on purpose says why: `@pytest.mark.leaves_running("...")`."""
    marker = request.node.get_closest_marker(LEAVES_RUNNING)
    why = None if marker is None else str(marker.args[0] if marker.args else "")
    with nothing_left_running(why):
        yield


@pytest.fixture(autouse=True)
def _collector_as_found() -> Iterator[None]:
    """A test that starts a bot (`Runtime.resume_games` with the real scheduler) settles the
    cyclic GC for the whole worker process (`bot.runtime.collector`): the next test starts from
    the collector as this one found it."""
    with collector_restored():
        yield


@pytest.fixture(scope="session")
def own_pg_server() -> Iterator[ThrowawayServer]:
    """A PostgreSQL server of this session's own, which a test may stop and start (an outage)."""
    with throwaway() as server:
        yield server


@pytest.fixture(scope="session")
def pg_server(request: pytest.FixtureRequest) -> PgServer:
    """The PostgreSQL server to create test databases on: $FAGUAN_TEST_PG_URL's if set, else the
    session's own throwaway server."""
    server = given()
    if server is not None:
        return server
    own: ThrowawayServer = request.getfixturevalue("own_pg_server")
    return own
