"""A shadow's runs written as PostgreSQL reads them: the JSON the live workers gathered goes to the database
as it is, and one statement turns it into rows, leaving out those written already.

    written = insert_gathered(shadow_id, ['{"content_id": ..., "revision": 1, ...}', ...], limit, now)
    # [(live_verdict, shadow_verdict, agreed, duration_ms), ...] for each row written

A second's runs of a 100% shadow are a few hundred rows; built as model instances, prepared a value at a
time and copied, they cost the writing message more than the shadow's hooks cost to judge them. Here
Python joins strings, and the database does the rest (``jsonb_to_recordset``).
"""

from django.db import connections

#: The columns a gathered run carries (``shadow_runs._as_json``), with their types in the table.
GATHERED_COLUMNS = (
    ("content_id", "uuid"),
    ("revision", "integer"),
    ("live_verdict", "varchar"),
    ("live_decider", "varchar"),
    ("shadow_verdict", "varchar"),
    ("shadow_decider", "varchar"),
    ("shadow_reason", "text"),
    ("shadow_trail", "jsonb"),
    ("agreed", "boolean"),
    ("duration_ms", "double precision"),
)

_NAMES = ", ".join(name for name, _type in GATHERED_COLUMNS)
_TYPED = ", ".join(f"{name} {type_}" for name, type_ in GATHERED_COLUMNS)
# Each item and revision once, of items that still exist, not written already; the conflict clause covers a
# run written meanwhile by another message.
_INSERT = f"""
INSERT INTO stash_shadowrun (shadow_id, {_NAMES}, created_at)
SELECT %(shadow)s, {_NAMES}, %(now)s
FROM (
    SELECT DISTINCT ON (content_id, revision) * FROM jsonb_to_recordset(%(runs)s::jsonb) AS gathered({_TYPED})
) AS run
WHERE EXISTS (SELECT 1 FROM stash_content WHERE stash_content.id = run.content_id)
AND NOT EXISTS (
    SELECT 1 FROM stash_shadowrun AS written
    WHERE written.shadow_id = %(shadow)s AND written.content_id = run.content_id AND written.revision = run.revision
)
LIMIT %(limit)s
ON CONFLICT (shadow_id, content_id, revision) DO NOTHING
RETURNING live_verdict, shadow_verdict, agreed, duration_ms
"""


def available(using="default"):
    """True where ``insert_gathered`` works: PostgreSQL."""
    return connections[using].vendor == "postgresql"


def insert_gathered(shadow_id, runs, limit, now, using="default"):
    """Write ``runs`` (JSON objects as text, one per run: the ``GATHERED_COLUMNS``) for shadow ``shadow_id``,
    at most ``limit`` of them (None: all), each with ``created_at`` ``now``. Runs written already (the same
    shadow, item and revision) and runs of items deleted since are left out. Returns ``(live_verdict,
    shadow_verdict, agreed, duration_ms)`` for each row written. PostgreSQL only (``available``)."""
    with connections[using].cursor() as cursor:
        cursor.execute(_INSERT, {"shadow": shadow_id, "now": now, "runs": f"[{','.join(runs)}]", "limit": limit})
        return cursor.fetchall()
