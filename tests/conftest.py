"""Hypothesis profiles: CI runs the same examples every time (derandomized, so a run fails only
on a change); `HYPOTHESIS_PROFILE=explore pytest` searches new examples, for finding bugs.

And the PostgreSQL server of the session (`tests/pgserver.py`): the one $FAGUAN_TEST_PG_URL
names, or one the tests start and remove themselves; started only if a test asks for it. And the
cyclic GC as each test found it (a test that starts a bot settles it for the whole process).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import settings
from pgserver import PgServer, ThrowawayServer, given, throwaway

from bot.runtime.collector import collector_restored

# No per-example deadline: it is a timed assertion, and it failed tests on a loaded machine
# (a 200 ms example took 359 ms while other work ran). Speed is the bench's to measure.
settings.register_profile("ci", derandomize=True, print_blob=True, deadline=None)
settings.register_profile("explore", derandomize=False, print_blob=True, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


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
