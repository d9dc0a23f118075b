"""stash.compat, the one read of another library's private state: pinned to the Django that
requirements.txt installs, and checked against what it stands for."""
import re
from pathlib import Path

import django
import pytest
from django.db import transaction

from stash.compat import on_commit_pending

pytestmark = pytest.mark.django_db(transaction=True)

# The Django release whose private ``connection.run_on_commit`` ``on_commit_pending`` was read
# against. Upgrading Django (requirements.txt) fails this test: read Django's on_commit,
# savepoint_rollback and run_and_clear_commit_hooks again, then move this pin.
CHECKED_DJANGO = (5, 2)


def test_requirements_install_the_django_that_on_commit_pending_was_checked_against():
    pinned = re.search(r"^Django==(\S+)$", (Path(__file__).parents[1] / "requirements.txt").read_text(), re.MULTILINE)
    assert pinned is not None, "requirements.txt pins no Django version"
    assert django.get_version() == pinned.group(1)
    assert django.VERSION[:2] == CHECKED_DJANGO


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
