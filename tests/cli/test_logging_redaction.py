"""discord.py's request lines at WARNING (a rate-limited request) name no Discord id: a team
thread's member add or remove would tell which thread a player is in (a hidden role)."""

from __future__ import annotations

import logging

import pytest

from bot.operator_errors import DiscordIdsRedacted


def test_a_rate_limited_requests_ids_are_not_logged(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("discord.http")
    redacted = DiscordIdsRedacted()
    logger.addFilter(redacted)
    url = (
        "https://discord.com/api/v10/channels/1300000000000000123/thread-members/140000000000000105"
    )
    try:
        with caplog.at_level(logging.DEBUG, logger="discord.http"):
            fmt = "We are being rate limited. %s %s responded with 429. Retrying in %.2f seconds."
            logger.warning(fmt, "DELETE", url, 1.5)
            logger.debug("%s %s has received %s", "DELETE", url, "{}")  # DEBUG: as discord.py
    finally:
        logger.removeFilter(redacted)
    warning, debug = caplog.records
    assert warning.getMessage() == (
        "We are being rate limited. DELETE https://discord.com/api/v10/channels/…/thread-members/… "
        "responded with 429. Retrying in 1.50 seconds."
    )
    assert "1300000000000000123" in debug.getMessage()  # below INFO: for a developer's own run
