"""Saving items and handing them to the hand-written tasks after commit.

submit({"text": "hello", "score": 0.5})       # one item, one judge_one task
submit_many(payloads)                          # one insert, one judge_batch task per 100 ids
"""

from django.db import transaction

from .models import Item
from .tasks import judge_batch, judge_one

BATCH = 100


def publish_one(item_id):
    """Send ``judge_one`` for ``item_id`` once the current transaction commits (now, outside one)."""
    transaction.on_commit(lambda: judge_one.delay(str(item_id)))


def submit(payload):
    """Save ``payload`` as a new item; it is judged after commit."""
    item = Item.objects.create(payload=payload)
    publish_one(item.pk)
    return item


def submit_many(payloads):
    """Save ``payloads`` in one transaction with ``bulk_create``; one ``judge_batch`` per 100 ids after commit."""
    with transaction.atomic():
        items = Item.objects.bulk_create([Item(payload=payload) for payload in payloads])
        ids = [str(item.pk) for item in items]
        transaction.on_commit(lambda: publish_batches(ids))
    return items


def publish_batches(ids):
    for start in range(0, len(ids), BATCH):
        judge_batch.delay(ids[start : start + BATCH])
