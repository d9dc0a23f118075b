"""ASGI entry point."""

import os

from django.core.asgi import get_asgi_application

from stash.db import tracing

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hooksite.settings")
# Before the application loads its middleware: tracing adds its own (with OTEL_EXPORTER_OTLP_ENDPOINT).
tracing.configure()
application = get_asgi_application()
