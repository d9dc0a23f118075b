"""Celery adapters: each task takes ids, fetches inside, and calls ``processing``.

What every task shares (acks late, no results, the default time limit) is set once, in the
settings (``CELERY_TASK_*``); a decorator names only what sets its task apart.
"""

import logging
import os
import random

from celery import Task, shared_task
from celery.exceptions import Retry
from celery.worker.request import Request
from django.conf import settings

from stash import processing
from stash.db import publishing

logger = logging.getLogger(__name__)


class JudgingRequest(Request):
    """A judging message past its hard time limit is followed by its recovery (``processing.recover``).

    ``on_timeout`` runs in the worker's main process just before billiard kills the pool process.
    Whether that process was still running tells a hook that hung from one that killed its process
    earlier (a crash, whose loss billiard reports only after ``worker_lost_wait``). The recovery
    goes to the queue the stopped message came from: ``publishing`` names a queue when it publishes,
    and Celery routes that message by the queue's name as its routing key.
    """

    def on_timeout(self, soft, timeout):
        hung = not soft and _running(self.worker_pid)
        super().on_timeout(soft, timeout)
        if not soft:
            logger.error(
                "Judging message %s ran past its time limit (%s s)%s; its items are recovered.",
                self.id,
                timeout,
                ": its pool process is replaced" if hung else " after its pool process died",
            )
            publishing.recover(self.id, hung=hung, queue=(self.delivery_info or {}).get("routing_key") or "")


def _running(pid):
    """True if the pool process ``pid`` (a child of this process) has not exited; it is not reaped."""
    try:
        return pid is not None and os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None
    except ChildProcessError:  # exited and reaped already
        return False


class JudgingTask(Task):
    Request = JudgingRequest


@shared_task(bind=True, base=JudgingTask, name="stash.tasks.process_contents")
def process_contents(self, ids, wake=None, recover=None, hung=False):
    """Judge the pending items among ``ids`` (a duplicate delivery is a no-op) and, for a message
    that wakes stash ``wake``, that stash's items waiting for their first run; or, with
    ``recover`` (the id of a message stopped at its time limit; ``hung``: while its process
    still ran), take over that message's items. A message of a slow stash with no judging slot
    free is sent again a little later instead (``processing.slots``); a recovery never is."""
    clock = processing.Clock((self.request.timelimit or (None, None))[0] or self.app.conf.task_time_limit)
    token = processing.token_for(self.request.id)
    if recover is not None:
        processing.mark_stopped(processing.token_for(recover))
        report = processing.recover(processing.token_for(recover), hung=hung, token=token, clock=clock)
    else:
        with processing.judging_slot(ids, wake, seconds=clock.limit or settings.STASH_TIME_LIMIT) as slot:
            queue = (self.request.delivery_info or {}).get("routing_key") or ""
            if slot is None and publishing.defer(ids, queue, wake=wake, time_limit=clock.limit):
                logger.info("batch: %d ids deferred: their stash has no judging slot free", len(ids))
                return
            report = processing.judge(ids, wake=wake, token=token, clock=clock)
            if slot is not None:
                slot.done(report)
    processing.send_deliveries(report.deliveries, recorded=True)
    logger.info(
        "batch: %d ids, %d claimed, %d judged, %d stale, %d sent back, verdicts %s",
        len(ids),
        report.claimed,
        report.judged,
        report.stale,
        report.released,
        report.verdicts,
    )


@shared_task(bind=True, name="stash.tasks.resume_run")
def resume_run(self, callback_id):
    """Resume the run of the item that waits on ``callback_id``, now answered (by its service, or
    by the sweeper at its timeout); a duplicate message does nothing."""
    clock = processing.Clock((self.request.timelimit or (None, None))[0] or self.app.conf.task_time_limit)
    report = processing.resume(callback_id, token=processing.token_for(self.request.id), clock=clock)
    processing.send_deliveries(report.deliveries, recorded=True)
    logger.info("resume: callback %s, %d claimed, verdicts %s", callback_id, report.claimed, report.verdicts)


@shared_task(name="stash.tasks.sweep")
def sweep():
    """One sweeper pass (scheduled by beat)."""
    report = processing.sweep()
    processing.count_sweep(report)  # for /metrics
    processing.finish_expired_shadows()  # a shadow ends on time even when nothing is judged
    if report.requeued or report.failed or report.woken or report.timed_out or report.resumed:
        logger.info(
            "sweep: %d sent again, %d failed, %d stashes woken, %d waits timed out, %d resumes sent again",
            report.requeued,
            report.failed,
            report.woken,
            report.timed_out,
            report.resumed,
        )


@shared_task(name="stash.tasks.expire_reviews")
def expire_reviews():
    """Decide the held items past their stash's ``review_expire_hours`` (scheduled by beat)."""
    report = processing.expire_reviews()
    if report.total:
        logger.info(
            "review expiry: %d held items decided automatically%s", report.total, "; more left" if report.more else ""
        )


#: Seconds a sink delivery's first retry waits at most; each later retry may wait twice as long as
#: the one before (up to 5, 10, 20, 40 and 80 s), a random part of it, so that deliveries which
#: failed together do not all come back together.
DELIVERY_BACKOFF = 5


#: Seconds a delivery that found every slot of its hook config taken waits before it tries again,
#: about (from half to one and a half times this, so that those put back together come back apart).
SLOT_WAIT = 2


@shared_task(
    bind=True,
    name="stash.tasks.deliver_sink",
    autoretry_for=(processing.DeliveryError,),
    max_retries=5,
    retry_backoff=DELIVERY_BACKOFF,
    retry_backoff_max=300,
    retry_jitter=True,
)
def deliver_sink(self, config_id, content_id, event, revision=None):
    """Call one sink's ``event`` for one item; a ``DeliveryError`` is retried with backoff, and
    raised (the task fails) after its last retry.

    It runs in one of its hook config's delivery slots (``processing.delivery_slot``). With every
    slot taken, it is sent again to run in about ``SLOT_WAIT`` seconds, with the count of retries
    it had: a wait for a slot is no failure. Should the broker refuse that, it runs at once.
    """
    with processing.delivery_slot(config_id) as held:
        if not held:
            countdown = random.uniform(0.5, 1.5) * SLOT_WAIT
            queue = (self.request.delivery_info or {}).get("routing_key") or ""
            if publishing.send_delivery_later(
                self.request.args, countdown, retries=self.request.retries, queue=queue, task_id=self.request.id
            ):
                taken = processing.SlotsTaken(f"every delivery slot of hook config {config_id} is taken")
                raise Retry(exc=taken, when=countdown)
        processing.deliver(config_id, content_id, event, revision, final=self.request.retries >= self.max_retries)


@shared_task(
    name="stash.tasks.give_feedback",
    autoretry_for=(processing.FeedbackError,),
    max_retries=5,
    retry_backoff=DELIVERY_BACKOFF,
    retry_backoff_max=300,
    retry_jitter=True,
)
def give_feedback(config_id, content_id, verdict):
    """Tell the hook of ``config_id`` a person's ``verdict`` on item ``content_id`` (its ``feedback``);
    a ``FeedbackError`` is retried with backoff, as a sink delivery is."""
    processing.give_feedback(config_id, content_id, verdict)


@shared_task(name="stash.tasks.check_precision")
def check_precision(config_id):
    """Switch hook config ``config_id`` to observe if people's decisions put its precision under its
    minimum (``processing.check_precision``); sent after each such decision commits."""
    processing.check_precision(config_id)


#: Seconds the daily prune may run; it starts no batch in its last minute, and what it leaves
#: (each batch commits on its own) is taken by the next.
PRUNE_TIME_LIMIT = 3600


@shared_task(name="stash.tasks.prune", time_limit=PRUNE_TIME_LIMIT)
def prune():
    """Delete runs, and with ``STASH_ITEM_RETENTION_DAYS`` final items, past retention (beat, daily)."""
    report = processing.scheduled_prune(budget=PRUNE_TIME_LIMIT - 60)
    logger.info(
        "prune: %d runs, %d items with %d runs deleted in %d batches%s",
        report.runs,
        report.items,
        report.item_runs,
        report.batches,
        "" if report.finished else "; stopped at its time limit",
    )


@shared_task(bind=True, name="stash.tasks.run_shadow")
def run_shadow(self, shadow_id, rows):
    """Judge the items ``rows`` (those whose hooks did not fit in their live message) through shadow
    ``shadow_id``'s pipeline, sinks off, and record both outcomes (``processing.run_shadow``); with no
    rows, write the runs live workers judged and gathered for it since its last message (on Redis). A
    duplicate message records nothing."""
    if not rows:
        recorded = processing.record_gathered_shadow_runs(shadow_id)
        logger.info("shadow %s: %d gathered runs recorded", shadow_id, recorded)
        return
    clock = processing.Clock((self.request.timelimit or (None, None))[0] or self.app.conf.task_time_limit)
    recorded = processing.run_shadow(shadow_id, rows, clock=clock)
    logger.info("shadow %s: %d of %d items recorded", shadow_id, recorded, len(rows))
