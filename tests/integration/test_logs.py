"""A real worker with LOG_FORMAT=json: its lines are JSON objects, those written for an item name
the item, its stash, revision and hook, and the task."""

import json

import pytest

from stash.models import Content

from ..support.worker import Worker, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


class JsonWorker(Worker):
    def env(self):
        return {**super().env(), "LOG_FORMAT": "json"}


@pytest.fixture(scope="module")
def json_worker(django_db_setup, django_db_blocker, worker_queue, tmp_path_factory):
    worker = JsonWorker(f"{worker_queue}-json", tmp_path_factory.mktemp("json-worker")).start()
    yield worker
    worker.stop()


def test_a_worker_logs_json_lines_with_the_item_stash_revision_hook_and_task(json_worker, make_stash, settings):
    settings.STASH_QUEUE = json_worker.queue
    stash = make_stash("news", hooks=[("require_fields", {"fields": ["text"]}), ("log", {"level": "warning"})])
    content = Content.objects.create(stash=stash, payload={"title": "no text"})

    line = wait_for(
        lambda: next((line for line in json_lines(json_worker) if line.get("logger") == "stash.hooks.sinks"), None),
        message="the log sink's line",
    )

    log = stash.hooks.get(hook="log")
    assert line["event"] == f"news: item {content.pk} r1 rejected: missing text"
    assert (line["item"], line["stash"], line["revision"], line["hook"], line["hook_config"], line["level"]) == (
        str(content.pk),
        "news",
        1,
        "log",
        log.pk,
        "warning",
    )
    assert line["task"] == "stash.tasks.process_contents" and line["task_id"]
    # Celery's own lines are JSON too: after its start-up banner, every line is one JSON object.
    log = json_worker.read_log().splitlines()
    after_banner = log[next(n for n, text in enumerate(log) if text.startswith("{")) :]
    written = [json.loads(text) for text in after_banner]
    assert any(line["event"].endswith(" ready.") and line["logger"].startswith("celery") for line in written)


def json_lines(worker):
    return [json.loads(text) for text in worker.read_log().splitlines() if text.startswith("{")]


class TextWorker(Worker):
    def env(self):
        return {**super().env(), "LOG_FORMAT": "text"}


@pytest.fixture(scope="module")
def text_worker(django_db_setup, django_db_blocker, worker_queue, tmp_path_factory):
    worker = TextWorker(f"{worker_queue}-text", tmp_path_factory.mktemp("text-worker")).start()
    yield worker
    worker.stop()


# What a forged line would look like, were a newline before it written as it is.
FORGED = "2026-12-03T14:02:11.503000Z [critical ] forged [stash.audit]"


def test_a_worker_writes_one_text_line_per_event_whatever_a_payload_key_or_a_reason_holds(
    text_worker, make_stash, settings
):
    settings.STASH_QUEUE = text_worker.queue
    regex = {"field": "text", "pattern": "spam[\\s\\S]*", "mode": "must_not_match"}
    stash = make_stash(
        "news", hooks=[("regex", regex), ("keyword_blocklist", {"words": ["forbidden"]}), ("log", {"level": "warning"})]
    )
    in_reason = Content.objects.create(stash=stash, payload={"text": f"spam\n{FORGED}"})
    in_key = Content.objects.create(stash=stash, payload={"text": "fine", f"note\n{FORGED}": "forbidden"})

    def sink_lines():
        lines = [line for line in text_worker.read_log().splitlines() if "[stash.hooks.sinks]" in line]
        return lines if len(lines) == 2 else None

    written = wait_for(sink_lines, message="the log sink's two lines")

    assert not [line for line in text_worker.read_log().splitlines() if line.startswith(FORGED)]
    (reason,) = [line for line in written if f"item {in_reason.pk} r1 rejected: text matches" in line]
    assert f"('spam\\n{FORGED[:50]}" in reason
    (key,) = [line for line in written if f"item {in_key.pk} r1 rejected: contains blocked word" in line]
    assert f"in note\\n{FORGED} [stash.hooks.sinks]" in key
