"""Settings, read from the environment in this one place (django-environ: ``hooksite.environment``).

With nothing set you get the embedded default: SQLite (WAL, immediate transactions) under
``STASH_VAR_DIR`` and a Celery broker on the filesystem, so `make run` needs no servers.
``DATABASE_URL`` and ``CELERY_BROKER_URL`` switch to PostgreSQL and Redis/RabbitMQ.
Outside DEBUG, ``SECRET_KEY`` has no default: a production start without it fails.
"""

import ipaddress
from datetime import timedelta
from pathlib import Path

import dj_database_url
from celery.schedules import crontab
from django.core.exceptions import ImproperlyConfigured

from .environment import Environment, network

BASE_DIR = Path(__file__).resolve().parent.parent

env = Environment()

VAR_DIR = Path(env.str("STASH_VAR_DIR", "") or BASE_DIR / "var")
VAR_DIR.mkdir(parents=True, exist_ok=True)

DATABASE_URL = env.str("DATABASE_URL", "")
EMBEDDED = not DATABASE_URL

# The embedded default is a development setup; anything configured is production unless told.
DEBUG = env.bool("DEBUG", EMBEDDED)
SECRET_KEY = env.str("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off.")
    SECRET_KEY = "insecure-development-key-set-SECRET_KEY-in-production"

ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]", "testserver"])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "adminsortable2",
    "django_jsonform",
    "axes",
    "django_prometheus",
    "stash",
]

MIDDLEWARE = [
    # First and next to last, as django-prometheus asks (axes stays last): request counts and latencies.
    "django_prometheus.middleware.PrometheusBeforeMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Serves collected static files (`manage.py collectstatic`) when no web server does.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    # Pipeline versions name who made each change (the API's user too, once it has authenticated).
    "stash.ops.middleware.ChangeAuthorMiddleware",
    # Admin addresses with a NUL in a parameter answer 400, not PostgreSQL's error (a 500).
    "stash.ops.middleware.AdminQueryMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_prometheus.middleware.PrometheusAfterMiddleware",
    # Last, as django-axes asks: turns a locked-out login into stash.ops.access.lockout_response.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "hooksite.urls"
WSGI_APPLICATION = "hooksite.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]

# SQLite gets WAL (readers never block the writer) and IMMEDIATE transactions (a transaction
# takes the write lock when it starts, so the web process and the worker queue on the busy
# timeout instead of failing with "database is locked" when a read turns into a write).
SQLITE_OPTIONS = {
    "transaction_mode": "IMMEDIATE",
    "timeout": 30,
    "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
}

if DATABASE_URL:
    # dj-database-url rather than env.db_url: it takes the connection's age and health checks as
    # arguments, and reads a URL's query options as deployments have had them read so far.
    DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=60, conn_health_checks=True)}
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": VAR_DIR / "db.sqlite3",
            # Kept open between requests and tasks: every new connection runs the PRAGMAs again.
            "CONN_MAX_AGE": 600,
            # A file, not memory, so a worker process can share the test database.
            "TEST": {"NAME": VAR_DIR / "test.sqlite3"},
        }
    }
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"].setdefault("OPTIONS", {}).update(SQLITE_OPTIONS)

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STATIC_ROOT.mkdir(exist_ok=True)  # WhiteNoise warns on every request about a missing one

# --- production serving: origins, static files, readiness ------------------------------------
# Origins (scheme and host) whose unsafe requests are trusted beyond the site's own host, e.g.
# "https://stash.example.com" behind a proxy that does not pass the Host header on.
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])
# `manage.py collectstatic` writes compressed copies under content-hashed names, which WhiteNoise
# serves with far-future cache headers; templates link the hashed names (DEBUG links the plain ones).
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
# /readyz: seconds to wait for a worker to answer its ping, and the queue lag (seconds) beyond
# which it answers 503 (0: lag is reported, never judged). See stash.ops.health and docs/deploy.md.
STASH_READY_PING_TIMEOUT = env.float("STASH_READY_PING_TIMEOUT", 1.0)
STASH_READY_MAX_LAG = env.int("STASH_READY_MAX_LAG", 0)

# --- who is asking: client addresses, login lockouts, HTTPS ----------------------------------
# The client's address is the socket's (REMOTE_ADDR): X-Forwarded-For is anyone's to send. Behind
# proxies, declare them, and the address they forward is used (stash.ops.access.client_address): by
# their addresses or networks (the header is read from the right, past every trusted proxy) or by
# their number (the n-th address from the right, as DRF's NUM_PROXIES).
STASH_TRUSTED_PROXIES = env.list("STASH_TRUSTED_PROXIES", cast=network, default=[])
STASH_NUM_PROXIES = env.int("STASH_NUM_PROXIES", 0)
if STASH_NUM_PROXIES < 0:
    raise ImproperlyConfigured("STASH_NUM_PROXIES must be 0 or more.")
BEHIND_PROXY = bool(STASH_TRUSTED_PROXIES or STASH_NUM_PROXIES)

# Failed logins are counted on every login path (the admin, /accounts/login/, /api/auth/token/) by
# django-axes, in the database (not the cache), per username *and* client address, and per client
# address: past the limit, that user from that address, or that address for any user, is refused
# (429) until the lockout time has passed since the failure that reached it. Never per username
# alone: guesses from elsewhere would lock the real user out. Refused attempts do not restart the
# lockout, and a successful login clears only that user's failures from that address (clearing the
# address's would let anyone with an account wipe the count of their guesses at others).
AUTHENTICATION_BACKENDS = ["stash.ops.access.LockoutBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_FAILURE_LIMIT = env.int("STASH_LOGIN_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("STASH_LOGIN_LOCKOUT_MINUTES", 15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"], "ip_address"]
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_HANDLER = "stash.ops.access.LoginAttemptHandler"
AXES_RESET_ON_SUCCESS = True
AXES_CLIENT_IP_CALLABLE = "stash.ops.access.client_address"
AXES_USERNAME_CALLABLE = "stash.ops.access.attempted_username"
AXES_LOCKOUT_CALLABLE = "stash.ops.access.lockout_response"
AXES_DISABLE_ACCESS_LOG = True  # failures are recorded (admin: Axes > Access attempts); successes are not

# HTTPS: on by default outside DEBUG, each switch overridable (STASH_SECURE_SSL_REDIRECT=0 for a
# deployment tried over plain HTTP). Behind a declared proxy, its X-Forwarded-Proto says HTTPS.
SECURE_SSL_REDIRECT = env.bool("STASH_SECURE_SSL_REDIRECT", not DEBUG)
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^metrics$"]  # probes from inside the network may use HTTP
SECURE_HSTS_SECONDS = env.int("STASH_HSTS_SECONDS", 0 if DEBUG else 365 * 24 * 3600)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("STASH_HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = env.bool("STASH_HSTS_PRELOAD", True)
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env.bool("STASH_SECURE_COOKIES", not DEBUG)
if env.bool("STASH_PROXY_SSL_HEADER", BEHIND_PROXY):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

# Bodies larger than this are refused before they are parsed (the API answers 413).
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("STASH_MAX_BODY_BYTES", 10 * 1024 * 1024)

# Requests per client address (stash.ops.access.client_address), for anonymous callers: submissions
# to stashes that take them, and token requests (password guessing). Over the rate the API
# answers 429 with Retry-After.
STASH_THROTTLE_RATES = {
    "anon_submit": env.str("STASH_ANON_SUBMIT_RATE", "60/minute"),
    "auth_token": env.str("STASH_TOKEN_RATE", "30/minute"),
    "callback": env.str("STASH_CALLBACK_RATE", "600/minute"),
}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Token first: its WWW-Authenticate header makes "not logged in" a 401, not a 403.
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PARSER_CLASSES": ["stash.api.parsers.JSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["stash.api.renderers.JSONRenderer"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "stash.api.exceptions.exception_handler",
    # stash's throttles count by stash.ops.access.client_address; any other DRF throttle at least never
    # believes a client's X-Forwarded-For (DRF's default, None, would).
    "NUM_PROXIES": STASH_NUM_PROXIES,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "stash API",
    "DESCRIPTION": "Submit content to stashes, read verdicts and trails, consume accepted queues, manage hooks.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Request and response shapes apart: read-only fields are never asked for in a request.
    "COMPONENT_SPLIT_REQUEST": True,
    # Swagger UI from drf-spectacular-sidecar's static files (no CDN: /api/docs/ works offline).
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    # No deep links: Swagger UI puts each one as a link inside the operation's button (a control
    # within a control, which screen readers cannot reach).
    "SWAGGER_UI_SETTINGS": {"deepLinking": False},
    # A trail entry's outcome is one enum wherever trails are shown (runs, simulations); so are a
    # verdict, and each on_error (a hook's and a stash's), in hook configs and pipeline documents.
    "ENUM_NAME_OVERRIDES": {
        "ContentStatusEnum": "stash.models.Content.Status",
        "TrailEntryOutcomeEnum": "stash.core.pipeline.OUTCOMES",
        "VerdictEnum": "stash.models.Example.Verdict",
        "HookConfigOnErrorEnum": "stash.models.HookOnError",
        "StashOnErrorEnum": "stash.models.OnError",
        "AppealStatusEnum": "stash.models.Appeal.Status",
        "FailureKindEnum": "stash.models.Failure.Kind",
        "DeliveryStatusEnum": "stash.models.Delivery.Status",
    },
}

# LOG_FORMAT: "text" (one readable line each) or "json" (one object each, for a log collector);
# either way with the item, stash, revision and hook the line was written for (stash.core.logs).
LOG_FORMAT = env.str("LOG_FORMAT", "text").strip().lower()
if LOG_FORMAT not in ("json", "text"):
    raise ImproperlyConfigured(f"LOG_FORMAT must be json or text, not {LOG_FORMAT!r}.")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"structured": {"()": "stash.core.logs.formatter", "output": LOG_FORMAT}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "structured"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", "INFO")},
    # django-axes says every login at INFO; failures and lockouts are warnings.
    "loggers": {"axes": {"level": "WARNING"}},
}

# --- Celery -------------------------------------------------------------------------------
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", "filesystem://localhost/")
if CELERY_BROKER_URL.startswith("filesystem://"):
    _broker_dir = VAR_DIR / "broker"
    for _sub in ("queue", "control"):
        (_broker_dir / _sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir / "queue"),
        "data_folder_out": str(_broker_dir / "queue"),
        "control_folder": str(_broker_dir / "control"),
        # The folder is polled (kombu's default is once a second), and polled again only after a
        # pause even when the worker has room for more: a listing every 20 ms costs little and
        # keeps a save's verdict from waiting for the next poll.
        "polling_interval": 0.02,
    }
CELERY_TASK_IGNORE_RESULT = True
# A message is acknowledged once its task finishes: a worker killed mid-batch leaves it to be
# delivered again (and the sweeper re-enqueues whatever is still past its lease).
CELERY_TASK_ACKS_LATE = True
# Messages reserved per worker process: one on a broker that pushes the next at once; on the
# polled filesystem broker, enough for a poll's worth (most are no-ops once an earlier batch has
# claimed their items, and the next poll is a pause away).
CELERY_WORKER_PREFETCH_MULTIPLIER = 8 if CELERY_BROKER_URL.startswith("filesystem://") else 1
CELERY_TASK_TIME_LIMIT = env.int("STASH_TASK_TIME_LIMIT", 300)
CELERY_TASK_DEFAULT_QUEUE = env.str("STASH_QUEUE", "stash")
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Workers keep their database connection from task to task (Celery's default opens one per
# task); hooksite.celery closes one that broke or outlived CONN_MAX_AGE before the next task.
CELERY_DB_REUSE_MAX = env.int("STASH_DB_REUSE_MAX", 1000)
CELERY_BROKER_CONNECTION_TIMEOUT = 3
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
# Seconds Celery waits for a new pool process to be up before it kills it: a process first loads the
# models of the classifiers that enabled hooks use (hooksite.celery; lingua's take about 15 s).
CELERY_WORKER_PROC_ALIVE_TIMEOUT = env.float("STASH_WORKER_START_TIMEOUT", 120)
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
CELERY_BEAT_SCHEDULE = {
    "stash-sweep": {"task": "stash.tasks.sweep", "schedule": float(env.int("STASH_SWEEP_INTERVAL", 15))},
    # Held items past their stash's review_expire_hours, decided automatically.
    "stash-expire-reviews": {
        "task": "stash.tasks.expire_reviews",
        "schedule": float(env.int("STASH_REVIEW_EXPIRE_INTERVAL", 300)),
    },
}

# --- metrics and task events -----------------------------------------------------------------
# /metrics (stash.ops.metrics_views) answers a caller that sends "Authorization: Bearer
# <STASH_METRICS_TOKEN>", or one whose address is in STASH_METRICS_ALLOWED_NETWORKS (loopback
# unless set; set it empty to require the token); anyone else gets 403.
STASH_METRICS_TOKEN = env.str("STASH_METRICS_TOKEN", "")
STASH_METRICS_ALLOWED_NETWORKS = env.list(
    "STASH_METRICS_ALLOWED_NETWORKS",
    cast=network,
    default=[ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1")],
)
# Workers send task events (and publishers "task-sent"), so Flower and `celery events` work as they
# are. Not by default on the filesystem broker: there an event queue outlives its monitor, and
# every later event would pile up as a file in the folder the workers poll.
CELERY_WORKER_SEND_TASK_EVENTS = CELERY_TASK_SEND_SENT_EVENT = env.bool(
    "STASH_TASK_EVENTS", default=not CELERY_BROKER_URL.startswith("filesystem://")
)

# --- stash ----------------------------------------------------------------------------------
# Items per task: ids saved in one transaction are enqueued in chunks of this size.
STASH_BATCH_SIZE = env.int("STASH_BATCH_SIZE", 200)
# Seconds an item may stay pending or processing before the sweeper sends it again.
STASH_LEASE_SECONDS = env.int("STASH_LEASE_SECONDS", 60)
# Claims of one item before it is set `failed`.
STASH_MAX_ATTEMPTS = env.int("STASH_MAX_ATTEMPTS", 3)
# The Celery queue that items are sent to (workers: `celery -A hooksite worker -Q <it>`).
STASH_QUEUE = CELERY_TASK_DEFAULT_QUEUE
# The queue every sink delivery goes to, whatever its stash's queue: the `sinks` worker consumes it
# (`celery -A hooksite worker -Q <it> -P threads`), so a slow receiver never holds a process that
# judges. Blank: each delivery goes to its stash's queue and runs among the judging (docs/deploy.md).
STASH_SINK_QUEUE = env.str("STASH_SINK_QUEUE", f"{STASH_QUEUE}.sinks")
# Deliveries of one hook config that may run at once across all sink workers (0: no bound); one
# that finds them all taken waits in the queue a second or two and tries again. A slot is a cache
# key that expires after STASH_SINK_SLOT_SECONDS, so a killed worker's slot comes free.
STASH_SINK_CONCURRENCY = env.int("STASH_SINK_CONCURRENCY", 4)
STASH_SINK_SLOT_SECONDS = env.int("STASH_SINK_SLOT_SECONDS", 120)
# Seconds one judging message may run: Celery's hard time limit on it (the pool process still
# running then is replaced). Claims last as long, plus the margin kept for claiming and recording,
# so the sweeper never sends an item whose worker may still be judging it. See README.
STASH_TIME_LIMIT = env.int("STASH_TIME_LIMIT", 30)
STASH_TIME_LIMIT_MARGIN = env.int("STASH_TIME_LIMIT_MARGIN", 5)
# A stash whose hooks take more than STASH_SLOW_MESSAGE_SECONDS in one judging message is marked
# slow for a few minutes; a message of a slow stash first takes one of its STASH_STASH_CONCURRENCY
# judging slots (0: no limit) or is sent again a second later, so that one stash's slow hooks
# never take every worker process. See docs/deploy.md.
STASH_SLOW_MESSAGE_SECONDS = env.float("STASH_SLOW_MESSAGE_SECONDS", 1.0)
STASH_STASH_CONCURRENCY = env.int("STASH_STASH_CONCURRENCY", 1)
# Seconds simulate and replay may take: their hooks run in a child process, killed after it.
STASH_SIMULATE_TIMEOUT = env.int("STASH_SIMULATE_TIMEOUT", 5)
# Minutes a reviewer's claim on a held item lasts (processing.review_queue): others skip it meanwhile.
STASH_REVIEW_CLAIM_MINUTES = env.int("STASH_REVIEW_CLAIM_MINUTES", 10)
if STASH_REVIEW_CLAIM_MINUTES < 1:
    raise ImproperlyConfigured("STASH_REVIEW_CLAIM_MINUTES must be 1 or more.")
# Seconds a stash's golden examples may take together (stash_test, and before each change of its hooks;
# those not reached in time are reported as such). Well under a web server's request timeout
# (gunicorn's is 30 s): a change runs them once for its live version and once for the new one.
STASH_EXAMPLES_TIMEOUT = env.int("STASH_EXAMPLES_TIMEOUT", 10)
# How big a stash may grow (refused with a clear error on every face): its hooks, its golden
# examples, and the bytes of a pipeline document imported into it. See docs/configuration.md.
STASH_MAX_HOOKS = env.int("STASH_MAX_HOOKS", 100)
STASH_MAX_EXAMPLES = env.int("STASH_MAX_EXAMPLES", 500)
STASH_MAX_DOCUMENT_BYTES = env.int("STASH_MAX_DOCUMENT_BYTES", 1024 * 1024)

# --- hooks: cache, webhooks, streams, email -------------------------------------------------
# The cache holds rate_limit's counts (and the API's throttles), so every process must share
# it: Redis when CACHE_URL is set (needed once workers run on more than one machine; give it
# a database of its own, as clearing the cache empties it), else files under STASH_VAR_DIR,
# which the web process and the workers of one machine share with no server.
CACHE_URL = env.str("CACHE_URL", "")
if CACHE_URL and not CACHE_URL.startswith(("redis://", "rediss://", "unix://")):
    raise ImproperlyConfigured("CACHE_URL must be a Redis URL (redis://host:6379/1).")
# A cache server that stops answering (hung, or its host gone without a word) fails a call within
# a second rather than holding the request: what uses the cache goes on without it (docs/deploy.md).
REDIS_CACHE_OPTIONS = {"SOCKET_CONNECT_TIMEOUT": 1, "SOCKET_TIMEOUT": 1}
if CACHE_URL:
    # django-redis keeps one client per connection pool; Django's own backend builds a redis.Redis
    # for every call (~0.17 ms with redis-py 8, more than the call), and a save makes up to three.
    CACHES = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": CACHE_URL,
            "KEY_PREFIX": "stash",
            "OPTIONS": REDIS_CACHE_OPTIONS,
        }
    }
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(VAR_DIR / "cache"),
            "OPTIONS": {"MAX_ENTRIES": 50_000},
        }
    }

# Webhooks and moderation_api hooks connect only to public addresses; these networks are allowed too (comma-separated
# addresses or CIDR networks, e.g. "10.0.0.0/8,192.168.1.20"). Checked on the address connected to.
STASH_WEBHOOK_ALLOWED_NETWORKS = env.list("STASH_WEBHOOK_ALLOWED_NETWORKS", default=[])
# Asynchronous hooks (moderation_api with mode: async): the address outside services reach this
# site at, for their callbacks (https://stash.example.com); in DEBUG the local development server's.
STASH_PUBLIC_URL = env.str("STASH_PUBLIC_URL", "http://127.0.0.1:8000" if DEBUG else "")
# The longest a hook may give a service to call back, in seconds; the sweeper then times it out.
STASH_CALLBACK_MAX_SECONDS = env.int("STASH_CALLBACK_MAX_SECONDS", 3600)
# The Redis that redis_stream sinks add entries to.
STASH_REDIS_URL = env.str("STASH_REDIS_URL", "redis://127.0.0.1:6379/0")

# Email sinks: printed to the console on the embedded default, SMTP otherwise.
EMAIL_BACKEND = env.str(
    "EMAIL_BACKEND",
    "django.core.mail.backends.console.EmailBackend" if EMBEDDED else "django.core.mail.backends.smtp.EmailBackend",
)
EMAIL_HOST = env.str("EMAIL_HOST", "localhost")
EMAIL_PORT = env.int("EMAIL_PORT", 25)
EMAIL_HOST_USER = env.str("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env.str("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env.bool("EMAIL_USE_TLS", False)
EMAIL_TIMEOUT = env.int("EMAIL_TIMEOUT", 10)
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", "stash@localhost")

# --- housekeeping: stash_prune (beat runs it daily) and stash_export -------------------------
# Pipeline runs older than this many days are deleted, each item's latest run excepted.
STASH_RUN_RETENTION_DAYS = env.int("STASH_RUN_RETENTION_DAYS", 30)
# Accepted, rejected and failed items processed longer ago than this are deleted with their runs;
# unset, items are kept for good (`stash_prune --items DAYS` deletes them on request).
STASH_ITEM_RETENTION_DAYS = env.int("STASH_ITEM_RETENTION_DAYS", None)
if STASH_RUN_RETENTION_DAYS < 0 or (STASH_ITEM_RETENTION_DAYS or 0) < 0:
    raise ImproperlyConfigured("STASH_RUN_RETENTION_DAYS and STASH_ITEM_RETENTION_DAYS must be 0 or more.")
# The hour (UTC) of beat's daily prune.
STASH_PRUNE_HOUR = env.int("STASH_PRUNE_HOUR", 3)
CELERY_BEAT_SCHEDULE["stash-prune"] = {
    "task": "stash.tasks.prune",
    "schedule": crontab(minute=30, hour=STASH_PRUNE_HOUR),
}
