"""API fixtures: the stash "audit", users holding given permissions, clients that send their token."""
import pytest
from django.contrib.auth.models import Permission
from django.core.cache import cache
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient


@pytest.fixture(autouse=True)
def _fresh_throttles():
    """Throttle counts live in the cache: every test starts with none."""
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def audit(make_stash):
    return make_stash("audit", hooks=[("require_fields", {"fields": ["text"]}),
                                      ("keyword_blocklist", {"words": ["spam"]})])


@pytest.fixture
def make_user(django_user_model):
    """A user with the given permissions, as "app_label.codename" strings."""

    def make(username, *perms, **fields):
        user = django_user_model.objects.create_user(username, password="pass-word-123", **fields)
        for perm in perms:
            app_label, codename = perm.split(".")
            user.user_permissions.add(Permission.objects.get(content_type__app_label=app_label, codename=codename))
        return user

    return make


@pytest.fixture
def api():
    """``api(user)``: a client authenticated by the user's token; ``api()``: anonymous."""

    def client(user=None):
        client = APIClient()
        if user is not None:
            client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
        return client

    return client


@pytest.fixture
def submitter(make_user):
    return make_user("sam", "stash.add_content")


@pytest.fixture
def viewer(make_user):
    return make_user("vera", "stash.view_content")
