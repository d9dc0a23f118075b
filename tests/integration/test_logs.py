"""A real worker with LOG_FORMAT=json: its lines are JSON objects, those written for an item name
the item, its stash, revision and hook, and the task."""
import json

import pytest

from stash.models import Content

from ..worker import Worker, wait_for

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

    line = wait_for(lambda: next((line for line in json_lines(json_worker)
                                  if line.get("logger") == "stash.hooks.sinks"), None),
                    message="the log sink's line")

    log = stash.hooks.get(hook="log")
    assert line["event"] == f"news: item {content.pk} r1 rejected: missing text"
    assert (line["item"], line["stash"], line["revision"], line["hook"], line["hook_config"], line["level"]) == (
        str(content.pk), "news", 1, "log", log.pk, "warning")
    assert line["task"] == "stash.tasks.process_contents" and line["task_id"]
    # Celery's own lines are JSON too: after its start-up banner, every line is one JSON object.
    log = json_worker.read_log().splitlines()
    after_banner = log[next(n for n, text in enumerate(log) if text.startswith("{")):]
    written = [json.loads(text) for text in after_banner]
    assert any(line["event"].endswith(" ready.") and line["logger"].startswith("celery") for line in written)


def json_lines(worker):
    return [json.loads(text) for text in worker.read_log().splitlines() if text.startswith("{")]
