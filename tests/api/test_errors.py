"""Errors anywhere under /api/ are JSON with a message, never an HTML page or a 500."""

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_an_unknown_api_path_is_a_json_404(api, submitter):
    response = api(submitter).get("/api/nothing-here/")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"detail": "No API endpoint at /api/nothing-here/."}


def test_an_unknown_web_path_is_an_html_404():
    response = Client().get("/nothing-here/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


def test_a_method_an_endpoint_lacks_is_a_json_405(api, submitter):
    response = api(submitter).delete("/api/hooks/")
    assert response.status_code == 405
    assert response.json() == {"detail": 'Method "DELETE" not allowed.'}


def test_a_request_django_refuses_before_any_view_is_a_json_400_under_api():
    response = Client(headers={"host": "evil.example"}).get("/api/contents/")
    assert response.status_code == 400
    assert response.json()["detail"].startswith("Invalid HTTP_HOST header: 'evil.example'.")


def test_an_oversized_form_on_a_web_page_is_a_413_page(settings, audit, make_user, client):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100
    make_user("sam", "stash.add_content")
    client.login(username="sam", password="pass-word-123")
    response = client.post("/s/audit/submit/", {"text": "x" * 200})
    assert response.status_code == 413
    assert b"The request body is larger than the 100 bytes this server accepts." in response.content


@pytest.mark.parametrize(
    "url, body, expected",
    [
        ("/api/contents/", '{"stash": "\\ud800", "payload": {}}', {"stash": ["There is no stash slug=\ud800."]}),
        (
            "/api/contents/bulk/",
            '{"stash": "a\\udfffb", "items": [{}]}',
            {"stash": ["There is no stash slug=a\udfffb."]},
        ),
        ("/api/stashes/audit/hooks/", '{"hook": "\\ud800"}', {"hook": ['"\ud800" is not a valid choice.']}),
    ],
)
def test_an_error_quoting_a_lone_surrogate_is_json_that_escapes_it(audit, make_user, api, url, body, expected):
    user = make_user("root", is_superuser=True)
    response = api(user).post(url, body, content_type="application/json")
    assert response.status_code == 400
    assert "\\ud" in response.content.decode("ascii", "replace").lower()  # JSON's escape, not raw UTF-16
    assert response.json() == expected
