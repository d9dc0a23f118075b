"""The one place stash reads another library's private state: each read is pinned by a test
(tests/db/test_compat.py, tests/db/test_bulk_sql.py) to the version that requirements.txt installs."""

from django.db import connections


def on_commit_pending(callback, using="default") -> bool:
    """Whether ``callback``, registered with ``transaction.on_commit``, still waits for the current
    transaction on ``using`` to commit: not yet run, and not dropped by a rollback (of the
    transaction, or of the savepoint it was registered in).

    Django says this nowhere in public. This reads ``connection.run_on_commit`` (Django 5.2),
    the list of waiting callbacks that a commit empties and a rollback prunes.
    """
    return any(entry[1] is callback for entry in connections[using].run_on_commit)


def copy_rows(cursor, sql, rows):
    """Run ``sql`` (a ``COPY ... FROM STDIN``) with ``rows`` (lists of prepared values) on the
    driver's cursor under Django's ``cursor``; return the rows copied, or None, with nothing done,
    if the driver has no COPY (psycopg 3 has; psycopg 2 and the others have not).

    This reaches past Django's documented API, as Django's own ``CursorWrapper`` does: its ``cursor``
    is the driver's cursor, and ``db.wrap_database_errors`` makes the driver's errors Django's
    (``IntegrityError``, ...). ``tests/db/test_bulk_sql.py`` checks both and pins the Django and psycopg
    versions of ``requirements.txt`` they were checked against.
    """
    driver = getattr(cursor, "cursor", None)
    if not callable(getattr(driver, "copy", None)):
        return None
    with cursor.db.wrap_database_errors, driver.copy(sql) as copy:
        for row in rows:
            copy.write_row(row)
    return driver.rowcount
