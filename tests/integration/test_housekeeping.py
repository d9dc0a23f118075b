"""The daily prune, as beat sends it, run by a real worker."""

from datetime import timedelta

import pytest
from django.utils import timezone

from stash import processing, tasks
from stash.models import Content, PipelineRun

from ..support.worker import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def test_a_worker_runs_the_prune_task_of_the_beat_schedule(worker, make_stash, settings):
    audit = make_stash("audit", hooks=[("keyword_blocklist", {"words": ["spam"]})])
    item = Content.objects.create(stash=audit, payload={"text": "spam"})
    wait_for(lambda: item.runs.count() == 1, message="the first verdict")
    processing.edit_payload(Content.objects.get(pk=item.pk), {"text": "fine"})
    wait_for(lambda: Content.objects.get(pk=item.pk).status == "accepted", message="the second verdict")
    latest = item.runs.first()
    # Both runs, and the item, long past any retention; the worker has no item retention set.
    long_ago = timezone.now() - timedelta(days=400)
    PipelineRun.objects.filter(content=item).update(finished_at=long_ago)
    PipelineRun.objects.filter(pk=latest.pk).update(finished_at=long_ago + timedelta(seconds=1))
    Content.objects.filter(pk=item.pk).update(processed_at=long_ago)

    tasks.prune.apply_async(queue=settings.STASH_QUEUE)

    wait_for(lambda: item.runs.count() == 1, message="the prune")
    assert item.runs.get().pk == latest.pk
    assert Content.objects.filter(pk=item.pk, status="accepted").exists()
    wait_for(
        lambda: "prune: 1 runs, 0 items with 0 runs deleted in 1 batches" in worker.read_log(),
        message="the prune's report in the worker's log",
    )
