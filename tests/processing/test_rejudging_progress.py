"""How far judging again many items has come: judged, waiting and the rate, of one stash."""

from datetime import timedelta

import pytest
from django.utils import timezone

from stash import processing
from stash.models import Content

pytestmark = pytest.mark.django_db


@pytest.fixture
def audit(make_stash, broker):
    stash = make_stash("audit", hooks=[("keyword_blocklist", {"words": ["spam"]})])
    made = [processing.submit(stash, {"text": f"item {n}"})[0] for n in range(4)]
    processing.judge([item.pk for item in made])
    return stash


def test_items_sent_above_a_batch_wait_until_judged(audit, settings):
    settings.STASH_BATCH_SIZE = 2
    assert processing.reprocess(audit.contents.all()) == 4
    progress = processing.judging_progress(audit, 4)
    assert (progress.judged, progress.waiting, progress.done) == (0, 4, False)

    first = list(audit.contents.values_list("pk", flat=True)[:3])
    processing.judge(first)
    progress = processing.judging_progress(audit, 4)
    assert (progress.judged, progress.waiting, progress.done) == (3, 1, False)

    processing.judge(list(audit.contents.values_list("pk", flat=True)))
    progress = processing.judging_progress(audit, 4)
    assert (progress.judged, progress.waiting, progress.done) == (4, 0, True)


def test_only_the_stashs_own_bulk_items_wait(audit, make_stash, settings):
    settings.STASH_BATCH_SIZE = 2
    other = make_stash("other")
    processing.submit(other, {"text": "waiting elsewhere"})
    processing.reprocess(audit.contents.all())
    processing.submit(audit, {"text": "a live save, judged first"})  # pending, not bulk
    assert processing.judging_progress(audit, 4).waiting == 4
    assert processing.judging_progress(other, 0).waiting == 0


def test_judged_is_never_below_zero(audit, settings):
    settings.STASH_BATCH_SIZE = 2
    processing.reprocess(audit.contents.all())
    progress = processing.judging_progress(audit, 1)  # fewer said sent than waiting
    assert (progress.judged, progress.waiting) == (0, 4)


def test_the_rate_is_the_judged_over_the_time_since_sending(audit, settings):
    settings.STASH_BATCH_SIZE = 2
    processing.reprocess(audit.contents.all())
    Content.objects.filter(pk__in=list(audit.contents.values_list("pk", flat=True)[:2])).update(
        status=Content.Status.ACCEPTED
    )
    progress = processing.judging_progress(audit, 4, since=timezone.now() - timedelta(seconds=4))
    assert progress.judged == 2
    assert progress.per_second == pytest.approx(0.5, rel=0.05)
    assert processing.judging_progress(audit, 4).per_second is None
    assert processing.judging_progress(audit, 4, since=timezone.now() + timedelta(seconds=5)).per_second is None


def test_reprocess_by_stash_counts_the_sent_items_of_each_stash(audit, make_stash):
    other = make_stash("other")
    item, _ = processing.submit(other, {"text": "x"})
    sent = processing.reprocess_by_stash(Content.objects.all())
    assert sent == {audit.pk: 4, other.pk: 1}
