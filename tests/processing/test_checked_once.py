"""Every face checks a payload once per request: the form or serializer that checks it hands what it
found to ``processing``, which does not walk and encode it again; and the admin adds and edits items
through ``processing`` as the other faces do."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from stash.models import Content
from stash.processing import submitting

pytestmark = pytest.mark.django_db

PAYLOAD = {"text": "hello", "data": {"n": 1}}


@pytest.fixture
def checks(monkeypatch):
    """The payloads checked (``models.validate_payload``) so far."""
    checked = []
    validate = submitting.validate_payload

    def counting(payload, stash):
        checked.append(payload)
        return validate(payload, stash)

    monkeypatch.setattr(submitting, "validate_payload", counting)
    return checked


@pytest.fixture
def audit(make_stash):
    return make_stash("audit", hooks=[("keyword_blocklist", {"words": ["spam"]})])


@pytest.fixture
def api(admin_user):
    client = APIClient()
    client.force_authenticate(admin_user)
    return client


def test_the_submit_form(audit, admin_client, checks):
    response = admin_client.post("/s/audit/submit/", {"text": "hello"})
    assert response.status_code == 302
    assert checks == [{"text": "hello"}]
    assert Content.objects.get().source == "form"


def test_the_api_submit_and_edit(audit, api, checks):
    response = api.post("/api/contents/", {"stash": "audit", "payload": PAYLOAD}, format="json")
    assert response.status_code == 201
    response = api.patch(f"/api/contents/{response.json()['id']}/", {"payload": {"text": "bye"}}, format="json")
    assert response.status_code == 200
    assert checks == [PAYLOAD, {"text": "bye"}]


def test_the_api_bulk_submit(audit, api, checks):
    items = [{"text": f"item {n}"} for n in range(5)]
    response = api.post("/api/contents/bulk/", {"stash": "audit", "items": items}, format="json")
    assert response.status_code == 201
    assert checks == items


def test_the_admin_adds_and_edits_items_through_processing(
    audit, admin_client, admin_user, checks, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks() as sent:
        response = admin_client.post(
            reverse("admin:stash_content_add"),
            {"stash": audit.pk, "payload": '{"text": "hello"}', "idempotency_key": "k-1"},
        )
    assert response.status_code == 302
    item = Content.objects.get()
    assert (item.source, item.submitted_by, item.idempotency_key, item.status) == (
        "admin",
        admin_user,
        "k-1",
        "pending",
    )
    assert sent, "the new item was not handed to the workers"
    response = admin_client.post(
        reverse("admin:stash_content_change", args=[item.pk]),
        {"stash": audit.pk, "payload": '{"text": "bye"}', "idempotency_key": "k-1"},
    )
    assert response.status_code == 302
    item.refresh_from_db()
    assert (item.revision, item.payload) == (2, {"text": "bye"})
    assert checks == [{"text": "hello"}, {"text": "bye"}]


def test_the_admin_refuses_an_idempotency_key_it_has_used(audit, admin_client):
    add = reverse("admin:stash_content_add")
    assert (
        admin_client.post(add, {"stash": audit.pk, "payload": '{"text": "a"}', "idempotency_key": "k"}).status_code
        == 302
    )
    first = Content.objects.get()
    response = admin_client.post(add, {"stash": audit.pk, "payload": '{"text": "b"}', "idempotency_key": "k"})
    assert response.status_code == 200
    assert (
        f"This idempotency key was already used (item {first.pk})."
        in response.context["adminform"].form.errors["idempotency_key"]
    )
    assert Content.objects.count() == 1
