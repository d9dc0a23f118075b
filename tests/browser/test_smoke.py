"""The browser set-up itself: Chromium logs in to the admin."""

import pytest

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_superuser_logs_in_to_the_admin(logged_in):
    assert "stash administration" in logged_in.content()
    assert logged_in.locator("#content-main").get_by_role("link", name="Stashes", exact=True).count() == 1
