"""Signal receivers: a saved item that needs judging is sent to the workers after commit; a stash's
changed review priority is computed again for its held items."""

from django.db import transaction
from django.db.models.signals import post_save
from django.dispatch import receiver

from stash import processing
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


@receiver(post_save, sender=Stash, dispatch_uid="stash.reprioritize_held")
def reprioritize_held(sender, instance, raw, created, using, **kwargs):
    """A stash whose ``review_priority`` changed (in the admin, an import, a restore: every change
    saves the stash): its held items get their priority computed again, after the commit, in
    batches of their own, so the change's locks are not held meanwhile."""
    if raw or created or not instance._changed(["review_priority"]):
        return
    stash = instance.pk
    transaction.on_commit(lambda: processing.reprioritize(stash), using=using)
