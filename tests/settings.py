"""Test settings: the project's own, plus an app whose hooks misbehave on purpose and the benchmark baseline."""

import os
from pathlib import Path

# Each pytest-xdist worker (`make test-fast` runs two) keeps files of its own under STASH_VAR_DIR:
# its database, broker folders and cache. Processes a test starts inherit the same folder.
_worker = os.environ.get("PYTEST_XDIST_WORKER")
_var_dir = Path(os.environ.get("STASH_VAR_DIR") or Path(__file__).parents[1] / "var")
if _worker and _var_dir.name != _worker:
    os.environ["STASH_VAR_DIR"] = str(_var_dir / _worker)

from hooksite.settings import *  # noqa: E402, F403
from hooksite.settings import INSTALLED_APPS, STORAGES  # noqa: E402

INSTALLED_APPS = [*INSTALLED_APPS, "tests.support.testapp", "bench.baseline"]
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# The test client and live_server speak plain HTTP: no redirect to HTTPS (production's default
# outside DEBUG). tests/ops/test_security_deploy.py checks the production settings themselves.
SECURE_SSL_REDIRECT = False

# Templates link static files by their plain names: tests run without `collectstatic` (and with
# DEBUG off). tests/integration/test_serving.py serves the hashed ones through gunicorn.
STORAGES = {**STORAGES, "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}

# Callback URLs of asynchronous hooks: the test client's host (the integration tests' services
# are pointed at their live server).
STASH_PUBLIC_URL = os.environ.get("STASH_PUBLIC_URL") or "http://testserver"
