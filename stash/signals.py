"""Signal receivers: a saved item that needs judging is sent to the workers after commit."""

from django.db import transaction
from django.db.models.signals import post_save
from django.dispatch import receiver

from stash.db import publishing
from stash.models import Content, Stash


@receiver(post_save, sender=Content, dispatch_uid="stash.send_saved_content")
def send_saved_content(sender, instance, raw, using, **kwargs):
    if raw:
        return
    if getattr(instance, "_enqueue_on_commit", False):
        instance._enqueue_on_commit = False
        # The queue of the stash as the caller has it: every face saves with its stash at hand,
        # so learning the queue costs no query (a save that set only ``stash_id`` reads it).
        publishing.send_on_commit([instance.pk], using=using, stash=instance.stash_id, queue=instance.stash.queue)


@receiver(post_save, sender=Stash, dispatch_uid="stash.follow_moved_stash")
def follow_moved_stash(sender, instance, raw, using, **kwargs):
    """A stash given another queue: its items waiting for their first run follow it there."""
    if raw or not getattr(instance, "queue_moved", False):
        return
    stash, queue = instance.pk, instance.queue
    transaction.on_commit(lambda: publishing.moved(stash, queue), using=using)
