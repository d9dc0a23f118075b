"""A sink with a ``timeout`` param (``webhook``) has one time, that param: ``timeout_ms`` set otherwise is refused."""

import pytest
from django.core.exceptions import ValidationError

from stash.models import HookConfig

pytestmark = pytest.mark.django_db

URL = "https://hooks.example.com/in"
SECRET = "s3cret-s3cret-s3cret"


def webhook(stash, timeout_ms=2000, **params):
    return HookConfig(
        stash=stash, hook="webhook", params={"url": URL, "secret": SECRET, **params}, timeout_ms=timeout_ms
    )


def test_a_webhook_with_another_time_in_timeout_ms_is_refused_naming_the_param(make_stash):
    stash = make_stash()

    with pytest.raises(ValidationError) as refused:
        webhook(stash, timeout_ms=8000, timeout=5).save()

    assert refused.value.message_dict == {
        "timeout_ms": [
            (
                "webhook's time is its timeout param (5 s), not this field: set the time there, "
                "and leave this at 2000 ms (or give the same time, 5000 ms)."
            )
        ]
    }
    assert not HookConfig.objects.exists()


def test_without_the_param_its_default_is_the_time(make_stash):
    with pytest.raises(ValidationError, match=r"its timeout param \(5 s\)"):
        webhook(make_stash(), timeout_ms=3000).save()


@pytest.mark.parametrize(("timeout_ms", "params"), [(2000, {"timeout": 3}), (3000, {"timeout": 3}), (5000, {})])
def test_the_default_or_the_same_time_is_taken(make_stash, timeout_ms, params):
    config = webhook(make_stash(), timeout_ms=timeout_ms, **params)
    config.save()
    assert HookConfig.objects.get().timeout_ms == timeout_ms


def test_a_stored_config_with_two_times_can_still_be_edited(make_stash):
    config = webhook(make_stash())
    config.save()
    HookConfig.objects.filter(pk=config.pk).update(timeout_ms=9000)  # stored before the check
    config = HookConfig.objects.get()

    config.params = {**config.params, "timeout": 2}
    config.save()

    assert HookConfig.objects.get().params["timeout"] == 2


def test_filters_keep_timeout_ms_as_their_time(make_stash):
    HookConfig(stash=make_stash(), hook="require_fields", params={"fields": ["a"]}, timeout_ms=8000).save()
    assert HookConfig.objects.get().timeout_ms == 8000
