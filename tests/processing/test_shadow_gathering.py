"""On Redis, the runs live workers judge for a shadow are gathered for one message, sent once and taken a
second later to be written: a shadow costs a live message its hooks' time per item, not a write."""

import pytest

from stash import processing, tasks
from stash.db import publishing
from stash.models import Content, Shadow, ShadowRun
from stash.processing import shadow_runs

from ..chaos.processes import RedisServer
from ..support.shadows import save_and_judge
from .test_shadows import LIVE, PAYLOADS, draft

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory):
    server = RedisServer(tmp_path_factory.mktemp("redis")).start()
    yield server
    server.stop()


@pytest.fixture
def audit(make_stash):
    return make_stash("audit", hooks=LIVE)


@pytest.fixture
def on_redis(redis_server, settings):
    redis_server.client().flushall()
    settings.CACHES = redis_server.as_cache(settings)


def shadow_messages(broker):
    return [message for message in broker.messages if message["name"] == publishing.SHADOW_TASK]


def test_the_runs_of_many_batches_are_written_by_one_message_a_second_later(
    on_redis, audit, broker, django_capture_on_commit_callbacks
):
    shadow = processing.start_shadow(audit, document=draft(audit), percent=100, count=100)
    for start in range(0, 6, 2):  # three live batches, each judged by the shadow right after its verdicts
        save_and_judge(audit, PAYLOADS[start : start + 2], django_capture_on_commit_callbacks)

    (message,) = shadow_messages(broker)
    assert message["args"] == [shadow.pk, []] and message["countdown"] == publishing.SHADOW_GATHER_SECONDS
    assert Shadow.objects.get(pk=shadow.pk).items == 0  # judged, not yet written
    broker.messages.clear()
    tasks.run_shadow.apply(args=message["args"])  # as the worker runs it: it writes what was gathered
    shadow.refresh_from_db()
    assert (shadow.items, shadow.disagreed) == (6, 1)  # "eggs and ham": accepted live, rejected by the draft

    save_and_judge(audit, PAYLOADS[6:8], django_capture_on_commit_callbacks)
    (again,) = shadow_messages(broker)  # the message took its marker down: the next batch sends one
    tasks.run_shadow.apply(args=again["args"])
    assert Shadow.objects.get(pk=shadow.pk).items == 8


def test_without_redis_each_batch_writes_its_runs_at_once(audit, broker, django_capture_on_commit_callbacks, settings):
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    shadow = processing.start_shadow(audit, document=draft(audit), percent=100, count=100)
    for start in range(0, 4, 2):
        save_and_judge(audit, PAYLOADS[start : start + 2], django_capture_on_commit_callbacks)
    assert shadow_messages(broker) == []
    assert Shadow.objects.get(pk=shadow.pk).items == 4


def test_a_gathered_run_counts_once_an_item_deleted_since_not_at_all_and_none_past_the_count(
    on_redis, audit, broker, django_capture_on_commit_callbacks
):
    shadow = processing.start_shadow(audit, document=draft(audit), percent=100, count=5)
    save_and_judge(audit, PAYLOADS[:4], django_capture_on_commit_callbacks)
    (message,) = shadow_messages(broker)
    broker.messages.clear()
    tasks.run_shadow.apply(args=message["args"])
    written = list(ShadowRun.objects.filter(shadow=shadow))
    assert len(written) == 4

    # The same four runs gathered again (a live message delivered twice), three new items, one of them deleted
    # before its run is written: of the two runs left to write, one fits under the count of five.
    publishing.gather_shadow_runs(shadow.pk, [shadow_runs._as_json(run) for run in written], audit.queue)
    new = save_and_judge(audit, PAYLOADS[4:7], django_capture_on_commit_callbacks)
    Content.objects.filter(pk=new[0].pk).delete()
    for message in shadow_messages(broker):
        tasks.run_shadow.apply(args=message["args"])

    shadow.refresh_from_db()
    assert (shadow.items, shadow.status) == (5, Shadow.Status.FINISHED)
    assert shadow.agreed + shadow.disagreed == 5 and sum(shadow.matrix.values()) == 5
    runs = ShadowRun.objects.filter(shadow=shadow)
    assert runs.count() == 5
    (last,) = runs.exclude(pk__in=[run.pk for run in written])
    assert last.content_id in {new[1].pk, new[2].pk}
