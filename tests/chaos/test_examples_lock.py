"""A pipeline change whose golden examples are slow: saves to its stash, health checks and the
worker's verdicts go on meanwhile (its examples run with no lock held)."""

import threading
import time

import pytest
from django.contrib.auth import get_user_model
from django.db import connections
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from stash.models import Example

from .ledger import CHECKS, payload, scaled

pytestmark = [pytest.mark.chaos, pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def test_dry_run_with_slow_examples(chaos, chaos_worker):
    """A dry-run import runs slow golden examples (each sleeps, on the live version and on the new
    one) while items are saved one by one and /healthz is read: no save nor read waits on it, and
    every item is judged."""
    examples, seconds = scaled(2, 4), 1.0  # the dry run: 4 s, or 8 s of examples
    stash = chaos.stash(
        "examples-lock",
        hooks=[*CHECKS, {"hook": "test_sleep", "label": "Slow", "params": {"seconds": seconds}, "timeout_ms": 0}],
    )
    for n in range(examples):
        Example.objects.create(
            stash=stash, name=f"slow {n}", payload={"text": "zzz", "sleep": True}, verdict="accepted"
        )
    user = get_user_model().objects.create_superuser("examples-lock", "lock@example.com", "lock-password")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    document = {
        key: value for key, value in api.get(f"/api/stashes/{stash.slug}/pipeline/").json().items() if key != "examples"
    }
    document["hooks"][1]["params"] = {"words": ["spam", "eggs"]}
    answers = []

    def dry_run():
        try:
            answers.append(api.put(f"/api/stashes/{stash.slug}/pipeline/?dry_run=1", document, format="json"))
        finally:
            connections.close_all()

    busy = threading.Thread(target=dry_run)
    started = time.monotonic()
    busy.start()
    saves, reads, i = [], [], 0
    health = Client()
    while busy.is_alive():
        began = time.monotonic()
        chaos.submit(stash, [payload(i, spam=i % 5 == 0)])
        saves.append(time.monotonic() - began)
        began = time.monotonic()
        assert health.get("/healthz").status_code == 200
        reads.append(time.monotonic() - began)
        i += 1
        time.sleep(0.05)
    busy.join()
    took = time.monotonic() - started
    chaos.healed()
    figures = chaos.settle()
    figures.measured.update(
        {
            "dry run s": round(took, 1),
            "max save wait s": round(max(saves), 2),
            "max /healthz wait s": round(max(reads), 2),
            "saves during it": len(saves),
        }
    )
    assert max(saves) < 1 and max(reads) < 1, figures.measured
    assert answers[0].status_code == 200, answers[0].content
    assert {result["name"]: result["status"] for result in answers[0].json()["examples"]} == {
        f"slow {n}": "passed" for n in range(examples)
    }
    assert took >= examples * seconds * 2  # on the live version and on the new
