"""Admin lists given addresses they cannot serve: a NUL in a filter, a search or an ordering answers
400 naming the parameter (PostgreSQL cannot compare a text with a NUL); a hooks list with no rows is
an empty list."""

import pytest
from django.test import Client

from stash.models import Content

from .test_admin import staff

pytestmark = pytest.mark.django_db

VIEW = ["view_stash", "view_hookconfig", "view_content", "view_pipelinerun", "view_example"]


@pytest.fixture
def audit(make_stash):
    stash = make_stash("audit", hooks=[("require_fields", {"fields": ["text"]})])
    Content.objects.create(stash=stash, payload={"text": "hello"})
    return stash


@pytest.mark.parametrize(
    ("page", "parameter"),
    [
        ("content", "status__exact"),
        ("content", "source__exact"),
        ("content", "q"),
        ("example", "verdict__exact"),
        ("hookconfig", "mode__exact"),
        ("hookconfig", "hook"),
        ("pipelinerun", "outcome__exact"),
        ("stash", "q"),
    ],
)
def test_a_nul_in_a_list_filter_or_search_answers_400_naming_the_parameter(audit, django_user_model, page, parameter):
    viewer = staff(django_user_model, "viewer", *VIEW)
    response = viewer.get(f"/admin/stash/{page}/?{parameter}=%00")
    assert response.status_code == 400
    assert f"“{parameter}”" in response.content.decode()
    assert "NUL" in response.content.decode()


def test_a_nul_in_a_parameter_name_or_beside_good_ones_answers_400_too(audit, django_user_model):
    viewer = staff(django_user_model, "viewer", *VIEW)
    assert viewer.get("/admin/stash/content/?status__exact=held&o=1.%00").status_code == 400
    assert viewer.get("/admin/stash/content/?a%00b=1").status_code == 400
    assert viewer.get(f"/admin/stash/stash/{audit.pk}/versions/compare/?a=%00").status_code == 400


def test_the_lists_still_filter_and_the_api_still_names_its_bad_parameter(audit, django_user_model):
    viewer = staff(django_user_model, "viewer", *VIEW)
    response = viewer.get("/admin/stash/content/?status__exact=pending&q=hello")
    assert response.status_code == 200
    assert response.context["cl"].result_count == 1
    api = viewer.get("/api/contents/?status=%00")
    assert api.status_code == 400
    assert "status" in api.json()


@pytest.mark.parametrize("query", ["?q=nomatch", "?enabled__exact=0"])
def test_the_hooks_list_with_no_rows_is_an_empty_list_for_those_who_may_change_hooks(audit, django_user_model, query):
    editor = staff(django_user_model, "editor", "view_stash", "view_hookconfig", "change_hookconfig")
    response = editor.get(f"/admin/stash/hookconfig/{query}")
    assert response.status_code == 200
    assert response.context["cl"].result_count == 0
    assert "0 hooks" in response.content.decode() or "0 hook configs" in response.content.decode()


def test_a_date_hierarchy_given_a_huge_month_answers_400(django_user_model):
    root = Client()
    root.force_login(django_user_model.objects.create_superuser("root", password="pw"))
    response = root.get(f"/admin/axes/accessattempt/?attempt_time__year=2026&attempt_time__month={10**20}")
    assert response.status_code == 400
    assert "“attempt_time__month”" in response.content.decode()
    assert root.get("/admin/axes/accessattempt/?attempt_time__year=2026&attempt_time__month=2").status_code == 200
