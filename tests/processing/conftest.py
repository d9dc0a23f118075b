"""Fixtures of the processing tests: an asynchronous moderation service on loopback."""

import pytest

from ..support.fake_moderation import FakeModeration

#: The secret the async service and its hooks share.
SERVICE_SECRET = "a-moderation-secret-of-some-length"


@pytest.fixture
def service(settings):
    """A fake moderation service in ``async_silent`` mode (202, no callback: the test answers),
    which hooks may reach on loopback."""
    settings.STASH_WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    with FakeModeration(secret=SERVICE_SECRET, mode="async_silent") as running:
        yield running
