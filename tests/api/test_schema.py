"""Schemathesis against the API's own OpenAPI schema: no 5xx, and every answer as documented.

Generated requests (valid ones and deliberately broken ones) go to every operation in /api/schema/
through the WSGI app, authenticated as a superuser so that they reach past the permission checks,
with a demo stash ("audit", the example slug the schema gives) holding hooks and judged items.
"""

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from rest_framework.authtoken.models import Token
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from stash import processing
from stash.management.demo import create_demo

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


@pytest.fixture(autouse=True)
def _one_connection():
    """As Django's test client does: requests must not close the connection the test's transaction is on."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def token(django_user_model):
    admin = django_user_model.objects.create_superuser("root", "root@example.com", "root-pass")
    return Token.objects.create(user=admin).key


@pytest.fixture
def demo(db):
    audit = create_demo()
    for text in ("hello", "free money"):
        processing.judge([processing.submit(audit, {"text": text})[0].pk])
    return audit


# Loaded once, from the project's own /api/schema/ endpoint, when the module is collected.
schema = schemathesis.openapi.from_wsgi("/api/schema/", get_wsgi_application())


@schema.parametrize()
@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
def test_every_operation_answers_as_documented(case, token, demo):
    case.call_and_validate(headers={"Authorization": f"Token {token}"}, checks=CHECKS)
