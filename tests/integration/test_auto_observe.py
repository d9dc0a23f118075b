"""With real workers: reviewers approving most of what a hook held switch it to observe, by a task the
sink worker runs after their decisions commit, as one version that says why."""

import pytest

from stash import processing
from stash.models import Content, HookConfig, PipelineVersion

from ..support.worker import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def test_a_hook_whose_held_items_reviewers_approve_is_switched_to_observe(worker, make_stash, admin_user):
    questions = {
        "hook": "condition",
        "label": "Questions wait",
        "params": {"expression": "payload.text.contains('?')", "action": "hold"},
        "min_precision": 0.8,
        "min_precision_count": 3,
    }
    stash = make_stash("ask", hooks=[questions])
    items = [Content.objects.create(stash=stash, payload={"text": f"why {n}?"}) for n in range(3)]

    def held():
        return Content.objects.filter(pk__in=[i.pk for i in items], status="held").count() == 3

    wait_for(held, timeout=30, message="the three questions held")

    processing.approve(Content.objects.filter(pk__in=[i.pk for i in items]), admin_user)

    config = HookConfig.objects.get(stash=stash)

    def observing():
        config.refresh_from_db()
        return config.mode == "observe"

    wait_for(observing, timeout=30, message="the hook switched to observe")
    version = PipelineVersion.objects.filter(stash=stash).order_by("-number").first()
    assert version.created_by is None
    assert version.summary.startswith(
        "Switched 'Questions wait' to observe: precision 0.00 over 3 human decisions in 30 days, below its minimum 0.80"
    )
    assert config.auto_observed_at is not None

    later = Content.objects.create(stash=stash, payload={"text": "and now?"})
    wait_for(
        lambda: Content.objects.filter(pk=later.pk, status="accepted").exists(),
        timeout=30,
        message="a question accepted by the observing hook",
    )
