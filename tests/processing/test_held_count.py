"""Holds are counted as holds, not drops: HookConfig.held_count, wherever the counters are shown."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from stash import processing
from stash.models import Content, HookConfig
from stash.processing import stats

from ..support.metrics_support import scrape

pytestmark = pytest.mark.django_db

HOLD_LINKS = {"expression": "payload.text.contains('http')", "action": "hold", "reason": "has a link"}
DROP_SPAM = {"expression": "payload.text.contains('spam')", "reason": "spam"}


@pytest.fixture
def review(make_stash):
    """A stash whose first hook holds items with a link, the second drops spam, the third only
    watches (it would hold long texts)."""
    return make_stash(
        "review",
        hooks=[
            {"hook": "condition", "params": HOLD_LINKS, "label": "Links"},
            {"hook": "condition", "params": DROP_SPAM, "label": "Spam"},
            {
                "hook": "condition",
                "params": {"expression": "size(payload.text) > 20", "action": "hold"},
                "label": "Long",
                "mode": "observe",
            },
        ],
    )


@pytest.fixture
def judged(review):
    """Three runs: one held by "Links", one dropped by "Spam", one accepted (and a long one "Long"
    would have held)."""
    texts = ["see http://example.com", "spam", "a perfectly fine long text"]
    items = [Content.objects.create(stash=review, payload={"text": text}) for text in texts]
    processing.judge([item.pk for item in items])
    assert [Content.objects.get(pk=item.pk).status for item in items] == ["held", "rejected", "accepted"]
    return {config.label: config for config in review.hooks.in_order()}


def counts(config):
    config.refresh_from_db()
    return {
        "runs": config.runs_count,
        "kept": config.kept_count,
        "dropped": config.dropped_count,
        "held": config.held_count,
        "errors": config.errors_count,
    }


def test_a_hold_counts_as_held_and_not_as_dropped(judged):
    assert counts(judged["Links"]) == {"runs": 3, "kept": 2, "dropped": 0, "held": 1, "errors": 0}
    assert counts(judged["Spam"]) == {"runs": 2, "kept": 1, "dropped": 1, "held": 0, "errors": 0}
    # An observing hook counts what it would have done: here, one hold.
    assert counts(judged["Long"]) == {"runs": 1, "kept": 0, "dropped": 0, "held": 1, "errors": 0}


def test_stats_give_the_held_count(judged):
    by_id = stats.for_configs(HookConfig.objects.all())
    assert (by_id[judged["Links"].pk].held, by_id[judged["Links"].pk].dropped) == (1, 0)
    assert (by_id[judged["Spam"].pk].held, by_id[judged["Spam"].pk].dropped) == (0, 1)


def test_the_admin_shows_held_next_to_dropped(judged, review, admin_client):
    links = judged["Links"]
    pages = {
        "stash page": reverse("admin:stash_stash_change", args=[review.pk]),
        "hook list": reverse("admin:stash_hookconfig_changelist") + f"?stash__id__exact={review.pk}",
        "hook page": reverse("admin:stash_hookconfig_change", args=[links.pk]),
    }
    for name, url in pages.items():
        page = admin_client.get(url).content.decode().replace("\xa0", " ")  # figures do not break
        assert "3 runs · 2 kept · 0 dropped · 1 held<br>0 errors · 0 overturned" in page, name
    assert "2 runs · 1 kept · 1 dropped · 0 held" in admin_client.get(pages["hook list"]).content.decode().replace(
        "\xa0", " "
    )


def test_the_api_gives_the_held_count_read_only(judged, review, admin_user):
    client = APIClient()
    client.force_authenticate(admin_user)
    url = f"/api/stashes/review/hooks/{judged['Links'].pk}/"
    body = client.get(url).json()
    assert (body["held_count"], body["dropped_count"], body["kept_count"]) == (1, 0, 2)
    assert client.patch(url, {"held_count": 99}, format="json").status_code == 200
    assert HookConfig.objects.get(pk=judged["Links"].pk).held_count == 1


def test_metrics_give_held_as_a_verdict_of_its_own(judged, client):
    page = scrape(client)
    for label, held, dropped in (("Links", 1, 0), ("Spam", 0, 1), ("Long", 1, 0)):
        labels = {"stash": "review", "config": judged[label].pk, "hook": "condition"}
        assert page.value("stash_hook_verdicts_total", **labels, outcome="held") == held, label
        assert page.value("stash_hook_verdicts_total", **labels, outcome="dropped") == dropped, label
