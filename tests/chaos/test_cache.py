"""The cache fails while anonymous callers submit, log in for tokens and post the submit form: the
cache is a Redis of our own, stopped, or full under noeviction. No answer is a 5xx, every saved
item is judged, and lockouts (in the database) still refuse a guesser."""

import json
from collections import Counter

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient

from stash.models import Content

from .ledger import payload, scaled

pytestmark = [pytest.mark.chaos, pytest.mark.integration, pytest.mark.django_db(transaction=True)]

PASSWORD = "pass-word-123"


@pytest.fixture
def own_cache(own_cache):
    """The chaos suite's own cache, with a user of ours to log in as."""
    get_user_model().objects.create_user("sam", password=PASSWORD)
    return own_cache


def traffic(chaos, stash, rounds):
    """Anonymous callers at work: API submits and form posts (every fifth is spam), token logins with
    the right password from one address and wrong ones from another. Returns the answers' statuses."""
    statuses = Counter()
    api, form = APIClient(raise_request_exception=False), Client(raise_request_exception=False)
    saved = []
    for n in range(rounds):
        item = payload(n, spam=n % 5 == 0)
        response = api.post("/api/contents/", {"stash": stash.slug, "payload": item}, format="json")
        statuses[f"api submit {response.status_code}"] += 1
        if response.status_code == 201:
            saved.append(response.json()["id"])
        # The form's data field carries "expect" (a payload of text and data, judged as the API's).
        item = payload(10_000 + n, spam=n % 5 == 0)
        response = form.post(f"/s/{stash.slug}/submit/", {"text": item.pop("text"), "data": json.dumps(item)})
        statuses[f"form {response.status_code}"] += 1
        if response.status_code == 302:
            saved.append(response["Location"].rstrip("/").rsplit("/", 1)[-1])
        response = APIClient(raise_request_exception=False, REMOTE_ADDR="198.51.100.1").post(
            "/api/auth/token/", {"username": "sam", "password": PASSWORD}, format="json"
        )
        statuses[f"token {response.status_code}"] += 1
        response = APIClient(raise_request_exception=False, REMOTE_ADDR="203.0.113.66").post(
            "/api/auth/token/", {"username": "sam", "password": f"guess {n}"}, format="json"
        )
        statuses[f"guess {response.status_code}"] += 1
    chaos.track(list(Content.objects.filter(pk__in=saved)))
    return statuses


def check(chaos, statuses, rounds, settings):
    assert not [key for key in statuses if key.split()[-1].startswith("5")], statuses
    assert statuses["api submit 201"] == statuses["form 302"] == statuses["token 200"] == rounds, statuses
    guesses = statuses["guess 400"]
    assert guesses <= settings.AXES_FAILURE_LIMIT and guesses + statuses["guess 429"] == rounds, statuses
    figures = chaos.settle()
    assert len(chaos.items) == 2 * rounds
    figures.measured.update(
        {
            "requests": sum(statuses.values()),
            "5xx": 0,
            "guesses checked": guesses,
            "guesses refused": statuses["guess 429"],
        }
    )


def test_cache_down(chaos, own_cache, settings):
    """The cache server is stopped while anonymous traffic goes on; it is started again after."""
    stash = chaos.stash("cache-down", allow_anonymous=True)
    rounds = scaled(10, 200)
    own_cache.stop()
    try:
        statuses = traffic(chaos, stash, rounds)
    finally:
        own_cache.start()
    chaos.healed()
    check(chaos, statuses, rounds, settings)


def test_cache_full_under_noeviction(chaos, own_cache, settings):
    """The cache is full (maxmemory, noeviction: every write refused) while anonymous traffic goes on."""
    stash = chaos.stash("cache-full", allow_anonymous=True)
    rounds = scaled(10, 200)
    with own_cache.full():
        statuses = traffic(chaos, stash, rounds)
    chaos.healed()
    check(chaos, statuses, rounds, settings)
