"""The appeal form on an item's page (/c/<id>/): who sees it, what it refuses, and the outcome shown."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.utils import timezone

from stash import processing
from stash.models import Appeal, Content
from tests.support.appeals import rejected

pytestmark = pytest.mark.django_db


@pytest.fixture
def audit(make_stash):
    return make_stash("audit", hooks=[{"hook": "keyword_blocklist", "params": {"words": ["spam"]}}])


def login(django_user_model, name, *codenames):
    user = django_user_model.objects.create_user(name, password="pw")
    user.user_permissions.set(Permission.objects.filter(content_type__app_label="stash", codename__in=codenames))
    client = Client()
    client.force_login(user)
    return user, client


@pytest.fixture
def sam(django_user_model):
    return login(django_user_model, "sam", "add_content")


def page(client, item):
    response = client.get(f"/c/{item.pk}/")
    assert response.status_code == 200
    return response.content.decode()


def test_the_submitter_appeals_from_the_item_page_and_sees_it_open(audit, sam):
    user, client = sam
    item = rejected(audit, user)
    html = page(client, item)
    assert "Appeal this decision" in html and f'action="/c/{item.pk}/appeal/"' in html
    assert 'maxlength="5000"' in html

    response = client.post(f"/c/{item.pk}/appeal/", {"statement": "It is a recipe."}, follow=True)

    assert response.status_code == 200
    html = response.content.decode()
    assert "Your appeal was sent." in html
    assert "Your appeal is open: a reviewer who did not make the decision will look at it." in html
    assert "Appeal this decision" not in html
    assert Appeal.objects.get().text == "It is a recipe."


def test_an_empty_or_late_appeal_is_a_form_error(audit, sam):
    user, client = sam
    item = rejected(audit, user)
    empty = client.post(f"/c/{item.pk}/appeal/", {"statement": "  "})
    assert empty.status_code == 400
    assert "Say why you think the decision is wrong." in empty.content.decode()

    late = rejected(audit, user, decided_at=timezone.now() - timedelta(days=30))
    assert "You can no longer appeal this decision: the time to appeal ended on" in page(client, late)
    refused = client.post(f"/c/{late.pk}/appeal/", {"statement": "Wrong."})
    assert refused.status_code == 400
    assert "The time to appeal ended on" in refused.content.decode()
    assert not Appeal.objects.exists()


def test_the_outcome_and_note_show_on_the_item_page(audit, sam, django_user_model):
    user, client = sam
    item = rejected(audit, user)
    appeal = processing.appeal(item, "Wrong.", user)
    rob, _ = login(django_user_model, "rob", "change_content")
    processing.decide_appeal(appeal.pk, "reversed", "A recipe indeed.", rob)

    html = page(client, item)

    assert "the decision was reversed. The item is accepted." in html
    assert "A recipe indeed." in html


def test_no_form_for_others_nor_for_an_accepted_item(audit, sam, django_user_model):
    user, client = sam
    item = rejected(audit, user)
    _viewer, viewer_client = login(django_user_model, "vera", "view_content")
    assert "Appeal this decision" not in page(viewer_client, item)
    assert viewer_client.post(f"/c/{item.pk}/appeal/", {"statement": "x"}).status_code == 403

    fine = Content.objects.create(stash=audit, payload={"text": "fine"}, submitted_by=user)
    processing.judge([fine.pk])
    assert 'id="appeal"' not in page(client, fine)


def test_an_anonymous_submitter_appeals_from_the_browser_that_submitted(make_stash, client):
    make_stash("open", hooks=[("keyword_blocklist", {"words": ["spam"]})], allow_anonymous=True)
    client.post("/s/open/submit/", {"text": "spam and eggs"})
    item = Content.objects.get()
    processing.judge([item.pk])
    assert "Appeal this decision" in page(client, item)

    stranger = Client()
    assert stranger.post(f"/c/{item.pk}/appeal/", {"statement": "Eggs!"}).status_code == 302  # to the login
    assert client.post(f"/c/{item.pk}/appeal/", {"statement": "Eggs!"}).status_code == 302
    assert Appeal.objects.get().text == "Eggs!"
