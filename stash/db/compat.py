"""The one place stash reads another library's private state: each read is pinned by a test
(tests/db/test_compat.py, tests/db/test_bulk_sql.py) to the version that requirements.txt installs."""

from django.db import connections

try:
    import psycopg
except ImportError:  # psycopg 2, or no PostgreSQL driver: nothing is prepared
    psycopg = None


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


def preparing_cursor(connection):
    """A cursor of Django's (queries logged, errors made Django's) on ``connection`` whose statements
    PostgreSQL prepares: a query run again on the same connection is planned once, not each time.

    On PostgreSQL with psycopg 3 its driver cursor binds parameters on the server, and psycopg
    prepares a statement once it has run ``PREPARE_THRESHOLD`` times on a connection. Django turns
    psycopg's preparing off (its cursors bind on the client and never prepare, and it sets the
    connection's ``prepare_threshold`` to None); this sets the threshold back on the connection, which
    only these cursors heed, unless the database's ``OPTIONS`` name a ``prepare_threshold`` (``None``
    there keeps every statement unprepared, as PgBouncer before 1.21 in transaction mode needs).
    Elsewhere it is the ordinary cursor.

    It builds the cursor as Django's ``connection.cursor()`` does (``_prepare_cursor``:
    ``make_debug_cursor`` when queries are logged, ``make_cursor`` otherwise) around a driver cursor of
    another class than the one Django picks.
    """
    if connection.vendor != "postgresql" or psycopg is None:
        return connection.cursor()
    connection.ensure_connection()
    driver_connection = connection.connection
    if not isinstance(driver_connection, psycopg.Connection):
        return connection.cursor()
    if "prepare_threshold" not in connection.settings_dict["OPTIONS"]:
        driver_connection.prepare_threshold = PREPARE_THRESHOLD
    connection.validate_thread_sharing()
    driver = psycopg.Cursor(driver_connection)
    return connection.make_debug_cursor(driver) if connection.queries_logged else connection.make_cursor(driver)


#: Runs of a statement on a connection before ``preparing_cursor`` has PostgreSQL prepare it (psycopg's default).
PREPARE_THRESHOLD = 5
