"""A worker pool process loads the classifiers' models that enabled hooks use when it starts
(``classifiers.warm_up``, from Celery's ``worker_process_init``), so no judging message waits for them.

The loaders are replaced by mocks here: lingua's high accuracy models take 15 s and 1.2 GB.
tests/integration/test_worker_start.py starts a real worker.
"""

from unittest import mock

import pytest
from celery import signals

from stash.hooks import classifiers


@pytest.fixture
def loaders():
    with (
        mock.patch.object(classifiers, "_language_detector") as language,
        mock.patch.object(classifiers, "_profanity_model") as profanity,
    ):
        yield language, profanity


def test_warm_up_loads_each_model_its_hooks_use_once_and_passes_over_the_rest(loaders):
    language, profanity = loaders
    loaded = classifiers.warm_up(
        [
            ("language", {"allowed": ["en"]}),
            ("regex", {"field": "text", "pattern": "x"}),
            ("profanity", {"threshold": 0.8}),
            ("language", {"write_to": "lang", "accuracy": "low"}),
            ("language", {"allowed": ["de"], "accuracy": "high"}),
            ("profanity", {}),
            ("language", {"allowed": ["en"], "accuracy": "medium"}),  # refused by the hook: not loaded
            ("language", None),
        ]
    )
    assert loaded == ["language (high accuracy)", "profanity", "language (low accuracy)"]
    # Positional, as Language() asks for it: the cached detector is the one the pipeline will use.
    assert language.call_args_list == [mock.call("high"), mock.call("low")]
    profanity.assert_called_once_with()


def test_warm_up_of_no_classifier_loads_nothing(loaders):
    assert classifiers.warm_up([("regex", {}), ("keyword_blocklist", {"words": ["spam"]})]) == []
    assert not any(loader.called for loader in loaders)


def test_a_pool_process_starting_loads_the_models_of_enabled_hooks_only(loaders, make_stash):
    language, profanity = loaders
    make_stash(
        "talk",
        hooks=[
            ("language", {"allowed": ["en"], "accuracy": "low"}),
            {"hook": "profanity", "params": {}, "enabled": False},
        ],
    )
    language.reset_mock()
    profanity.reset_mock()
    signals.worker_process_init.send(sender=None)
    language.assert_called_once_with("low")
    profanity.assert_not_called()


def test_a_pool_process_starting_without_classifier_hooks_loads_nothing(loaders, make_stash):
    make_stash("plain", hooks=[("keyword_blocklist", {"words": ["spam"]})])
    signals.worker_process_init.send(sender=None)
    assert not any(loader.called for loader in loaders)


def test_a_pool_process_starts_when_the_configs_cannot_be_read(loaders, caplog):
    with mock.patch("stash.models.HookConfig.objects.enabled", side_effect=RuntimeError("database down")):
        signals.worker_process_init.send(sender=None)
    assert not any(loader.called for loader in loaders)
    assert "the classifiers' models load on first use" in caplog.text


def test_celery_waits_for_a_pool_process_longer_than_the_language_models_take():
    from hooksite.celery import app

    assert app.conf.worker_proc_alive_timeout >= 60  # lingua's high accuracy models: about 15 s
