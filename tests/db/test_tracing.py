"""Tracing off (no OTLP endpoint): nothing configured, nothing of OpenTelemetry even imported.

Checked in a fresh process, since the integration tests trace in this one.
"""

import os
import subprocess
import sys

import pytest

from stash.db import tracing

from ..support.worker import ROOT

# A web process and a worker pool process start, as they do with OTEL_EXPORTER_OTLP_ENDPOINT unset,
# then go through each of tracing's calls on their paths.
_OFF = """
import sys

import redis  # noqa: F401 - redis-py imports the SDK's metrics by itself when installed: not stash's doing

before = {name for name in sys.modules if name.startswith("opentelemetry")}
import django

django.setup()
import hooksite.wsgi  # noqa: F401 - configures tracing as a web process does
from hooksite.celery import start_tracing
from stash.db import publishing, tracing
from stash.processing import judging

start_tracing()  # as each worker pool process does
assert not tracing.enabled()
tracing.remember(["item-1"])
with tracing.continuing("item-1"):
    pass


class Pipeline:
    def run(self, item, on_step=None):
        return "judged"


assert tracing.run(Pipeline(), "item-1", on_step=None) == "judged"
assert tracing.judging(lambda contents, n: n)([], 3) == 3
from django.core.cache import cache

assert cache.get(tracing._key("item-1")) is None
loaded = sorted(name for name in sys.modules if name.startswith("opentelemetry") and name not in before)
assert not loaded, loaded
assert not any(name.startswith(("opentelemetry.sdk.trace", "opentelemetry.instrumentation")) for name in before)
from opentelemetry import trace

assert isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)
print("off")
"""


def test_with_no_endpoint_nothing_is_configured_or_imported(tmp_path):
    env = {name: value for name, value in os.environ.items() if not name.startswith("OTEL_")}
    env.update({"DJANGO_SETTINGS_MODULE": "tests.settings", "PYTHONPATH": str(ROOT), "STASH_VAR_DIR": str(tmp_path)})
    done = subprocess.run([sys.executable, "-c", _OFF], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "off"


@pytest.mark.parametrize(
    ("environ", "wanted"),
    [
        ({}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": ""}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, True),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_SDK_DISABLED": "true"}, False),
        ({"OTEL_SERVICE_NAME": "stash-web"}, False),
    ],
)
def test_traces_are_wanted_only_with_an_endpoint_and_the_sdk_not_disabled(environ, wanted):
    assert tracing.wanted(environ) is wanted
    if not wanted:
        assert tracing.configure(environ) is False
        assert not tracing.enabled()
