"""The hand-written Celery tasks: judge one item, or lock a batch, judge it and ``bulk_update`` it.

They run on their own queue (``BENCH_QUEUE``, routed in ``bench.settings``), next to the stash's. Their
names are the ones they had as ``bench.tasks``, which that route matches.
"""

from celery import shared_task
from django.db import transaction
from django.utils import timezone

from .checks import verdict
from .models import Item


@shared_task(name="bench.tasks.judge_one")
def judge_one(item_id):
    """Judge item ``item_id`` if it is still pending (a duplicate delivery does nothing)."""
    with transaction.atomic():
        item = Item.objects.select_for_update().filter(pk=item_id, status=Item.Status.PENDING).first()
        if item is None:
            return
        item.status, item.reason = verdict(item.payload)
        item.processed_at = timezone.now()
        item.save(update_fields=["status", "reason", "processed_at"])


@shared_task(name="bench.tasks.judge_batch")
def judge_batch(ids):
    """Judge the pending items among ``ids`` in one transaction."""
    with transaction.atomic():
        items = list(Item.objects.select_for_update().filter(pk__in=ids, status=Item.Status.PENDING))
        now = timezone.now()
        for item in items:
            item.status, item.reason = verdict(item.payload)
            item.processed_at = now
        Item.objects.bulk_update(items, ["status", "reason", "processed_at"])
