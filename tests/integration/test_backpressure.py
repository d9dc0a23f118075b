"""With a real worker: a stash with max_waiting judges what it takes as quickly as any, and refuses
a bulk call that would pass the limit, whole, with 429 and Retry-After."""

import pytest
from rest_framework.test import APIClient

from stash.models import Content

from ..support.worker import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def test_a_stash_with_max_waiting_judges_its_items_and_refuses_a_bulk_past_it(worker, make_stash, django_user_model):
    stash = make_stash("narrow", hooks=[("require_fields", {"fields": ["text"]})], max_waiting=20)
    api = APIClient()
    api.force_authenticate(django_user_model.objects.create_superuser("root", password="pass-word-123"))

    for n in range(5):
        response = api.post("/api/contents/", {"stash": "narrow", "payload": {"text": f"item {n}"}}, format="json")
        assert response.status_code == 201

    def judged():
        statuses = set(Content.objects.filter(stash=stash).values_list("status", flat=True))
        return statuses == {"accepted"}

    wait_for(judged, timeout=20, message="the five items judged")

    too_many = [{"text": f"bulk {n}"} for n in range(21)]
    response = api.post("/api/contents/bulk/", {"stash": "narrow", "items": too_many}, format="json")
    assert response.status_code == 429 and response["Retry-After"] == "5"
    assert Content.objects.filter(stash=stash).count() == 5
