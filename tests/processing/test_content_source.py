"""Where an item came from: code by default; the web form, the API and the admin each say so."""

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from stash import processing
from stash.models import Content

pytestmark = pytest.mark.django_db


@pytest.fixture
def audit(make_stash):
    return make_stash("audit", hooks=[("require_fields", {"fields": ["text"]})])


@pytest.fixture
def sam(django_user_model):
    user = django_user_model.objects.create_user("sam", password="pass-word-123")
    user.user_permissions.add(Permission.objects.get(codename="add_content"))
    return user


def test_items_saved_from_code_are_labelled_code(audit):
    created = Content.objects.create(stash=audit, payload={"text": "from the shell"})
    submitted, _created = processing.submit(audit, {"text": "from a script"})
    [bulk] = processing.submit_many(audit, [{"text": "from a batch job"}])
    assert [Content.objects.get(pk=c.pk).source for c in (created, submitted, bulk)] == ["code"] * 3
    assert created.get_source_display() == "code (ORM)"


def test_each_face_sets_its_own_source(audit, sam, admin_client):
    form = Client()
    form.force_login(sam)
    assert form.post("/s/audit/submit/", {"text": "by form"}).status_code == 302
    api = APIClient()
    api.force_authenticate(sam)
    one = api.post("/api/contents/", {"stash": "audit", "payload": {"text": "by api"}}, format="json")
    assert one.status_code == 201
    assert (
        api.post("/api/contents/bulk/", {"stash": "audit", "items": [{"text": "by bulk"}]}, format="json").status_code
        == 201
    )
    admin_client.post(reverse("admin:stash_content_add"), {"stash": audit.pk, "payload": '{"text": "by admin"}'})
    sources = dict(Content.objects.values_list("payload__text", "source"))
    assert sources == {"by form": "form", "by api": "api", "by bulk": "api", "by admin": "admin"}


def test_the_admin_shows_and_filters_items_from_code(audit, admin_client):
    Content.objects.create(stash=audit, payload={"text": "from code"})
    processing.submit(audit, {"text": "from the api"}, source=Content.Source.API)
    changelist = reverse("admin:stash_content_changelist")
    page = admin_client.get(changelist).content.decode()
    assert '<a href="?source__exact=code">code (ORM)</a>' in page  # the filter offers it
    assert '<td class="field-source">code (ORM)</td>' in page
    filtered = admin_client.get(changelist, {"source__exact": "code"})
    assert [item.payload["text"] for item in filtered.context["cl"].result_list] == ["from code"]


def test_the_api_gives_code_as_the_source_of_an_item_from_code(audit, admin_user):
    item = Content.objects.create(stash=audit, payload={"text": "from code"})
    api = APIClient()
    api.force_authenticate(admin_user)
    assert api.get(f"/api/contents/{item.pk}/").json()["source"] == "code"
