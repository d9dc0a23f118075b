"""With a real worker: a hook that fails on one kind of payload makes one group of the failure store,
and once its configuration is fixed, a re-drive of the group gets its items judged and accepted."""

import pytest

from stash import processing
from stash.models import Content

from ..support.worker import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

DONE = {"accepted", "rejected", "held", "failed"}


def verdicts(items, timeout=30):
    ids = [item.pk for item in items]

    def check():
        statuses = list(Content.objects.filter(pk__in=ids).values_list("status", flat=True))
        return all(status in DONE for status in statuses) and statuses

    return wait_for(check, timeout=timeout, message=f"verdicts on {len(ids)} items")


def test_a_group_of_failures_is_redriven_after_the_fix(worker, make_stash):
    cheap = {
        "hook": "condition",
        "label": "Too cheap",
        "params": {"expression": "payload.price < 5"},  # fails on items with no price
        "on_error": "hold",
    }
    stash = make_stash("shop", hooks=[cheap])
    priced = [Content.objects.create(stash=stash, payload={"price": 10 + n}) for n in range(3)]
    unpriced = [Content.objects.create(stash=stash, payload={"text": f"gift {n}"}) for n in range(4)]
    verdicts(priced + unpriced)
    assert set(Content.objects.filter(pk__in=[i.pk for i in unpriced]).values_list("status", flat=True)) == {"held"}

    (group,) = processing.failures.groups(stash=stash)
    assert (group.label, group.items, group.config_version) == ("Too cheap", 4, stash.config_version)

    config = stash.hooks.get()
    config.params = {"expression": "has(payload.price) && payload.price < 5"}  # the fix
    config.save()
    done = processing.redriving.redrive(group.key)
    assert done.sent == 4

    def settled():
        outcome = processing.redriving.outcome(group.key)
        return outcome["accepted"] == 4 and outcome

    outcome = wait_for(settled, timeout=30, message="the re-driven items accepted")
    assert outcome["still_failing"] == 0 and outcome["waiting"] == 0
    assert processing.failures.groups(stash=stash, since=done_at(group)) == []


def done_at(group):
    return processing.failures.group(group.key).redriven_at
