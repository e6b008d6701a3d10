"""The `database` fixture of the multi-process tests: a scratch database of its own on the
tests' PostgreSQL server, dropped afterwards (import it into the test module)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import pytest
from pgserver import PgServer


@pytest.fixture(name="database")
def scratch_database(pg_server: PgServer) -> Iterator[str]:
    """The URL of a new, empty database."""
    name = f"faguan_rb_{uuid.uuid4().hex[:10]}"
    asyncio.run(pg_server.create_database(name))
    try:
        yield pg_server.url(name)
    finally:
        asyncio.run(pg_server.drop_database(name))
