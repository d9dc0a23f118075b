"""Token and session authentication; failures are JSON with a message."""

import json

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

TOKEN = "/api/auth/token/"


def test_a_username_and_password_give_the_token_that_then_authenticates(submitter, audit):
    client = APIClient()
    response = client.post(TOKEN, {"username": "sam", "password": "pass-word-123"}, format="json")
    assert response.status_code == 200
    token = response.json()["token"]
    assert token == Token.objects.get(user=submitter).key

    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert client.get("/api/contents/").status_code == 200
    again = client.post(TOKEN, {"username": "sam", "password": "pass-word-123"}, format="json")
    assert again.json() == {"token": token}


@pytest.mark.parametrize(
    "body, errors",
    [
        (
            {"username": "sam", "password": "wrong"},
            {"non_field_errors": ["Unable to log in with provided credentials."]},
        ),
        ({"username": "sam"}, {"password": ["This field is required."]}),
    ],
)
def test_wrong_or_missing_credentials_are_a_400(submitter, body, errors):
    response = APIClient().post(TOKEN, body, format="json")
    assert response.status_code == 400
    assert response.json() == errors
    assert not Token.objects.exists()


def test_token_requests_are_throttled(submitter, settings):
    settings.STASH_THROTTLE_RATES = {**settings.STASH_THROTTLE_RATES, "auth_token": "3/minute"}
    client = APIClient()
    statuses = [
        client.post(TOKEN, {"username": "sam", "password": "guess"}, format="json").status_code for _ in range(4)
    ]
    assert statuses == [400, 400, 400, 429]


def test_an_invalid_token_is_a_401(audit):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    response = client.get("/api/contents/")
    assert response.status_code == 401
    assert response.json() == {"detail": "Invalid token."}


def test_a_session_authenticates_too_and_its_writes_need_the_csrf_token(submitter, audit):
    client = APIClient(enforce_csrf_checks=True)
    client.login(username="sam", password="pass-word-123")
    assert client.get("/api/contents/").status_code == 200
    response = client.post("/api/contents/", {"stash": "audit", "payload": {"text": "hi"}}, format="json")
    assert response.status_code == 403
    assert response.json()["detail"].startswith("CSRF Failed")


@pytest.mark.parametrize("username", ["\u0000\u00b6sam", "sam\ud800"])
def test_a_username_no_database_can_store_is_a_400(submitter, username):
    body = json.dumps({"username": username, "password": "pass-word-123"})  # \ud800 escaped, as JSON spells it
    response = APIClient().post(TOKEN, body, content_type="application/json")
    assert response.status_code == 400
    assert list(response.json()) == ["username"]
