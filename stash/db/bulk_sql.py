"""Bulk writes the ORM makes slow: row updates by ``UPDATE ... FROM (VALUES ...)``, inserts by COPY
or, for a few rows, one ``INSERT ... VALUES`` (PostgreSQL), or one prepared ``INSERT`` run for every
row (SQLite).

Django's ``bulk_update`` writes one ``CASE WHEN pk = ...`` per field and row, and compiling that
expression tree costs more than the whole judging run of a batch; on PostgreSQL ``bulk_create``
quotes every JSON value into an array literal. These build the statements directly; values go
through each field's own ``pre_save`` (inserts) and ``get_db_prep_save``, so they are stored exactly
as the ORM would store them (``tests/db/test_bulk_sql.py`` compares the two on SQLite and PostgreSQL).

Where they cannot, they hand the work to ``bulk_update`` / ``bulk_create``: on other databases, on
SQLite before 3.33 (no ``UPDATE ... FROM``), with a driver that has no COPY, and when a value is an
expression (``F(...)``, ``Value(...)``: the ORM compiles those).
"""

import copy as copying
import math
import sqlite3
from operator import attrgetter

from django.db import connections, models, transaction
from django.db.models import F

from stash.db.compat import copy_rows

#: PostgreSQL's protocol counts a statement's parameters in 16 bits.
POSTGRESQL_MAX_PARAMS = 65_535
#: Fewer rows go in one INSERT: COPY takes a round trip more, and pays off only on larger batches.
COPY_MIN_ROWS = 20


def writes_by_sql(connection):
    """True where ``update_rows`` writes its own SQL: PostgreSQL, and SQLite from 3.33."""
    return connection.vendor == "postgresql" or (
        connection.vendor == "sqlite" and sqlite3.sqlite_version_info >= (3, 33)
    )


def rows_per_statement(connection, columns, objs, shared=0, requested=500):
    """How many of ``objs`` one statement may write with a parameter for each of ``columns`` (fields)
    per row and ``shared`` more per statement: ``requested`` or fewer, as far as the database's
    limit on parameters allows (``connection.ops.bulk_batch_size``; 65,535 on PostgreSQL)."""
    per_row = len(columns)
    # bulk_batch_size counts rows of ``per_row`` parameters: the shared ones take the room of
    # ``padding`` rows more (and a database without a limit answers with the number of rows).
    padding = math.ceil(shared / per_row)
    allowed = connection.ops.bulk_batch_size(columns, [*objs, *[None] * padding]) - padding
    if connection.vendor == "postgresql":
        allowed = min(allowed, (POSTGRESQL_MAX_PARAMS - shared) // per_row)
    return max(1, min(requested, allowed))


def update_rows(model, objs, fields, constants=None, add=False, using="default", batch_size=500):
    """Write ``fields`` of each of ``objs`` (model instances, each once) by primary key; return the
    rows matched, as ``bulk_update`` does::

        update_rows(Content, items, ["status", "reason"], constants={"updated_at": now})
        update_rows(HookConfig, deltas, ["runs_count"], add=True)

    ``constants`` ({field name: value}) are set on every row alike, as one parameter each;
    with ``add``, the values of ``fields`` are added to the stored ones instead (counters).
    ``objs`` are left as they are. The batches run in one transaction; an object without a primary
    key raises ``ValueError`` before anything is written, and database errors propagate as Django's.
    """
    objs = list(objs)
    if not objs:
        return 0
    if any(obj.pk is None for obj in objs):
        raise ValueError("All update_rows() objects must have a primary key set.")
    constants = constants or {}
    connection = connections[using]
    meta = model._meta
    columns = [meta.pk] + [meta.get_field(name) for name in fields]
    fixed = [(meta.get_field(name), value) for name, value in constants.items()]
    shared = rows = None
    if writes_by_sql(connection):
        shared = _prepared(fixed, connection)
        rows = _prepared_rows(objs, columns, _stored_values, connection)
    if shared is None or rows is None:
        return update_rows_by_orm(model, objs, fields, constants, add, using, batch_size)
    size = rows_per_statement(connection, columns, objs, len(shared), batch_size)
    changed = 0
    with transaction.atomic(using=using, savepoint=False), connection.cursor() as cursor:
        for start in range(0, len(rows), size):
            batch = rows[start : start + size]
            cursor.execute(
                _update_sql(model, columns, [field for field, _value in fixed], add, len(batch), connection),
                shared + [value for row in batch for value in row],
            )
            changed += cursor.rowcount
    return changed


def update_rows_by_orm(model, objs, fields, constants=None, add=False, using="default", batch_size=500):
    """``update_rows`` through ``bulk_update`` (``F(field) + value`` with ``add``), on any database.

    ``update_rows`` falls back to it where it cannot write its own SQL; call it to get that path
    anywhere (the tests do). ``objs`` are left as they are: copies carry the values.
    """
    objs = list(objs)
    if not objs:
        return 0
    constants = constants or {}
    meta = model._meta
    rows = []
    for obj in objs:
        row = copying.copy(obj)
        for name in fields if add else ():
            attname = meta.get_field(name).attname
            setattr(row, attname, F(name) + getattr(obj, attname))
        for name, value in constants.items():
            setattr(row, meta.get_field(name).attname, value)
        rows.append(row)
    return model._base_manager.using(using).bulk_update(rows, [*fields, *constants], batch_size=batch_size)


def _prepared(pairs, connection):
    """``[(field, value)]`` as the database takes the values, or None if one is an expression."""
    prepared = []
    for field, value in pairs:
        if hasattr(value, "resolve_expression"):
            return None
        prepared.append(field.get_db_prep_save(value, connection))
    return prepared


def _prepared_rows(objs, columns, values_of, connection):
    """The rows of ``objs`` for ``columns``, prepared, or None if a value is an expression
    (see ``_prepared_columns``)."""
    prepared = _prepared_columns(objs, columns, values_of, connection)
    return None if prepared is None else list(zip(*prepared, strict=True))


def _prepared_columns(objs, columns, values_of, connection):
    """Each of ``columns``' values for ``objs``, prepared, or None if a value is an expression.

    ``values_of(objs, field)`` lists the column's values. They are prepared a column at a time,
    and a value met again in it (the same object: a default, the stash of every row) only once."""
    prepared_columns = []
    for field in columns:
        values = values_of(objs, field)  # holds each value, so no id is reused while this runs
        distinct = {id(value): value for value in values}
        if any(hasattr(value, "resolve_expression") for value in distinct.values()):
            return None
        prepared = {key: field.get_db_prep_save(value, connection) for key, value in distinct.items()}
        prepared_columns.append([prepared[id(value)] for value in values])
    return prepared_columns


def _stored_values(objs, field):
    return list(map(attrgetter(field.attname), objs))


def _inserted_values(objs, field):
    """What ``field.pre_save(obj, add=True)`` gives for each of ``objs``, read directly where the
    field does not override it."""
    if type(field).pre_save is models.Field.pre_save:
        return _stored_values(objs, field)
    return [field.pre_save(obj, add=True) for obj in objs]


def _update_sql(model, columns, fixed, add, count, connection):
    quote = connection.ops.quote_name
    table = quote(model._meta.db_table)
    row = "(" + ", ".join(["%s"] * len(columns)) + ")"

    def value(index, field):
        # Both databases name the columns of VALUES column1, column2, ... PostgreSQL types them
        # from their literals (an all-NULL column would be text), so they are cast to the field's type.
        name = f"v.column{index + 1}"
        return f"{name}::{field.db_type(connection)}" if connection.vendor == "postgresql" else name

    def assigned(index, field):
        column = quote(field.column)
        return f"{column} = {table}.{column} + {value(index, field)}" if add else f"{column} = {value(index, field)}"

    assignments = [assigned(index, field) for index, field in enumerate(columns) if index]
    assignments += [f"{quote(field.column)} = %s" for field in fixed]
    # The statement starts with UPDATE: Python's sqlite3 counts rows only for statements that do.
    return (
        f"UPDATE {table} SET {', '.join(assignments)} FROM (VALUES {', '.join([row] * count)}) AS v "
        f"WHERE {table}.{quote(columns[0].column)} = {value(0, columns[0])}"
    )


def insert_rows(model, objs, using="default"):
    """Insert ``objs`` as ``bulk_create`` does and return how many: on PostgreSQL by COPY from
    ``COPY_MIN_ROWS`` rows with a driver that has it (psycopg 3), by one ``INSERT ... VALUES`` below;
    on SQLite by one prepared ``INSERT`` run for every row from ``COPY_MIN_ROWS`` rows; by
    ``bulk_create`` otherwise.

    As with ``bulk_create``: primary keys with a default are filled in, ``auto_now`` fields set, no
    signal is sent, and the objects count as saved; primary keys the database generates are not read
    back. Database errors propagate as Django's.
    """
    return prepare_insert(model, objs, using)()


def prepare_insert(model, objs, using="default"):
    """``insert_rows`` in two steps: this prepares the values (and fills in the keys and times),
    the callable it returns inserts them. A caller that opens a transaction for the insert prepares
    first: on SQLite a writing transaction holds the database's one write lock, and every other
    writer (a worker claiming a live save) waits for it to end."""
    objs = list(objs)
    if not objs:
        return lambda: 0
    connection = connections[using]
    few = len(objs) < COPY_MIN_ROWS
    # PostgreSQL: COPY, or for a few rows one INSERT ... VALUES (Django's bulk_create there sends
    # each column as an array literal, and quoting JSON into one costs more than the insert).
    # SQLite: one prepared INSERT run for every row.
    by_sql = connection.vendor == "postgresql" or (connection.vendor == "sqlite" and not few)
    fields = _copy_fields(model, objs) if by_sql else None
    columns = fields and _prepared_columns(objs, fields, _inserted_values, connection)
    if not columns:
        return lambda: len(model._base_manager.using(using).bulk_create(objs))
    # A column NULL in every row is left out: the database writes NULL there, with less to send.
    kept = [(field, column) for field, column in zip(fields, columns, strict=True) if not _null(field, column)]
    fields = [field for field, _column in kept]
    rows = list(zip(*(column for _field, column in kept), strict=True))
    quote = connection.ops.quote_name
    into = f"{quote(model._meta.db_table)} ({', '.join(quote(field.column) for field in fields)})"

    def insert():
        with transaction.atomic(using=using, savepoint=False), connection.cursor() as cursor:
            row = f"({', '.join(['%s'] * len(fields))})"
            if connection.vendor == "sqlite":
                cursor.executemany(f"INSERT INTO {into} VALUES {row}", rows)
                inserted = len(rows)
            elif few:
                cursor.execute(f"INSERT INTO {into} VALUES {', '.join([row] * len(rows))}", sum(rows, ()))
                inserted = len(rows)
            else:
                inserted = copy_rows(cursor, f"COPY {into} FROM STDIN", rows)
        if inserted is None:  # the driver has no COPY
            return len(model._base_manager.using(using).bulk_create(objs))
        for obj in objs:
            obj._state.adding, obj._state.db = False, using
        return inserted

    return insert


def _null(field, column):
    """True when the database, left to itself, writes what ``column`` holds for ``field``: NULL."""
    return field.null and field.db_default is models.NOT_PROVIDED and all(value is None for value in column)


def _copy_fields(model, objs):
    """The columns COPY writes for ``objs``, filling in primary keys that have a default as
    ``bulk_create`` does; None when COPY cannot do what ``bulk_create`` would."""
    meta = model._meta
    if meta.parents:
        return None
    pk = meta.pk
    for obj in objs:
        if obj.pk is None and pk.has_default():
            obj.pk = pk.get_default()
    fields = [field for field in meta.concrete_fields if not field.generated]
    with_pk = sum(obj.pk is not None for obj in objs)
    if with_pk == len(objs):
        return fields
    if with_pk == 0 and isinstance(pk, models.AutoField):
        return [field for field in fields if field is not pk]
    return None


def commit_unsynced(using="default"):
    """Inside a transaction on PostgreSQL: its commit returns before the write-ahead log reaches the
    disk (``SET LOCAL synchronous_commit TO OFF``), as for a sample that may lose its last moment if
    PostgreSQL itself crashes, never its consistency. Elsewhere, and outside a transaction, nothing."""
    connection = connections[using]
    if connection.vendor == "postgresql" and connection.in_atomic_block:
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit TO OFF")
