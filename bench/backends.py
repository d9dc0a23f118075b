"""The two backends, each set up from scratch for a run: its environment, database and migrations.

- ``services``: PostgreSQL (the database in ``--database-url``, dropped and created) and Redis (broker
  and cache).
- ``embedded``: the project default, SQLite and Celery's filesystem broker, under ``<var-dir>-embedded``.
- ``rabbitmq``: PostgreSQL as ``services`` has it, RabbitMQ (``--amqp-url``) as the broker, the cache on
  the Redis of ``--broker-url``; only the rows a broker changes run there.

Both run with ``DJANGO_SETTINGS_MODULE=bench.settings``, ``DEBUG=0`` and queues named for the run, so
nothing they do touches another run's database, directory or queues. Problems raise ``BenchError``
with what to do about them.
"""

import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import redis
from psycopg import sql

from .errors import BenchError

ROOT = Path(__file__).resolve().parents[1]
BACKENDS = ("services", "embedded", "rabbitmq")
#: What ``--backend`` names: one backend, ``both`` (services and embedded) or ``all``.
CHOICES = {**{backend: (backend,) for backend in BACKENDS}, "both": ("services", "embedded"), "all": BACKENDS}
# Inherited settings that would change what is measured; each backend sets its own.
CLEARED = ("DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL", "DJANGO_SETTINGS_MODULE", "DEBUG", "SECRET_KEY")


def var_dir(base, backend):
    return Path(f"{base}-{backend}").resolve()


def environment(backend, options):
    """The environment of every process of ``backend``'s run."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in CLEARED and not key.startswith(("STASH_", "BENCH_"))
    }
    run = uuid.uuid4().hex[:8]
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "bench.settings",
            "SECRET_KEY": "bench-only",
            "DEBUG": "0",
            "STASH_VAR_DIR": str(var_dir(options.var_dir, backend)),
            "PYTHONPATH": str(ROOT),
            "STASH_QUEUE": f"stash-bench-{run}",
            "BENCH_QUEUE": f"bench-{run}",
            # Sink deliveries on a queue of their own, as production has them (its `sinks` worker is
            # started by the rows that deliver); blank with --sinks-on-judging-queue, as before there was one.
            "STASH_SINK_QUEUE": "" if getattr(options, "sinks_on_judging_queue", False) else f"stash-bench-{run}.sinks",
        }
    )
    if backend in ("services", "rabbitmq"):
        # The cache on the same Redis, as a deployment on PostgreSQL + Redis has it (its keys are prefixed).
        env.update(
            {
                "DATABASE_URL": options.database_url,
                "CELERY_BROKER_URL": options.broker_url,
                "CACHE_URL": options.broker_url,
            }
        )
    if backend == "rabbitmq":
        env["CELERY_BROKER_URL"] = options.amqp_url
    return env


def check_options(options):
    """Refuse what the run cannot use, or must not destroy, before anything starts."""
    if "bench" not in Path(options.var_dir).name:
        raise BenchError(f"--var-dir {options.var_dir}: its name must contain 'bench' (the run wipes it)")
    if "rabbitmq" in options.backends:
        check_amqp(options.amqp_url)
    if not {"services", "rabbitmq"} & set(options.backends):
        return
    database = urlsplit(options.database_url)
    if database.scheme not in ("postgres", "postgresql") or "bench" not in database.path:
        raise BenchError(
            f"--database-url {options.database_url}: give postgres://…/<a database named *bench*> "
            "(the run drops and creates it)"
        )
    if urlsplit(options.broker_url).scheme != "redis":
        raise BenchError(f"--broker-url {options.broker_url}: give redis://host:port/<db>")
    try:
        redis.Redis.from_url(options.broker_url, socket_connect_timeout=3).ping()
    except redis.RedisError as exc:
        raise BenchError(f"Redis is not reachable at {options.broker_url}: {exc}") from exc


def check_amqp(url):
    from kombu import Connection

    if urlsplit(url).scheme not in ("amqp", "pyamqp"):
        raise BenchError(f"--amqp-url {url}: give amqp://user:password@host:port/<vhost>")
    try:
        with Connection(url, connect_timeout=5) as connection:
            connection.ensure_connection(max_retries=1)
    except Exception as exc:
        raise BenchError(f"RabbitMQ is not reachable at {url}: {exc} (start it: `rabbitmq-server -detached`)") from exc


def prepare(backend, env):
    """A fresh var directory (and database), migrated."""
    shutil.rmtree(env["STASH_VAR_DIR"], ignore_errors=True)
    Path(env["STASH_VAR_DIR"]).mkdir(parents=True)
    if backend != "embedded":
        recreate_database(env["DATABASE_URL"])
        # The broker's and the cache's database too: a marker left by an earlier run would have
        # saves join a message that no longer exists.
        redis.Redis.from_url(env["CACHE_URL"]).flushdb()
    done = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    if done.returncode:
        raise BenchError(f"migrate failed on {backend}:\n{done.stdout}\n{done.stderr}")


def recreate_database(url):
    """Drop and create the database of ``url`` (connecting to the server's ``postgres`` database)."""
    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    server = parts._replace(path="/postgres").geturl()
    try:
        with psycopg.connect(server, autocommit=True, connect_timeout=5) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    except psycopg.Error as exc:
        raise BenchError(f"cannot recreate database {name} on {server}: {exc}") from exc
