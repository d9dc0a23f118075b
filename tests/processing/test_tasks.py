"""The Celery adapters' own policies: a sink delivery's retries and their waits."""

import pytest
from celery import signals

from stash import processing, tasks
from stash.models import Content


@pytest.fixture
def retry_waits():
    """The countdown of each retry asked for while the test runs, in order."""
    waits = []

    def record(sender=None, reason=None, **kwargs):
        waits.append(reason.when)

    signals.task_retry.connect(record, weak=False, dispatch_uid="tests.retry_waits")
    yield waits
    signals.task_retry.disconnect(dispatch_uid="tests.retry_waits")


@pytest.fixture
def deliver(make_stash):
    """Deliver an accepted item to a sink that fails its first ``failures`` tries, as a worker would."""

    def run(failures):
        stash = make_stash("audit", hooks=[("test_flaky_sink", {"failures": failures})])
        content = Content.objects.create(stash=stash, payload={"text": "hi"})
        (delivery,) = processing.judge([content.pk]).deliveries
        return tasks.deliver_sink.apply(args=delivery.args)

    return run


@pytest.mark.django_db
def test_a_failing_delivery_is_retried_five_times_each_wait_up_to_twice_the_last(deliver, retry_waits):
    result = deliver(failures=100)

    assert result.state == "FAILURE" and isinstance(result.result, processing.DeliveryError)
    assert "fails on purpose" in str(result.result)
    assert len(retry_waits) == tasks.deliver_sink.max_retries == 5
    assert all(0 <= wait <= 5 * 2**n for n, wait in enumerate(retry_waits)), retry_waits


@pytest.mark.django_db
def test_a_delivery_that_succeeds_on_a_retry_stops_retrying(deliver, retry_waits):
    result = deliver(failures=2)

    assert result.state == "SUCCESS"
    assert len(retry_waits) == 2
