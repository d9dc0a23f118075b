"""stash.db.compat.preparing_cursor: a cursor of Django's whose repeated statements PostgreSQL plans once.

It builds the cursor as Django's ``connection.cursor()`` does, around a driver cursor of its own
choosing, so it is pinned to the Django and psycopg it was read against."""

import pytest
from django.db import IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext

from stash.db.compat import preparing_cursor
from stash.models import Stash

from ..support.pins import assert_checked_against

pytestmark = pytest.mark.django_db(transaction=True)

CHECKED_WITH = {"Django": "5.2.19", "psycopg": "3.3.9"}


def prepared_statements():
    """How many statements the connection has prepared (PostgreSQL); None elsewhere, where none are."""
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE %s", ["%stash_stash%"])
        return cursor.fetchone()[0]


def test_preparing_cursor_was_checked_against_the_pinned_versions():
    assert_checked_against(CHECKED_WITH, "stash.db.compat.preparing_cursor")


def test_its_queries_are_logged_and_answer_as_any_cursor():
    Stash.objects.create(slug="prepared", name="Prepared")
    with CaptureQueriesContext(connection) as queries, preparing_cursor(connection) as cursor:
        cursor.execute("SELECT name FROM stash_stash WHERE slug = %s", ["prepared"])
        assert cursor.fetchone() == ("Prepared",)
    # PostgreSQL is sent the parameters apart from the statement, and Django logs it as sent.
    assert [query["sql"] for query in queries.captured_queries] == [
        "SELECT name FROM stash_stash WHERE slug = $1"
        if connection.vendor == "postgresql"
        else "SELECT name FROM stash_stash WHERE slug = 'prepared'"
    ]


def test_its_errors_are_djangos_and_leave_the_transaction_usable_after_a_savepoint():
    Stash.objects.create(slug="taken", name="Taken")
    with transaction.atomic():
        with pytest.raises(IntegrityError), transaction.atomic(), preparing_cursor(connection) as cursor:
            cursor.execute("INSERT INTO stash_stash (slug) VALUES (%s)", ["taken"])
        assert Stash.objects.filter(slug="taken").count() == 1


def test_a_statement_run_again_is_planned_once_on_postgresql():
    before = prepared_statements()
    for _run in range(6):
        with preparing_cursor(connection) as cursor:
            cursor.execute("SELECT name FROM stash_stash WHERE slug = %s", ["anything"])
    assert prepared_statements() == (None if before is None else before + 1)


def test_a_prepare_threshold_in_the_database_options_is_heeded():
    if connection.vendor != "postgresql":
        # Elsewhere nothing is prepared, and there is no threshold to name: the cursor is the ordinary one.
        with preparing_cursor(connection) as ours, connection.cursor() as theirs:
            assert type(ours.cursor) is type(theirs.cursor)
        return
    connection.close()
    options = connection.settings_dict["OPTIONS"]
    options["prepare_threshold"] = None  # as behind a transaction pooler
    try:
        for _run in range(8):
            with preparing_cursor(connection) as cursor:
                cursor.execute("SELECT name FROM stash_stash WHERE slug = %s", ["unprepared"])
        assert prepared_statements() in (0, None)
    finally:
        del options["prepare_threshold"]
        connection.close()
