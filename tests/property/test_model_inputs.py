"""Any payload saved through ``stash.processing`` or the ORM is stored exactly (read back equal from
the database) or refused with ``ValidationError`` / ``PayloadTooLarge``, and nothing is saved."""

import pytest
from django.core.exceptions import ValidationError
from hypothesis import example, given

from stash import processing
from stash.core.exceptions import PayloadTooLarge
from stash.models import Content

from .conftest import count, rolled_back
from .strategies import payloads, same_json

pytestmark = pytest.mark.django_db


@given(payload=payloads)
@example(payload={"text": "\ud800"})
@example(payload={"n": 10**1000})
@example(payload={"n": float("inf")})
def test_processing_submit_stores_exactly_or_refuses(stashes, payload):
    with rolled_back():
        try:
            item, created = processing.submit(stashes["audit"], payload)
        except (ValidationError, PayloadTooLarge):
            assert count() == 0
            return
        assert created
        assert same_json(payload, Content.objects.get(pk=item.pk).payload)


@given(payload=payloads)
@example(payload={"text": "\x00"})
def test_the_orm_stores_exactly_or_refuses(stashes, payload):
    with rolled_back():
        try:
            item = Content.objects.create(stash=stashes["open"], payload=payload)
        except ValidationError:
            assert count() == 0
            return
        assert same_json(payload, Content.objects.get(pk=item.pk).payload)
