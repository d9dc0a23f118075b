"""Property-based tests of every write path: any input is stored exactly or refused with a 4xx or a
form error, never a 500.

    STASH_PROPERTY_EXAMPLES   examples per test (default 25, which keeps the suite fast; a long run
                              sets e.g. STASH_PROPERTY_EXAMPLES=2000)

Each example runs in a transaction that is rolled back, so examples never see each other's rows.
"""

import os
from contextlib import contextmanager

import pytest
from django.db import transaction
from hypothesis import HealthCheck, settings as hypothesis_settings
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from stash.models import Content

hypothesis_settings.register_profile(
    "stash",
    max_examples=int(os.environ.get("STASH_PROPERTY_EXAMPLES", "25")),
    # Database round trips vary; fixtures are set up once per test and each example rolls back.
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
hypothesis_settings.load_profile("stash")


@contextmanager
def rolled_back():
    """Run the block in a transaction and undo whatever it wrote."""
    with transaction.atomic():
        yield
        transaction.set_rollback(True)


@pytest.fixture
def stashes(make_stash):
    """ "audit" (hooks with conditions over the payload) and "open" (anonymous submissions)."""
    audit = make_stash(
        "audit",
        hooks=[
            ("require_fields", {"fields": ["text"]}),
            {
                "hook": "keyword_blocklist",
                "params": {"words": ["spam"]},
                "condition": "has(payload.text)",
                "on_error": "skip",
            },
            ("condition", {"expression": "has(payload.score) && payload.score > 5", "action": "hold"}),
        ],
    )
    return {"audit": audit, "open": make_stash("open", allow_anonymous=True)}


@pytest.fixture
def superuser(django_user_model):
    return django_user_model.objects.create_superuser("root", password="pass-word-123")


@pytest.fixture
def api(superuser, settings):
    settings.STASH_THROTTLE_RATES = {scope: "100000/minute" for scope in settings.STASH_THROTTLE_RATES}
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=superuser).key}")
    return client


def count():
    return Content.objects.count()
