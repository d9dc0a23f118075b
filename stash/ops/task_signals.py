"""Celery signal receivers: count each sink delivery task's outcome (``processing.worker_counts``).

A ``stash.tasks.deliver_sink`` run that returns counts as delivered, one that asks to be retried
as a retry (one put back to wait for a free slot of its hook config does not count), and one that
raises past its retries (or with any other error) as failed, against the sink's hook config (the
task's first argument). Connected once, by ``StashConfig.ready()``; they run in the worker that
ran the task.
"""

from celery import signals

from stash.processing import worker_counts
from stash.processing.delivery_slots import SlotsTaken

DELIVER_TASK = "stash.tasks.deliver_sink"


def _config_id(args):
    return args[0] if args else None


@signals.task_success.connect(dispatch_uid="stash.count_sink_delivered")
def count_delivered(sender=None, **kwargs):
    if getattr(sender, "name", None) == DELIVER_TASK:
        worker_counts.add(worker_counts.SINK_DELIVERED, config_id=_config_id(sender.request.args))


@signals.task_retry.connect(dispatch_uid="stash.count_sink_retried")
def count_retried(sender=None, request=None, reason=None, **kwargs):
    # A delivery put back to wait for a slot of its hook config (``SlotsTaken``) did not fail.
    if getattr(sender, "name", None) == DELIVER_TASK and not isinstance(getattr(reason, "exc", None), SlotsTaken):
        worker_counts.add(worker_counts.SINK_RETRIED, config_id=_config_id(request.args))


@signals.task_failure.connect(dispatch_uid="stash.count_sink_failed")
def count_failed(sender=None, args=None, **kwargs):
    if getattr(sender, "name", None) == DELIVER_TASK:
        worker_counts.add(worker_counts.SINK_FAILED, config_id=_config_id(args))
