"""A real worker's pool processes load the models of the classifiers that enabled hooks use as they
start, before their first message (``hooksite.celery.load_classifier_models``). That a process
without such hooks loads none: tests/hooks/test_warm_up.py."""

import uuid

import pytest

from ..support.worker import Worker, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

LOADED = "Loaded the models of profanity, language (low accuracy)"


def test_each_pool_process_loads_the_models_its_hooks_use_when_it_starts(make_stash, tmp_path):
    make_stash("talk", hooks=[("profanity", {"threshold": 0.8}), ("language", {"allowed": ["en"], "accuracy": "low"})])
    worker = Worker(f"stash-test-start-{uuid.uuid4().hex[:8]}", tmp_path).start()
    try:
        # Both pool processes (Worker.pool: two), each once, with nothing sent to the queue.
        wait_for(lambda: worker.read_log().count(LOADED) == 2, timeout=60, message=f"two lines {LOADED!r}")
        assert len(worker.child_pids()) == 2
        assert "Timed out waiting for UP message" not in worker.read_log()
    finally:
        worker.stop()
