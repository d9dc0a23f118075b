"""Bulk writes the ORM makes slow: row updates by ``UPDATE ... FROM (VALUES ...)``, inserts by COPY.

Django's ``bulk_update`` writes one ``CASE WHEN pk = ...`` per field and row, and compiling that
expression tree costs more than the whole judging run of a batch; on PostgreSQL ``bulk_create``
quotes every JSON value into an array literal. These build the statements directly; values go
through each field's own ``get_db_prep_save``, so they are stored exactly as the ORM would store
them. Other databases fall back to ``bulk_update`` / ``bulk_create``.
"""
import json

from django.db import connections
from django.db.models import F

_SUPPORTED = {"postgresql", "sqlite"}


def update_rows(model, objs, fields, constants=None, add=False, using="default", batch_size=500):
    """Write ``fields`` of each of ``objs`` (model instances) by primary key; return rows changed.

    ``constants`` ({field name: value}) are set on every row alike, as one parameter each;
    with ``add``, the values of ``fields`` are added to the stored ones instead (counters).
    """
    objs = list(objs)
    if not objs:
        return 0
    constants = constants or {}
    connection = connections[using]
    if connection.vendor not in _SUPPORTED:
        return _update_by_orm(model, objs, fields, constants, add, using, batch_size)
    meta = model._meta
    columns = [meta.pk] + [meta.get_field(name) for name in fields]
    fixed = [(meta.get_field(name), value) for name, value in constants.items()]
    changed = 0
    with connection.cursor() as cursor:
        for start in range(0, len(objs), batch_size):
            batch = objs[start:start + batch_size]
            sql, params = _statement(model, columns, fixed, add, batch, connection)
            cursor.execute(sql, params)
            changed += cursor.rowcount
    return changed


def _update_by_orm(model, objs, fields, constants, add, using, batch_size):
    manager = model._base_manager.using(using)
    if add:
        return sum(manager.filter(pk=obj.pk).update(**{name: F(name) + getattr(obj, name) for name in fields})
                   for obj in objs)
    for obj in objs:
        for name, value in constants.items():
            setattr(obj, model._meta.get_field(name).attname, value)
    return manager.bulk_update(objs, [*fields, *constants], batch_size=batch_size)


def _statement(model, columns, fixed, add, batch, connection):
    quote = connection.ops.quote_name
    table = quote(model._meta.db_table)
    names = [f"c{index}" for index in range(len(columns))]
    row = "(" + ", ".join(["%s"] * len(columns)) + ")"
    params = []
    for obj in batch:
        for field in columns:
            params.append(field.get_db_prep_save(getattr(obj, field.attname), connection))

    def value(index, field):
        # PostgreSQL types a VALUES column from its literals; an all-NULL column would be text.
        return f"v.{names[index]}::{field.db_type(connection)}" if connection.vendor == "postgresql" \
            else f"v.{names[index]}"

    def assigned(index, field):
        column = quote(field.column)
        return f"{column} = {table}.{column} + {value(index, field)}" if add else f"{column} = {value(index, field)}"

    assignments = [assigned(index, field) for index, field in enumerate(columns) if index]
    assignments += [f"{quote(field.column)} = %s" for field, _value in fixed]
    params += [field.get_db_prep_save(constant, connection) for field, constant in fixed]
    sql = (f"WITH v({', '.join(names)}) AS (VALUES {', '.join([row] * len(batch))}) "
           f"UPDATE {table} SET {', '.join(assignments)} FROM v "
           f"WHERE {table}.{quote(columns[0].column)} = {value(0, columns[0])}")
    return sql, params


# Fewer rows go in one INSERT: COPY takes a round trip more, and pays off only on larger batches.
COPY_MIN_ROWS = 20


def insert_rows(model, objs, using="default"):
    """Insert ``objs`` (primary keys not returned): COPY on PostgreSQL (from ``COPY_MIN_ROWS``
    rows), ``bulk_create`` otherwise."""
    objs = list(objs)
    if not objs:
        return
    connection = connections[using]
    if connection.vendor != "postgresql" or len(objs) < COPY_MIN_ROWS:
        model._base_manager.using(using).bulk_create(objs)
        return
    fields = [f for f in model._meta.concrete_fields if not f.primary_key]
    quote = connection.ops.quote_name
    columns = ", ".join(quote(f.column) for f in fields)
    copy_sql = f"COPY {quote(model._meta.db_table)} ({columns}) FROM STDIN"
    with connection.cursor() as cursor, cursor.cursor.copy(copy_sql) as copy:
        for obj in objs:
            copy.write_row([_copy_value(f, getattr(obj, f.attname), connection) for f in fields])


def _copy_value(field, value, connection):
    if value is not None and field.get_internal_type() == "JSONField":
        return json.dumps(value, cls=field.encoder)
    return field.get_db_prep_save(value, connection)
