"""Hook precision in tests: a hook that holds questions and drops spam, its items judged, and people's
decisions on them dated as a test needs."""

from datetime import timedelta

from django.contrib.auth.models import Permission
from django.utils import timezone

from stash import hooks, processing
from stash.core import registry
from stash.models import Content, Review


class Judge(hooks.Filter):
    """Holds text with "?", drops text with "spam", keeps the rest."""

    def filter(self, item):
        text = item.payload.get("text", "")
        if "spam" in text:
            return self.drop("spam", "spam")
        return self.hold("asks a question", "question") if "?" in text else self.keep()


def judge_stash(make_stash, register_temporarily, slug="judged", hook=None, **stash_fields):
    """A stash (with ``stash_fields``) whose only hook is a ``Judge`` labelled "Judge" (registered for
    the test), with the HookConfig fields ``hook``."""
    if not registry.is_registered("test_judge"):
        register_temporarily("test_judge", Judge)
    return make_stash(slug, hooks=[{"hook": "test_judge", "label": "Judge", **(hook or {})}], **stash_fields)


def judged(stash, text):
    """An item of ``stash`` with ``text``, judged."""
    item = Content.objects.create(stash=stash, payload={"text": text})
    processing.judge([item.pk])
    item.refresh_from_db()
    return item


def decided_ago(item, days):
    """Date every person's decision on ``item`` ``days`` ago."""
    Review.objects.filter(content=item).update(created_at=timezone.now() - timedelta(days=days))


def people(django_user_model, *names):
    """Users who may review and decide appeals, by name."""
    change = Permission.objects.filter(content_type__app_label="stash", codename__in=["view_content", "change_content"])
    users = {}
    for name in names:
        users[name] = django_user_model.objects.create_user(name, password="pass-word-123", is_staff=True)
        users[name].user_permissions.set(change)
    return users
