"""Settings for `make bench`: the project's own, plus the hand-written baseline app, its routes and queue."""

import os

from hooksite.settings import *  # noqa: F403
from hooksite.settings import INSTALLED_APPS, STASH_THROTTLE_RATES

INSTALLED_APPS = [*INSTALLED_APPS, "bench.baseline"]
ROOT_URLCONF = "bench.baseline.urls"

# The hand-written tasks have a queue of their own, next to the stash's (STASH_QUEUE). They keep the
# names they had as bench.tasks (bench/baseline/tasks.py names them), so this route matches them.
BENCH_QUEUE = os.environ.get("BENCH_QUEUE", "bench")
CELERY_TASK_ROUTES = {"bench.tasks.*": {"queue": BENCH_QUEUE}}

# gunicorn is reached over plain HTTP on localhost: no redirect to HTTPS (production's default outside DEBUG).
SECURE_SSL_REDIRECT = False

# The slow_neighbour row's webhook receiver listens on 127.0.0.1 in the runner's process: its
# deliveries (and the admin check of its URL) may reach loopback, in the bench only.
STASH_WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.1/32"]

# The moderation_async row's service answers every item at its callback URL from 127.0.0.1, thousands a
# minute: one outside service's address, allowed more than the default 600 a minute (STASH_CALLBACK_RATE).
STASH_THROTTLE_RATES = {**STASH_THROTTLE_RATES, "callback": "100000/minute"}
