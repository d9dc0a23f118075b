"""A webhook's page refuses a timeout_ms that is not its timeout param, with the error on that field."""

import pytest

from stash.models import HookConfig

from .test_admin import change_url
from .test_admin_params import SECRET, URL, page_post

pytestmark = pytest.mark.django_db


@pytest.fixture
def webhook(make_stash):
    stash = make_stash(
        "audit", hooks=[{"hook": "webhook", "label": "Notify", "params": {"url": URL, "secret": SECRET}}]
    )
    return stash.hooks.get()


def test_a_timeout_ms_other_than_the_params_timeout_is_a_form_error_on_that_field(admin_client, webhook):
    posted = {"url": URL, "secret": "", "timeout": 5}

    response = admin_client.post(change_url(webhook), page_post(webhook, form=posted, timeout_ms=8000))

    assert response.status_code == 200
    assert response.context["adminform"].form.errors["timeout_ms"] == [
        (
            "webhook's time is its timeout param (5 s), not this field: set the time there, "
            "and leave this at 2000 ms (or give the same time, 5000 ms)."
        )
    ]
    assert HookConfig.objects.get().timeout_ms == 2000


def test_the_same_time_in_both_is_taken(admin_client, webhook):
    posted = {"url": URL, "secret": "", "timeout": 3}

    response = admin_client.post(change_url(webhook), page_post(webhook, form=posted, timeout_ms=3000))

    assert response.status_code == 302
    assert (HookConfig.objects.get().timeout_ms, HookConfig.objects.get().params["timeout"]) == (3000, 3)
