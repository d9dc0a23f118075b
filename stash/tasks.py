"""Celery adapters: each task takes ids, fetches inside, and calls ``processing``."""
import logging

from celery import shared_task

from . import dispatch, processing

logger = logging.getLogger(__name__)


@shared_task(name="stash.tasks.process_contents", acks_late=True, ignore_result=True)
def process_contents(ids, wake=None):
    """Judge the pending items among ``ids`` (a duplicate delivery is a no-op) and, for a message
    that wakes stash ``wake``, that stash's items waiting for their first run."""
    report = processing.process(ids, wake=wake)
    dispatch.send_deliveries(report.deliveries)
    logger.info("batch: %d ids, %d claimed, %d judged, %d stale, %d sent back, verdicts %s",
                len(ids), report.claimed, report.judged, report.stale, report.released, report.verdicts)


@shared_task(name="stash.tasks.sweep", ignore_result=True)
def sweep():
    """One sweeper pass (scheduled by beat)."""
    report = processing.sweep()
    if report.requeued or report.failed:
        logger.info("sweep: %d sent again, %d failed", report.requeued, report.failed)


@shared_task(bind=True, name="stash.tasks.deliver_sink", acks_late=True, ignore_result=True, max_retries=5)
def deliver_sink(self, config_id, content_id, event):
    """Call one sink's ``event`` for one item, retrying with backoff when it fails."""
    try:
        processing.deliver(config_id, content_id, event)
    except processing.DeliveryError as exc:
        raise self.retry(exc=exc, countdown=min(300, 2 ** self.request.retries * 5)) from exc
