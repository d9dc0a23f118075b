"""A real worker judges with the pipeline version it is given: restoring a version brings its verdicts back."""

import pytest

from stash import processing
from stash.models import Content

from ..support.worker import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def judged(stash, text):
    item = Content.objects.create(stash=stash, payload={"text": text})

    def check():
        item.refresh_from_db()
        return item.status in {"accepted", "rejected", "held", "failed"} and item

    return wait_for(check, timeout=30, message=f"a verdict on {text!r}")


def test_restoring_a_version_makes_the_next_verdicts_that_versions(worker, make_stash):
    no_spam = {"hook": "keyword_blocklist", "label": "No spam", "params": {"words": ["spam"]}}
    stash = make_stash("audit", hooks=[("require_fields", {"fields": ["text"]}), no_spam])
    old = stash.config_version
    assert judged(stash, "spam offer").status == "rejected"
    config = stash.hooks.get(label="No spam")
    config.params = {"words": ["eggs"]}
    config.save()
    assert judged(stash, "spam offer").status == "accepted"
    assert judged(stash, "eggs offer").status == "rejected"

    plan = processing.restore(stash, old)

    again = judged(stash, "spam offer")
    assert again.status == "rejected" and "spam" in again.reason
    assert judged(stash, "eggs offer").status == "accepted"
    run = again.runs.get()
    assert run.config_version == plan.version.number
    assert run.version.document["hooks"][1]["params"] == {"words": ["spam"]}
    assert run.version.summary == f'restore of version {old}: No spam: words ["eggs"] → ["spam"]'
