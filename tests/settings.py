"""Test settings: the project's own, plus an app whose hooks misbehave on purpose."""
from hooksite.settings import *  # noqa: F403
from hooksite.settings import INSTALLED_APPS, STORAGES

INSTALLED_APPS = [*INSTALLED_APPS, "tests.testapp", "bench"]
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# The test client and live_server speak plain HTTP: no redirect to HTTPS (production's default
# outside DEBUG). tests/test_security_deploy.py checks the production settings themselves.
SECURE_SSL_REDIRECT = False

# Templates link static files by their plain names: tests run without `collectstatic` (and with
# DEBUG off). tests/integration/test_serving.py serves the hashed ones through gunicorn.
STORAGES = {**STORAGES, "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}
