"""/metrics: ``stash_review_overdue``, held items past their stash's review deadline."""

import pytest

from tests.support.metrics_support import scrape
from tests.support.review import held_since, hold, team_stash

pytestmark = pytest.mark.django_db


def test_overdue_held_items_are_counted_per_stash_with_a_deadline(client, make_stash, register_temporarily):
    team = team_stash(make_stash, register_temporarily, review_hours=2)
    calm = team_stash(make_stash, register_temporarily, slug="calm", review_hours=24)
    free = team_stash(make_stash, register_temporarily, slug="free")
    held_since(hold(team), 3), held_since(hold(team), 5), held_since(hold(team), 1)
    held_since(hold(calm), 3)
    held_since(hold(free), 100)
    page = scrape(client)
    assert page.value("stash_review_overdue", stash="team") == 2
    assert page.value("stash_review_overdue", stash="calm") == 0
    with pytest.raises(KeyError):
        page.value("stash_review_overdue", stash="free")  # no deadline: no series
