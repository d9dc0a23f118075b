"""What importing a pipeline document needs, the same through both faces: the admin's upload and
``PUT /api/stashes/<slug>/pipeline/`` refuse and accept the same user for the same document."""

import json

import pytest
from django.contrib.auth.models import Permission
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from stash import processing
from stash.models import Example

pytestmark = pytest.mark.django_db

HOOKS = [("require_fields", {"fields": ["text"]}), ("keyword_blocklist", {"words": ["spam"]})]
#: What README and docs/pipelines.md say an import needs: the stash and its hooks, and, for a
#: document that carries golden examples (they replace the stash's), adding and deleting examples.
DOCUMENTED = (
    "change_stash",
    "add_hookconfig",
    "change_hookconfig",
    "delete_hookconfig",
    "add_example",
    "delete_example",
)
#: What the admin needs besides, to reach a stash's pipeline at all.
SEEING = ("view_hookconfig", "view_example")


@pytest.fixture
def stashes(make_stash):
    """Two stashes alike: one for each face to import the same document into."""
    return make_stash("audit", hooks=HOOKS), make_stash("copy", hooks=HOOKS)


@pytest.fixture
def document(stashes):
    """An export of audit with other blocked words, and golden examples that replace the stash's."""
    document = processing.export_document(stashes[0])
    document["hooks"][1]["params"] = {"words": ["spam", "scam"]}
    document["examples"] = [{"name": "scam", "payload": {"text": "a scam"}, "verdict": "rejected"}]
    return document


def user_with(django_user_model, codenames):
    user = django_user_model.objects.create_user("uma", password="pw", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(content_type__app_label="stash", codename__in=codenames))
    return user


def admin_upload(user, stash, document):
    """The admin's upload of ``document``, then "Apply" on its preview: the preview, and what was applied (or None)."""
    client = Client()
    client.force_login(user)
    url = reverse("admin:stash_stash_upload", args=[stash.pk])
    preview = client.post(url, {"file": SimpleUploadedFile("pipeline.json", json.dumps(document).encode())})
    if preview.status_code != 200 or preview.context["plan"] is None:
        return preview, None
    form = preview.context["apply_form"]
    return preview, client.post(
        url,
        {"document": form["document"].value(), "version": form["version"].value(), "_apply": "Apply this pipeline"},
        follow=True,
    )


def api_import(user, stash, document):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return client.put(f"/api/stashes/{stash.slug}/pipeline/", document, format="json")


def state(stash):
    stash.refresh_from_db()
    return (
        stash.config_version,
        list(stash.hooks.in_order().values_list("params", flat=True)),
        sorted(Example.objects.filter(stash=stash).values_list("name", flat=True)),
    )


def test_what_an_import_needs_is_what_the_docs_say():
    assert set(processing.import_permissions({"hooks": []})) == {f"stash.{name}" for name in DOCUMENTED[:4]}
    assert set(processing.import_permissions({"hooks": [], "examples": []})) == {f"stash.{name}" for name in DOCUMENTED}


@pytest.mark.parametrize("lacking", DOCUMENTED)
def test_a_user_lacking_one_documented_permission_is_refused_by_both_faces(
    django_user_model, stashes, document, lacking
):
    user = user_with(django_user_model, [*SEEING, *(name for name in DOCUMENTED if name != lacking)])
    audit, copy = stashes
    before = state(audit), state(copy)

    preview, applied = admin_upload(user, audit, document)
    assert applied is None
    assert preview.status_code == 403 or f"stash.{lacking}" in " ".join(preview.context["form"].errors["file"])
    response = api_import(user, copy, document)
    assert response.status_code == 403, response.json()

    assert (state(audit), state(copy)) == before


def test_a_user_with_exactly_the_documented_permissions_imports_through_both_faces(
    django_user_model, stashes, document
):
    user = user_with(django_user_model, [*SEEING, *DOCUMENTED])
    audit, copy = stashes

    preview, applied = admin_upload(user, audit, document)
    assert preview.context["plan"].changes == [
        'keyword_blocklist: words ["spam"] → ["spam", "scam"]',
        "examples replaced (1)",
    ]
    assert applied is not None and applied.status_code == 200
    response = api_import(user, copy, document)
    assert response.status_code == 200, response.json()
    assert response.json()["applied"] is True

    assert state(audit)[1:] == state(copy)[1:] == ([{"fields": ["text"]}, {"words": ["spam", "scam"]}], ["scam"])


def test_a_forged_confirmation_is_checked_for_the_same_permissions(django_user_model, stashes, document):
    # "Apply" posts the document back: one carrying examples the preview never saw is refused too.
    user = user_with(django_user_model, [*SEEING, *DOCUMENTED[:4]])
    audit = stashes[0]
    before = state(audit)
    client = Client()
    client.force_login(user)
    response = client.post(
        reverse("admin:stash_stash_upload", args=[audit.pk]),
        {"document": json.dumps(document), "version": audit.config_version, "_apply": "Apply this pipeline"},
        follow=True,
    )
    assert "stash.add_example" in " ".join(str(message) for message in response.context["messages"])
    assert state(audit) == before
