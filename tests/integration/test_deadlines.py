"""Simulate and replay answer in bounded time: hooks that hang are stopped with their child process,
and every face says so (the API a 503, the command a CommandError, the admin a message)."""

import json
import multiprocessing

import pytest
from django.contrib.messages import get_messages
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.test import APIClient

from stash import processing
from stash.models import Content

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

STUCK_MESSAGE = "The hooks did not finish within 1 s: hook 'Stuck' was still running."


@pytest.fixture
def stuck(make_stash, settings):
    settings.STASH_SIMULATE_TIMEOUT = 1
    # Blocks the alarm and sleeps in C for 5 s: no timeout_ms interrupts it.
    return make_stash(
        "stuck",
        hooks=[
            ("require_fields", {"fields": ["text"]}),
            {"hook": "test_stuck", "params": {"seconds": 5}, "label": "Stuck", "timeout_ms": 200},
        ],
    )


def test_the_api_answers_503_naming_the_hook_and_leaves_no_process(stuck, admin_user):
    client = APIClient()
    client.force_authenticate(admin_user)

    response = client.post("/api/stashes/stuck/simulate/", {"payload": {"text": "hi", "stuck": True}}, format="json")

    assert response.status_code == 503
    assert response.json()["detail"].startswith(STUCK_MESSAGE)
    assert multiprocessing.active_children() == []
    # The caller goes on: the next simulation answers.
    response = client.post("/api/stashes/stuck/simulate/", {"payload": {"text": "hi"}}, format="json")
    assert (response.status_code, response.json()["verdict"]) == (200, "accepted")


def test_the_command_fails_naming_the_hook(stuck, tmp_path):
    payload = tmp_path / "payload.json"
    payload.write_text(json.dumps({"text": "hi", "stuck": True}))

    with pytest.raises(CommandError, match=STUCK_MESSAGE):
        call_command("stash_simulate", "stuck", str(payload))


def test_the_admins_simulate_page_says_the_hooks_did_not_finish(stuck, admin_client):
    response = admin_client.post(
        reverse("admin:stash_stash_simulate", args=[stuck.pk]), {"payload": json.dumps({"text": "hi", "stuck": True})}
    )

    assert response.status_code == 200
    assert response.context["result"] is None
    assert [m.message for m in get_messages(response.wsgi_request)][0].startswith(STUCK_MESSAGE)


def test_replay_stops_at_its_deadline_naming_the_item_and_the_hook(stuck, admin_client):
    item = Content.objects.create(stash=stuck, payload={"text": "hi", "stuck": True})
    Content.objects.filter(pk=item.pk).update(status="accepted")

    with pytest.raises(processing.DeadlineExceeded, match=f"hook 'Stuck' \\(item {item.pk}\\) was still running"):
        processing.replay(stuck, 10)
    response = admin_client.post(reverse("admin:stash_stash_replay", args=[stuck.pk]), {"last_n": 10})

    assert response.status_code == 200
    assert response.context["report"] is None
    assert "did not finish within 1 s" in [m.message for m in get_messages(response.wsgi_request)][0]
    assert multiprocessing.active_children() == []
