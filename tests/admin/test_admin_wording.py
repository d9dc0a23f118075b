"""The admin's words: the site is stash, a stash's name never gets a possessive "'s" built onto it, and
a golden example's mismatch says "no hook decided" rather than quoting "no hook" as a hook's name."""

from dataclasses import replace

import pytest
from django.urls import reverse

from stash import processing
from stash.models import Content
from stash.processing.examples import ExampleResult

pytestmark = pytest.mark.django_db


def test_every_admin_page_says_stash_not_django(admin_client):
    page = admin_client.get(reverse("admin:index")).content.decode()
    assert "Django administration" not in page and "Django site admin" not in page
    assert "<title>stash administration | stash admin</title>" in page
    assert '<a href="/admin/">stash</a>' in page
    assert "<h1>stash administration</h1>" in page
    changelist = admin_client.get(reverse("admin:stash_content_changelist")).content.decode()
    assert "| stash admin</title>" in changelist and "Django" not in changelist.split("</title>")[0]


@pytest.mark.parametrize(
    "url_name", ["admin:stash_stash_examples", "admin:stash_stash_upload", "admin:stash_stash_statements"]
)
def test_a_stash_named_in_a_sentence_gets_no_possessive(admin_client, make_stash, url_name):
    comments = make_stash("comments", name="Comments")
    page = admin_client.get(reverse(url_name, args=[comments.pk])).content.decode()
    assert "comments's" not in page and "comments&#x27;s" not in page
    assert "of comments" in page


def test_an_example_no_hook_decided_says_so_in_words():
    nobody = ExampleResult(
        name="fine", expected="rejected", verdict="accepted", expected_code="blocked_word", expected_hook="No spam"
    )
    assert nobody.problems == [
        "expected rejected, got accepted",
        "expected reason code 'blocked_word', got none",
        "expected 'No spam' to decide, but no hook decided",
    ]
    other = replace(nobody, verdict="rejected", code="too_long", hook="At most 10 B")
    assert other.problems == [
        "expected reason code 'blocked_word', got 'too_long'",
        "expected 'No spam' to decide, got 'At most 10 B'",
    ]


def test_the_version_number_has_one_name_in_the_runs_list_and_on_a_stash(admin_client, make_stash):
    audit = make_stash("audit")
    item = Content.objects.create(stash=audit, payload={"text": "hello"})
    processing.judge([item.pk])
    runs = admin_client.get(reverse("admin:stash_pipelinerun_changelist")).content.decode()
    assert "Pipeline version" in runs and "onfig version" not in runs
    page = admin_client.get(reverse("admin:stash_stash_change", args=[audit.pk])).content.decode()
    assert "Pipeline version" in page and "onfig version" not in page
