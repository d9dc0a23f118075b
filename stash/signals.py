"""Signal receivers: a saved item that needs judging is sent to the workers after commit."""
from django.db.models.signals import post_save
from django.dispatch import receiver

from . import dispatch
from .models import Content


@receiver(post_save, sender=Content, dispatch_uid="stash.send_saved_content")
def send_saved_content(sender, instance, raw, using, **kwargs):
    if raw:
        return
    if getattr(instance, "_enqueue_on_commit", False):
        instance._enqueue_on_commit = False
        dispatch.send_on_commit([instance.pk], using=using, stash=instance.stash_id)
