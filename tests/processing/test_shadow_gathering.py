"""On Redis, the rows a shadow is offered are gathered for one message, sent once and taken a second
later: a shadow costs about its hooks' time per item, not a message per live batch."""

import pytest

from stash import processing, tasks
from stash.db import publishing
from stash.models import Shadow

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


def test_the_rows_of_many_batches_go_in_one_message_taken_a_second_later(
    on_redis, audit, broker, django_capture_on_commit_callbacks
):
    shadow = processing.start_shadow(audit, document=draft(audit), percent=100, count=100)
    for start in range(0, 6, 2):  # three live batches
        save_and_judge(audit, PAYLOADS[start : start + 2], django_capture_on_commit_callbacks)

    (message,) = shadow_messages(broker)
    assert message["args"] == [shadow.pk, []] and message["countdown"] == publishing.SHADOW_GATHER_SECONDS
    broker.messages.clear()
    tasks.run_shadow.apply(args=message["args"])  # as the worker runs it: it takes what was gathered
    assert Shadow.objects.get(pk=shadow.pk).items == 6

    save_and_judge(audit, PAYLOADS[6:8], django_capture_on_commit_callbacks)
    (again,) = shadow_messages(broker)  # the message took its marker down: the next batch sends one
    tasks.run_shadow.apply(args=again["args"])
    assert Shadow.objects.get(pk=shadow.pk).items == 8


def test_without_redis_each_batch_sends_its_rows(audit, broker, django_capture_on_commit_callbacks, settings):
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    processing.start_shadow(audit, document=draft(audit), percent=100, count=100)
    for start in range(0, 4, 2):
        save_and_judge(audit, PAYLOADS[start : start + 2], django_capture_on_commit_callbacks)
    assert [len(message["args"][1]) for message in shadow_messages(broker)] == [2, 2]
