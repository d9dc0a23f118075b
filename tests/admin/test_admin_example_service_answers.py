"""The examples admin with ``service_answers``: a JSON field edited like the payload, checked with
its errors on the field, shown and used when the examples run."""

import json

import pytest
from django.urls import reverse

from stash.models import Example

from ..support.examples import vendor_stash

pytestmark = pytest.mark.django_db


@pytest.fixture
def vendor(make_stash, settings):
    return vendor_stash(make_stash, settings)


def add(admin_client, vendor, answers, **fields):
    body = {"stash": vendor.pk, "name": "spam", "payload": '{"text": "buy spam"}', "verdict": "rejected"}
    return admin_client.post(
        reverse("admin:stash_example_add"),
        {"reason_code": "", "hook": "", **body, **fields, "service_answers": answers},
    )


def test_an_example_is_added_with_a_mocked_answer_and_the_run_goes_on_with_it(admin_client, vendor):
    response = add(admin_client, vendor, json.dumps({"Vendor": {"outcome": "keep"}}), hook="No spam")
    assert response.status_code == 302
    assert vendor.examples.get().service_answers == {"Vendor": {"outcome": "keep"}}

    ran = admin_client.post(reverse("admin:stash_stash_examples", args=[vendor.pk]), {"_run": "Run examples"})
    [(_example, result)] = ran.context["results"]
    assert result.passed, result.problems
    assert "Vendor: kept (the service's answer, given by the example)" in ran.content.decode()


def test_left_blank_the_example_has_no_mock_and_expects_waiting(admin_client, vendor):
    assert add(admin_client, vendor, "", verdict="waiting").status_code == 302
    assert vendor.examples.get().service_answers == {}
    ran = admin_client.post(reverse("admin:stash_stash_examples", args=[vendor.pk]), {"_run": "Run examples"})
    assert ran.context["results"][0][1].passed


@pytest.mark.parametrize(
    "answers, message",
    [
        ('{"Vendor": {"outcome": "maybe"}}', "Vendor: the outcome must be keep, drop or hold, not &quot;maybe&quot;."),
        ('{"No spam": {"outcome": "drop"}}', "No spam: the stash has no asynchronous hook of this label"),
        ("{oops", "Enter a valid JSON."),
    ],
)
def test_a_bad_mock_is_a_form_error_on_the_field(admin_client, vendor, answers, message):
    response = add(admin_client, vendor, answers)
    assert response.status_code == 200
    assert "service_answers" in response.context["adminform"].form.errors
    assert message in response.content.decode()
    assert not Example.objects.exists()


def test_the_change_page_shows_the_mock_as_indented_json(admin_client, vendor):
    example = Example.objects.create(
        stash=vendor,
        name="toxic",
        payload={"text": "hi"},
        verdict="rejected",
        service_answers={"Vendor": {"outcome": "drop"}},
    )
    page = admin_client.get(reverse("admin:stash_example_change", args=[example.pk])).content.decode()
    assert "&quot;outcome&quot;: &quot;drop&quot;" in page
