"""The statement policy editor (a stash's own admin page) and an item's statements on its page."""

import pytest
from django.test import Client

from stash.models import Stash, Statement

from ..support.statements import judged, moderated_stash
from .test_admin import staff

pytestmark = pytest.mark.django_db


@pytest.fixture
def moderated(make_stash, register_temporarily, broker):
    return moderated_stash(make_stash, register_temporarily)


def url(stash):
    return f"/admin/stash/stash/{stash.pk}/statements/"


def form_data(page, **changes):
    """The editor's form as it was shown, with ``changes``: every field's initial value."""
    data = {}
    for form in [page.context["default_form"], *(f for _c, f in page.context["entries"]), page.context["new_form"]]:
        for name in form.fields:
            data[f"{form.prefix}-{name}"] = form.initial.get(name, "")
    data.update(changes)
    return data


def code_prefix(page, code):
    return next(form.prefix for c, form in page.context["entries"] if c == code)


def test_the_editor_lists_the_codes_of_the_stashs_hooks_and_saves_a_new_version(moderated, admin_client):
    judged(moderated, text="http://x")
    page = admin_client.get(url(moderated))
    assert page.status_code == 200
    codes = [code for code, _form in page.context["entries"]]
    assert {"blocked_word", "link"} <= set(codes)
    link = code_prefix(page, "link")
    version = moderated.config_version
    response = admin_client.post(
        url(moderated), form_data(page, **{f"{link}-text": "Held: {reason}", f"{link}-ground": "terms", "_save": "1"})
    )
    assert response.status_code == 302
    moderated.refresh_from_db()
    assert moderated.statement_policy["codes"]["link"]["text"] == "Held: {reason}"
    assert moderated.statement_policy["codes"]["link"]["ground"] == "terms"
    assert moderated.config_version == version + 1


def test_an_invalid_entry_is_a_form_error_and_nothing_is_saved(moderated, admin_client):
    page = admin_client.get(url(moderated))
    link = code_prefix(page, "link")
    before = Stash.objects.get(pk=moderated.pk).statement_policy
    response = admin_client.post(
        url(moderated), form_data(page, **{f"{link}-text": "Held {because}", f"{link}-url": "ftp://x", "_save": "1"})
    )
    assert response.status_code == 200
    form = dict(response.context["entries"])["link"]
    assert "unknown placeholder {because}" in form.errors["text"][0]
    assert "must start with https:// or http://" in form.errors["url"][0]
    assert Stash.objects.get(pk=moderated.pk).statement_policy == before


def test_a_preview_shows_the_edited_statement_of_a_real_item_and_saves_nothing(moderated, admin_client):
    item = judged(moderated, text="http://x")
    page = admin_client.get(url(moderated))
    link = code_prefix(page, "link")
    statements_before, version = Statement.objects.count(), moderated.config_version
    response = admin_client.post(
        url(moderated),
        form_data(page, **{f"{link}-text": "Preview {hook}: {reason}", "items": [str(item.pk)], "_preview": "1"}),
    )
    html = response.content.decode()
    assert "Preview Links: has a link" in html
    assert Statement.objects.count() == statements_before
    moderated.refresh_from_db()
    assert moderated.config_version == version
    assert moderated.statement_policy["codes"]["link"]["text"] == "Links wait for a person: {reason}."


def test_a_new_code_can_be_added(moderated, admin_client):
    page = admin_client.get(url(moderated))
    admin_client.post(
        url(moderated), form_data(page, **{"new-code": "too_long", "new-text": "Too long.", "_save": "1"})
    )
    moderated.refresh_from_db()
    assert moderated.statement_policy["codes"]["too_long"] == {"text": "Too long."}


def test_the_editor_needs_the_change_permission(moderated, django_user_model):
    viewer = staff(django_user_model, "vic", "view_stash")
    assert viewer.get(url(moderated)).status_code == 403
    changer = staff(django_user_model, "cat", "view_stash", "change_stash")
    assert changer.get(url(moderated)).status_code == 200
    assert Client().get(url(moderated)).status_code == 302


def test_an_items_page_lists_its_statements(moderated, admin_client):
    item = judged(moderated, text="spam")
    html = admin_client.get(f"/admin/stash/content/{item.pk}/change/").content.decode()
    assert "statements of reasons" in html.lower()
    assert "Your removed post used a word we do not allow in text." in html
