"""stash.db.bulk_sql against Django's own ``bulk_update`` and ``bulk_create``, on the backend this run uses.

Each property test writes the same values to twin rows, once by Django and once by ``bulk_sql``
(``update_rows``, and its ORM path ``update_rows_by_orm``), and reads every twin back through the
ORM: the rows must be identical, and so must the counts returned.

    STASH_PROPERTY_EXAMPLES   examples per property test (default 25)
"""

import datetime as dt
import math
import os
from itertools import count
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.models import F, JSONField, Value
from django.test.utils import CaptureQueriesContext
from hypothesis import HealthCheck, given, settings, strategies as st

from stash.db import bulk_sql, compat
from stash.models import Content, HookConfig, PipelineRun

from ..property.strategies import integers
from ..support.pins import assert_checked_against

ROOT = Path(__file__).resolve().parents[2]

#: What ``compat.copy_rows`` was checked against: Django's ``CursorWrapper`` keeps the driver's
#: cursor in ``.cursor`` and its connection in ``.db`` (whose ``wrap_database_errors`` turns the
#: driver's errors into Django's); psycopg's ``Cursor.copy``, ``Copy.write_row``, and ``rowcount``
#: after a COPY. Whoever changes these pins re-checks those and then updates this.
COPY_CHECKED_WITH = {"Django": "5.2.19", "psycopg": "3.3.9"}

examples = settings(
    max_examples=int(os.environ.get("STASH_PROPERTY_EXAMPLES", "25")),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def on_the_database(test):
    """A property test ``test(world, data)`` on the database; each example draws what it needs from ``data``."""
    return pytest.mark.django_db(examples(given(data=st.data())(test)))


def sizes(data, rows, batch_size):
    """How many rows (0 to ``rows``) and how many per batch (1 to ``batch_size``)."""
    return data.draw(st.integers(0, rows), label="rows"), data.draw(st.integers(1, batch_size), label="batch_size")


# Text either database stores as given: any character UTF-8 can carry but NUL.
texts = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=30)
json_values = st.recursive(
    st.none() | st.booleans() | integers | st.floats(allow_nan=False, allow_infinity=False) | texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=10,
)
ZONES = [
    dt.timezone.utc,
    dt.timezone(dt.timedelta(hours=-12)),
    dt.timezone(dt.timedelta(hours=5, minutes=45)),
    ZoneInfo("America/St_Johns"),
    ZoneInfo("Asia/Kolkata"),
    ZoneInfo("Europe/Berlin"),
]
# Hypothesis takes naive bounds and makes each datetime aware in one of ``timezones``.
datetimes = st.datetimes(
    min_value=dt.datetime(1901, 1, 1),  # noqa: DTZ001
    max_value=dt.datetime(2200, 12, 31),  # noqa: DTZ001
    timezones=st.sampled_from(ZONES),
)
big_counts = st.integers(0, 2**62 - 1)  # a counter plus a delta stays within a signed 64-bit column
#: Values for the fields of Content the workers and reviewers write; FKs as an index into the fixture's rows.
CONTENT_VALUES = {
    "payload": st.dictionaries(texts, json_values, max_size=4),
    "original_payload": st.none() | json_values,  # None is SQL NULL; a JSON null inside a value stays one
    "status": st.sampled_from(Content.Status.values),
    "reason": texts,
    "decided_by": st.none() | st.integers(0, 1),
    "processed_revision": st.none() | st.integers(0, 2**31 - 1),
    "attempts": st.integers(0, 2**15 - 1),
    "lease_until": st.none() | datetimes,
    "lease_token": st.none() | st.uuids(),
    "queue_seq": st.none() | st.integers(0, 2**63 - 1),
    "source": st.sampled_from(Content.Source.values),
    "overturned": st.booleans(),
    "reviewed_by": st.none() | st.integers(0, 1),
    "reviewed_at": st.none() | datetimes,
    "review_note": texts,
    "updated_at": datetimes,
    "processed_at": st.none() | datetimes,
}
RUN_VALUES = {
    "content": st.integers(0, 1),
    "revision": st.integers(0, 2**31 - 1),
    "config_version": st.integers(0, 2**31 - 1),
    "outcome": st.sampled_from(Content.Status.values),
    "reason": texts,
    "started_at": datetimes,
    "finished_at": datetimes,
    "duration_ms": st.floats(allow_nan=False, allow_infinity=False),
    "trail": json_values.filter(lambda value: value is not None),
}
UPDATES = ("bulk_update", "update_rows", "update_rows_by_orm")


@pytest.fixture
def world(make_stash, django_user_model):
    """A stash, and the rows the foreign keys point at: two hook configs, two users, two contents."""
    stash = make_stash("bulk", hooks=[("require_fields", {"fields": ["a"]}), ("require_fields", {"fields": ["b"]})])
    users = [django_user_model.objects.create_user(name) for name in ("ann", "bob")]
    contents = twins(stash, 2)
    return {
        "stash": stash,
        "decided_by": list(stash.hooks.all()),
        "reviewed_by": users,
        "content": contents,
        "positions": count(100),
    }


def twins(stash, number):
    return Content.objects.bulk_create(
        [Content(stash=stash, payload={"n": n}, content_hash=str(n)) for n in range(number)]
    )


def resolved(model, values, world):
    """``values`` ({field name: value}) with each foreign key's index into ``world`` made that row's key."""
    return {
        name: world[name][value].pk if model._meta.get_field(name).is_relation and value is not None else value
        for name, value in values.items()
    }


def assign(model, obj, values):
    for name, value in values.items():
        setattr(obj, model._meta.get_field(name).attname, value)


def stored(model, pks, skip=("id",)):
    """The rows of ``pks``, in that order, as dicts read back through the ORM (``skip`` left out)."""
    names = [field.attname for field in model._meta.concrete_fields if field.attname not in skip]
    rows = model.objects.in_bulk(pks)
    return [{name: getattr(rows[pk], name) for name in names} for pk in pks]


def updates_run(captured):
    return len([query for query in captured if query["sql"].startswith("UPDATE")])


@on_the_database
def test_update_rows_stores_what_bulk_update_stores(world, data):
    number, batch_size = sizes(data, 12, 5)
    fields = data.draw(st.lists(st.sampled_from(sorted(CONTENT_VALUES)), min_size=1, unique=True), label="fields")
    others = sorted(set(CONTENT_VALUES) - set(fields))
    constant_names = data.draw(
        st.lists(st.sampled_from(others), max_size=3, unique=True) if others else st.just([]), label="constants"
    )
    constants = {name: data.draw(CONTENT_VALUES[name], label=name) for name in constant_names}
    rows = data.draw(
        st.lists(
            st.fixed_dictionaries({name: CONTENT_VALUES[name] for name in fields}), min_size=number, max_size=number
        ),
        label="values",
    )
    rows, constants = [resolved(Content, row, world) for row in rows], resolved(Content, constants, world)
    written = {*fields, *constants}
    with transaction.atomic():  # a savepoint: an example that fails leaves nothing for the next
        objs = {way: twins(world["stash"], number) for way in UPDATES}
        for way in UPDATES:
            for obj, values in zip(objs[way], rows, strict=True):
                assign(Content, obj, {**values, **(constants if way == "bulk_update" else {})})
        changed = {
            "bulk_update": Content.objects.bulk_update(objs["bulk_update"], sorted(written), batch_size=batch_size)
        }
        with CaptureQueriesContext(connection) as queries:
            changed["update_rows"] = bulk_sql.update_rows(
                Content, objs["update_rows"], fields, constants, batch_size=batch_size
            )
        changed["update_rows_by_orm"] = bulk_sql.update_rows_by_orm(
            Content, objs["update_rows_by_orm"], fields, constants, batch_size=batch_size
        )
        skip = {"id", "created_at", "updated_at"} - written  # set when the twins were made, a moment apart
        back = {way: stored(Content, [obj.pk for obj in objs[way]], skip) for way in UPDATES}
    assert changed == dict.fromkeys(UPDATES, number)
    assert back["update_rows"] == back["bulk_update"] == back["update_rows_by_orm"]
    assert updates_run(queries.captured_queries) == math.ceil(number / batch_size)


@on_the_database
def test_update_rows_adds_to_counters_as_bulk_update_with_f_does(world, data):
    number, batch_size = sizes(data, 10, 4)
    fields = data.draw(st.lists(st.sampled_from(HookConfig.COUNTER_FIELDS), min_size=1, unique=True), label="fields")
    starts = data.draw(
        st.lists(
            st.fixed_dictionaries(dict.fromkeys(HookConfig.COUNTER_FIELDS, big_counts)),
            min_size=number,
            max_size=number,
        ),
        label="starts",
    )
    deltas = data.draw(
        st.lists(st.fixed_dictionaries(dict.fromkeys(fields, big_counts)), min_size=number, max_size=number),
        label="deltas",
    )
    constants = data.draw(
        st.fixed_dictionaries({}, optional={"enabled": st.booleans(), "label": texts}), label="constants"
    )
    with transaction.atomic():
        configs = {
            way: HookConfig.objects.bulk_create(
                [
                    HookConfig(stash=world["stash"], hook="require_fields", position=next(world["positions"]), **start)
                    for start in starts
                ]
            )
            for way in UPDATES
        }
        for config, delta in zip(configs["bulk_update"], deltas, strict=True):
            assign(HookConfig, config, {**{name: F(name) + value for name, value in delta.items()}, **constants})
        changed = {
            "bulk_update": HookConfig.objects.bulk_update(
                configs["bulk_update"], [*fields, *constants], batch_size=batch_size
            )
        }
        for way in UPDATES[1:]:
            given_deltas = [
                HookConfig(pk=config.pk, **delta) for config, delta in zip(configs[way], deltas, strict=True)
            ]
            changed[way] = getattr(bulk_sql, way)(
                HookConfig, given_deltas, fields, constants, add=True, batch_size=batch_size
            )
        back = {
            way: stored(
                HookConfig, [config.pk for config in configs[way]], skip=("id", "position", "created_at", "updated_at")
            )
            for way in UPDATES
        }
    assert changed == dict.fromkeys(UPDATES, number)
    assert back["update_rows"] == back["bulk_update"] == back["update_rows_by_orm"]
    assert [row["runs_count"] for row in back["update_rows"]] == [
        start["runs_count"] + delta.get("runs_count", 0) for start, delta in zip(starts, deltas, strict=True)
    ]


@on_the_database
def test_insert_rows_stores_what_bulk_create_stores(world, data):
    # From fewer rows than COPY_MIN_ROWS (an INSERT) to more (COPY, on PostgreSQL).
    number = data.draw(st.integers(0, bulk_sql.COPY_MIN_ROWS + 5), label="rows")
    rows = data.draw(st.lists(st.fixed_dictionaries(RUN_VALUES), min_size=number, max_size=number), label="values")
    with transaction.atomic():
        back, inserted = {}, {}
        for way, insert in (
            ("bulk_create", lambda objs: len(PipelineRun.objects.bulk_create(objs))),
            ("insert_rows", lambda objs: bulk_sql.insert_rows(PipelineRun, objs)),
        ):
            objs = [PipelineRun() for _values in rows]
            for obj, values in zip(objs, rows, strict=True):
                assign(PipelineRun, obj, resolved(PipelineRun, values, world))
            after = PipelineRun.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
            inserted[way] = insert(objs)
            back[way] = stored(
                PipelineRun, list(PipelineRun.objects.filter(pk__gt=after).order_by("pk").values_list("pk", flat=True))
            )
            assert all(not obj._state.adding for obj in objs)
    assert inserted == {"bulk_create": number, "insert_rows": number}
    assert back["insert_rows"] == back["bulk_create"]


@on_the_database
def test_insert_rows_fills_in_keys_and_times_as_bulk_create_does(world, data):
    number = data.draw(st.sampled_from([1, bulk_sql.COPY_MIN_ROWS, bulk_sql.COPY_MIN_ROWS + 3]), label="rows")
    values = {
        name: CONTENT_VALUES[name]
        for name in (
            "payload",
            "original_payload",
            "status",
            "reason",
            "queue_seq",
            "overturned",
            "reviewed_by",
            "processed_at",
        )
    }
    rows = data.draw(
        st.lists(st.fixed_dictionaries({**values, "content_hash": texts}), min_size=number, max_size=number),
        label="values",
    )
    with transaction.atomic():
        objs, inserted, back = {}, {}, {}
        for way, insert in (
            ("bulk_create", lambda items: len(Content.objects.bulk_create(items))),
            ("insert_rows", lambda items: bulk_sql.insert_rows(Content, items)),
        ):
            objs[way] = [Content(stash=world["stash"]) for _values in rows]
            for obj, given_values in zip(objs[way], rows, strict=True):
                assign(Content, obj, resolved(Content, given_values, world))
                obj.id = None  # a key left to its default, as bulk_create fills it in
            before = dt.datetime.now(dt.timezone.utc)
            inserted[way] = insert(objs[way])
            after = dt.datetime.now(dt.timezone.utc)
            back[way] = stored(Content, [obj.pk for obj in objs[way]], skip=("id", "created_at", "updated_at"))
            made = Content.objects.filter(pk__in=[obj.pk for obj in objs[way]])
            assert made.filter(created_at__range=(before, after), updated_at__range=(before, after)).count() == number
    assert inserted == {"bulk_create": number, "insert_rows": number}
    assert back["insert_rows"] == back["bulk_create"]


@pytest.mark.django_db
def test_expressions_are_written_by_the_orm(world):
    """``F(...)`` and JSON's ``Value(None, JSONField())`` go as the ORM compiles them, on either path."""
    contents = {way: twins(world["stash"], 3) for way in ("bulk_update", "update_rows")}
    for objs in contents.values():
        for obj in objs:
            obj.attempts, obj.original_payload = F("attempts") + 2, Value(None, JSONField())
    Content.objects.bulk_update(contents["bulk_update"], ["attempts", "original_payload"])
    bulk_sql.update_rows(Content, contents["update_rows"], ["attempts", "original_payload"])
    back = {
        way: stored(Content, [obj.pk for obj in objs], skip=("id", "created_at", "updated_at"))
        for way, objs in contents.items()
    }
    assert back["update_rows"] == back["bulk_update"]
    assert {row["attempts"] for row in back["update_rows"]} == {2}

    runs = {
        way: [
            PipelineRun(
                content=world["content"][0],
                revision=1,
                config_version=1,
                outcome="accepted",
                started_at=world["content"][0].created_at,
                finished_at=world["content"][0].created_at,
                duration_ms=Value(1.5) * 2,
                trail=[n],
            )
            for n in range(bulk_sql.COPY_MIN_ROWS)
        ]
        for way in ("bulk_create", "insert_rows")
    }
    PipelineRun.objects.bulk_create(runs["bulk_create"])
    assert bulk_sql.insert_rows(PipelineRun, runs["insert_rows"]) == bulk_sql.COPY_MIN_ROWS
    assert (
        list(PipelineRun.objects.order_by("pk").values_list("duration_ms", "trail"))
        == [(3.0, [n]) for n in range(bulk_sql.COPY_MIN_ROWS)] * 2
    )


@pytest.mark.django_db
def test_update_rows_stays_within_the_databases_limit_on_parameters(world):
    """More rows than one statement may carry, however large the batch size asked for."""
    fields = sorted(set(CONTENT_VALUES) - {"decided_by", "reviewed_by", "processed_at"})
    constants = {"processed_at": None, "reviewed_by": None}
    columns = [Content._meta.pk] + [Content._meta.get_field(name) for name in fields]
    limit = connection.features.max_query_params or bulk_sql.POSTGRESQL_MAX_PARAMS  # 999 on SQLite
    per_statement = bulk_sql.rows_per_statement(connection, columns, range(10**5), len(constants), 10**5)
    assert per_statement * len(columns) + len(constants) <= limit
    assert per_statement <= connection.ops.bulk_batch_size(columns, range(10**5))
    assert per_statement > limit // len(columns) - 2  # not much less either
    objs = twins(world["stash"], per_statement + 1)
    for obj in objs:
        obj.status, obj.review_note = "accepted", "✓"
    with CaptureQueriesContext(connection) as queries:
        assert bulk_sql.update_rows(Content, objs, fields, constants, batch_size=10**5) == per_statement + 1
    assert updates_run(queries.captured_queries) == 2
    assert (
        Content.objects.filter(pk__in=[obj.pk for obj in objs], status="accepted", review_note="✓").count()
        == per_statement + 1
    )


@pytest.mark.django_db(transaction=True)
def test_a_failing_batch_undoes_the_batches_before_it(make_stash):
    stash = make_stash("bulk")
    objs = twins(stash, 4)
    for obj in objs:
        obj.reason = "judged"
    objs[3].status = None  # NOT NULL: the last batch fails
    with pytest.raises(IntegrityError):
        bulk_sql.update_rows(Content, objs, ["reason", "status"], batch_size=2)
    assert not Content.objects.filter(reason="judged").exists()


@pytest.mark.django_db
def test_update_rows_refuses_objects_without_a_primary_key(world):
    objs = twins(world["stash"], 2)
    objs[0].reason = "kept"
    with pytest.raises(ValueError, match="must have a primary key set"):
        bulk_sql.update_rows(Content, [objs[0], Content(id=None, stash=world["stash"])], ["reason"])
    assert not Content.objects.filter(reason="kept").exists()


@pytest.mark.django_db
def test_both_test_databases_take_the_sql_path():
    """So the comparisons above test ``bulk_sql``'s own statements, not the ORM twice."""
    assert bulk_sql.writes_by_sql(connection)


@pytest.mark.django_db
def test_insert_rows_copies_from_copy_min_rows_on_postgresql_and_runs_one_insert_for_every_row_on_sqlite(world):
    def statements(number, whole=False):
        runs = [
            PipelineRun(
                content=world["content"][0],
                revision=1,
                config_version=1,
                outcome="held",
                started_at=world["content"][0].created_at,
                finished_at=world["content"][0].created_at,
            )
            for _n in range(number)
        ]
        with CaptureQueriesContext(connection) as queries:
            assert bulk_sql.insert_rows(PipelineRun, runs) == number
        return [query["sql"] if whole else query["sql"].split(" (", 1)[0] for query in queries.captured_queries]

    table = connection.ops.quote_name(PipelineRun._meta.db_table)
    assert statements(bulk_sql.COPY_MIN_ROWS - 1) == [f"INSERT INTO {table}"]
    if connection.vendor == "postgresql":
        # A few rows in one INSERT ... VALUES, a value each: not bulk_create's arrays, whose JSON
        # literals cost more to quote than the insert.
        (few,) = statements(2, whole=True)
        assert ") VALUES (" in few and "UNNEST" not in few
    # COPY goes past Django's cursor, so Django records no statement for it; Django records an
    # executemany as one, with the number of rows.
    assert statements(bulk_sql.COPY_MIN_ROWS) == (
        [] if connection.vendor == "postgresql" else [f"{bulk_sql.COPY_MIN_ROWS} times: INSERT INTO {table}"]
    )
    assert PipelineRun.objects.filter(outcome="held").count() == 2 * bulk_sql.COPY_MIN_ROWS - 1 + 2 * (
        connection.vendor == "postgresql"
    )


@pytest.mark.django_db
def test_copy_rows_copies_where_the_driver_can_and_raises_djangos_errors(world):
    table = connection.ops.quote_name(HookConfig._meta.db_table)
    sql = (
        f"COPY {table} (stash_id, hook, label, params, enabled, mode, position, on_error, condition, "
        "timeout_ms, runs_count, kept_count, dropped_count, held_count, errors_count, time_total_us, "
        "overturned_count, created_at, updated_at) FROM STDIN"
    )
    now = world["stash"].created_at
    row = [
        world["stash"].pk,
        "require_fields",
        "copied",
        '{"fields": []}',
        True,
        "enforce",
        50,
        "inherit",
        "",
        2000,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        now,
        now,
    ]
    with connection.cursor() as cursor:
        copied = compat.copy_rows(cursor, sql, [row])
    if connection.vendor == "postgresql":  # psycopg 3
        assert copied == 1
        assert HookConfig.objects.get(label="copied").params == {"fields": []}
        with pytest.raises(IntegrityError, match="position"), transaction.atomic(), connection.cursor() as cursor:
            compat.copy_rows(cursor, sql, [row])  # the same position again
    else:
        assert copied is None
        assert not HookConfig.objects.filter(label="copied").exists()


def test_copy_rows_was_checked_against_the_pinned_django_and_psycopg():
    assert_checked_against(
        COPY_CHECKED_WITH, "stash.db.compat.copy_rows (and tests/db/test_bulk_sql.py, on PostgreSQL)"
    )


@pytest.mark.django_db(transaction=True)
def test_commit_unsynced_lets_one_transaction_commit_without_waiting_for_the_disk():
    def setting():
        with connection.cursor() as cursor:
            cursor.execute("SHOW synchronous_commit")
            return cursor.fetchone()[0]

    bulk_sql.commit_unsynced()  # outside a transaction: nothing, anywhere
    if connection.vendor != "postgresql":
        with transaction.atomic():
            bulk_sql.commit_unsynced()  # SQLite: nothing to set, and no error
        return
    assert setting() == "on"
    with transaction.atomic():
        bulk_sql.commit_unsynced()
        assert setting() == "off"
    assert setting() == "on"  # the next transaction waits for the disk again
