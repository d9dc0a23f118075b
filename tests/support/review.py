"""The team's review queue in tests: a hook that holds items with the reason code their payload names,
a stash that uses it, held items made quickly and users who may review."""

from datetime import timedelta

from django.contrib.auth.models import Permission
from django.utils import timezone

from stash import hooks, processing
from stash.core import registry
from stash.models import Content

REVIEW_PERMISSIONS = ("view_content", "change_content")


class HoldByCode(hooks.Filter):
    """Hold an item whose payload has ``code``, with that reason code; keep the others."""

    def filter(self, item):
        code = item.payload.get("code")
        return self.hold(f"held for {code}", code) if code else self.keep()


def team_stash(make_stash, register_temporarily, slug="team", **fields):
    """A stash whose only hook holds items by the ``code`` of their payload (registered for the test)."""
    if not registry.is_registered("test_hold_by_code"):
        register_temporarily("test_hold_by_code", HoldByCode)
    return make_stash(slug, name=slug.title(), hooks=[{"hook": "test_hold_by_code", "label": "By code"}], **fields)


def hold(stash, code="link", **payload):
    """One item of ``stash`` judged and held with reason ``code``."""
    item = Content.objects.create(stash=stash, payload={"code": code, **payload})
    processing.judge([item.pk])
    item.refresh_from_db()
    assert item.status == "held", item.reason
    return item


def held_since(item, hours):
    """Make ``item`` look held (and submitted) ``hours`` ago."""
    when = timezone.now() - timedelta(hours=hours)
    Content.objects.filter(pk=item.pk).update(processed_at=when, created_at=when)
    item.refresh_from_db()
    return item


def reviewer(django_user_model, username, staff=True):
    """A user who may review (view and change items)."""
    user = django_user_model.objects.create_user(username, password="pass-word-123", is_staff=staff)
    user.user_permissions.set(
        Permission.objects.filter(content_type__app_label="stash", codename__in=REVIEW_PERMISSIONS)
    )
    return user
