"""The items list: the 8 characters of an id it shows find the item, as does a whole id with or
without dashes; each row has a button that copies the whole id."""

import uuid

import pytest
from django.urls import reverse

from stash.models import Content, id_prefix_bounds

pytestmark = pytest.mark.django_db

LIST = reverse("admin:stash_content_changelist")


@pytest.fixture
def items(make_stash):
    stash = make_stash("comments", name="Comments")
    ids = [
        "3f2a9c1b-77e1-4c2d-9a00-000000000001",
        "3f2a9c1b-77e2-4c2d-9a00-000000000002",
        "3f2a9c1c-0000-4000-8000-000000000003",
        "ffffffff-ffff-4fff-bfff-ffffffffffff",
    ]
    return [Content.objects.create(pk=uuid.UUID(pk), stash=stash, payload={"text": "hello"}) for pk in ids]


def found(client, term):
    response = client.get(LIST, {"q": term})
    assert response.status_code == 200
    return {str(item.pk) for item in response.context["cl"].result_list}


def test_the_8_characters_the_list_shows_find_the_item(admin_client, items):
    first, second, third, last = (str(item.pk) for item in items)
    assert found(admin_client, "3f2a9c1b") == {first, second}
    assert found(admin_client, "3F2A9C1C") == {third}
    assert found(admin_client, " ffffffff ") == {last}  # the highest ids: no upper bound


def test_a_longer_prefix_with_or_without_dashes_and_a_whole_id_find_the_item(admin_client, items):
    first, second, *_rest = (str(item.pk) for item in items)
    assert found(admin_client, "3f2a9c1b-77e1") == {first}
    assert found(admin_client, "3f2a9c1b77e2") == {second}
    assert found(admin_client, first) == {first}
    assert found(admin_client, first.replace("-", "")) == {first}


def test_what_is_not_an_id_prefix_searches_the_fields_only(admin_client, items):
    assert found(admin_client, "3f2") == set()  # too short to be an id's start
    assert found(admin_client, "3f2a9c1z") == set()
    assert found(admin_client, "hello") == {str(item.pk) for item in items}


def test_the_prefix_is_a_range_on_the_id_not_a_cast_to_text():
    assert id_prefix_bounds("3f2a-9c") == (
        uuid.UUID("3f2a9c00-0000-0000-0000-000000000000"),
        uuid.UUID("3f2a9d00-0000-0000-0000-000000000000"),
    )
    assert id_prefix_bounds("ffff") == (uuid.UUID("ffff0000-0000-0000-0000-000000000000"), None)
    assert id_prefix_bounds("abc") is None and id_prefix_bounds("spam") is None
    assert id_prefix_bounds("a" * 33) is None
    sql = str(Content.objects.id_prefix("3f2a9c1b").query)
    assert "CAST" not in sql.upper() and "LIKE" not in sql.upper()


def test_each_row_has_a_button_that_copies_the_whole_id(admin_client, items):
    page = admin_client.get(LIST).content.decode()
    first = items[0]
    assert (
        f'<button type="button" class="button stash-copy" data-copy="{first.pk}" data-word="Copy" '
        'data-copied="Copied" data-copied-said="Copied the full id of item 3f2a9c1b."'
    ) in page
    assert '<span class="visually-hidden"> the full id of item 3f2a9c1b</span>' in page
    assert "stash/copy-id.js" in page
    assert "the first 8 characters shown here find the item" in page
