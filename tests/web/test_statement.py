"""An item's page shows its submitter the statement of reasons of a rejected or held item: the
text, what was done, the ground with its reference, automated or not, the date and the redress."""

import pytest
from django.test import Client

from stash.models import Content

from ..support.statements import judged, moderated_stash

pytestmark = pytest.mark.django_db


@pytest.fixture
def moderated(make_stash, register_temporarily, broker):
    return moderated_stash(make_stash, register_temporarily, appeal_days=7)


@pytest.fixture
def sam(django_user_model):
    user = django_user_model.objects.create_user("sam", password="pw")
    client = Client()
    client.force_login(user)
    return user, client


def submitted(stash, user, **payload):
    item = judged(stash, **payload)
    Content.objects.filter(pk=item.pk).update(submitted_by=user)
    return item


def test_the_submitter_reads_the_statement_of_a_rejected_item(moderated, sam):
    user, client = sam
    item = submitted(moderated, user, text="spam")
    page = client.get(f"/c/{item.pk}/").content.decode()
    assert "Your removed post used a word we do not allow in text." in page
    assert '<a href="https://example.com/terms#4" rel="noopener">Terms §4</a>' in page
    assert "You may appeal until" in page
    assert "Decided by automated means</dt>\n    <dd>Yes</dd>" in page


def test_a_held_item_says_it_is_held_with_no_appeal_line(moderated, sam):
    user, client = sam
    item = submitted(moderated, user, text="http://x")
    page = client.get(f"/c/{item.pk}/").content.decode()
    assert "Held for review: it is not shown until a person decides." in page
    assert "Illegal content" in page and "Fraud Act s.2" in page
    assert "You may appeal until" not in page


def test_an_accepted_item_has_no_statement(moderated, sam):
    user, client = sam
    item = submitted(moderated, user, text="fine")
    assert 'id="statement"' not in client.get(f"/c/{item.pk}/").content.decode()
