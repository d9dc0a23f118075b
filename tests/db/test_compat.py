"""stash.db.compat, the reads of other libraries' private state: each pinned to the version that
requirements.txt installs, and checked against what it stands for."""

import pytest
from django.db import transaction

from stash.db.compat import on_commit_pending

from ..support.pins import assert_checked_against

pytestmark = pytest.mark.django_db(transaction=True)

#: What ``on_commit_pending`` was read against: Django's ``connection.run_on_commit``, the list of
#: ``(savepoint ids, callback, robust)`` that ``on_commit`` appends to, ``savepoint_rollback`` prunes and
#: ``run_and_clear_commit_hooks`` empties.
CHECKED_WITH = {"Django": "5.2.19"}


def test_on_commit_pending_was_checked_against_the_pinned_django():
    assert_checked_against(CHECKED_WITH, "stash.db.compat.on_commit_pending")


class Abort(Exception):
    """Raised to roll a block back."""


def callback():
    """A callback that would do nothing if it ran."""


def test_a_callback_is_pending_until_its_transaction_commits():
    assert not on_commit_pending(callback)
    with transaction.atomic():
        transaction.on_commit(callback)
        assert on_commit_pending(callback)
    assert not on_commit_pending(callback)


def test_a_rollback_drops_the_pending_callback():
    with pytest.raises(Abort), transaction.atomic():
        transaction.on_commit(callback)
        raise Abort
    assert not on_commit_pending(callback)


def test_a_savepoint_rollback_drops_only_the_callbacks_registered_in_it():
    def inner():
        """Another callback that would do nothing."""

    with transaction.atomic():
        transaction.on_commit(callback)
        with pytest.raises(Abort), transaction.atomic():
            transaction.on_commit(inner)
            assert on_commit_pending(inner)
            raise Abort
        assert not on_commit_pending(inner)
        assert on_commit_pending(callback)
