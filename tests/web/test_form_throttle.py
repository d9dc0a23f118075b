"""The anonymous submit form is held to the anonymous API's rate, on the same count per address."""

import pytest
from django.test import Client
from rest_framework.test import APIClient

from stash.models import Content

pytestmark = pytest.mark.django_db

FORM = "/s/open/submit/"


@pytest.fixture
def open_stash(make_stash, settings):
    settings.STASH_THROTTLE_RATES = {**settings.STASH_THROTTLE_RATES, "anon_submit": "3/minute"}
    return make_stash("open", allow_anonymous=True)


def test_anonymous_form_posts_past_the_rate_are_refused_with_a_form_error(open_stash):
    client = Client()
    statuses = [client.post(FORM, {"text": f"hello {n}"}).status_code for n in range(3)]
    assert statuses == [302, 302, 302]

    refused = client.post(FORM, {"text": "one too many"})
    assert refused.status_code == 429
    assert 0 < int(refused["Retry-After"]) <= 60
    page = refused.content.decode()
    assert "Too many submissions from this address: try again in" in page
    assert "one too many" in page  # the text typed is still in the form
    assert Content.objects.count() == 3


def test_the_form_and_the_api_share_one_count_per_address(open_stash):
    api = APIClient()
    for n in range(2):
        assert (
            api.post("/api/contents/", {"stash": "open", "payload": {"text": f"api {n}"}}, format="json").status_code
            == 201
        )
    client = Client()
    assert client.post(FORM, {"text": "third"}).status_code == 302
    assert client.post(FORM, {"text": "fourth"}).status_code == 429
    assert api.post("/api/contents/", {"stash": "open", "payload": {"text": "fifth"}}, format="json").status_code == 429
    # Another address has its own count.
    assert Client(REMOTE_ADDR="198.51.100.8").post(FORM, {"text": "elsewhere"}).status_code == 302


def test_people_logged_in_are_not_held_to_the_anonymous_rate(open_stash, django_user_model):
    django_user_model.objects.create_user("sam", password="pass-word-123")
    client = Client()
    client.login(username="sam", password="pass-word-123")
    assert [client.post(FORM, {"text": f"hello {n}"}).status_code for n in range(5)] == [302] * 5
