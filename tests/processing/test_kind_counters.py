"""Per-hook statistics that fit each kind: a transform's changed and unchanged, a sink's deliveries by status."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from stash import processing
from stash.models import Content, Delivery, HookConfig
from stash.processing import stats

pytestmark = pytest.mark.django_db


def test_a_transform_counts_the_items_it_changed_and_those_it_left_as_they_were(make_stash):
    stash = make_stash("audit", hooks=[("normalize_text", {"lowercase": True})])
    items = [Content.objects.create(stash=stash, payload={"text": text}) for text in ("Hello", "hello", "HI")]

    processing.judge([item.pk for item in items])

    [figures] = stats.for_configs(HookConfig.objects.all()).values()
    assert (figures.kind, figures.runs, figures.changed, figures.unchanged) == ("transform", 3, 2, 1)


def test_sinks_count_their_deliveries_by_status_in_one_query_for_all(make_stash):
    mail = {"hook": "email", "params": {"to": ["ops@example.com"]}}
    stash = make_stash("audit", hooks=[mail, mail, ("log", {})])
    items = [Content.objects.create(stash=stash, payload={"text": str(n)}) for n in range(3)]
    processing.judge([item.pk for item in items])
    first, second, log = HookConfig.objects.order_by("position")
    Delivery.objects.filter(config=first, content=items[0]).update(status="delivered")
    Delivery.objects.filter(config=first, content=items[1]).update(status="failed")
    Delivery.objects.filter(config=second).update(status="retrying")

    with CaptureQueriesContext(connection) as ctx:
        figures = stats.for_configs(HookConfig.objects.all())

    assert figures[first.pk].deliveries == {"pending": 1, "retrying": 0, "delivered": 1, "failed": 1}
    assert figures[second.pk].deliveries == {"pending": 0, "retrying": 3, "delivered": 0, "failed": 0}
    assert figures[log.pk].deliveries is None  # called in process: nothing recorded
    assert sum("stash_delivery" in q["sql"] for q in ctx.captured_queries) == 1
