"""The migrations match the models, name no app code, and build a database from zero, and back."""

import ast
import json
import os
import subprocess
import sys

import pytest
from django.core.management import call_command
from django.db import connection, models
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.operations import CreateModel

from ..support.worker import ROOT


@pytest.mark.django_db
def test_the_models_need_no_new_migration():
    call_command("makemigrations", "stash", "--check", "--dry-run", verbosity=0)  # exits 1 on a change


def test_the_initial_migration_names_no_app_code():
    migration = MigrationLoader(None, ignore_no_migrations=True).get_migration("stash", "0001_initial")
    created = [operation for operation in migration.operations if isinstance(operation, CreateModel)]
    assert {operation.name for operation in created} >= {"Stash", "HookConfig", "Content"}
    assert {operation.bases for operation in created} == {(models.Model,)}
    assert stash_modules_loaded_by("0001_initial") == ["stash", "stash.migrations", "stash.migrations.0001_initial"]


@pytest.fixture
def fresh_database(tmp_path, django_db_setup, django_db_blocker):
    """The environment of the project's settings on an empty database of the backend under test."""
    env = {**os.environ, "STASH_VAR_DIR": str(tmp_path), "DJANGO_SETTINGS_MODULE": "hooksite.settings"}
    if connection.vendor != "postgresql":
        env.pop("DATABASE_URL", None)  # the embedded default: SQLite in STASH_VAR_DIR
        yield env
        return
    settings = connection.settings_dict
    name = f"{settings['NAME']}_fresh"
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        cursor.execute(f'CREATE DATABASE "{name}"')
    env["DATABASE_URL"] = (
        f"postgres://{settings['USER']}:{settings['PASSWORD'] or ''}@{settings['HOST']}:"
        f"{settings['PORT'] or 5432}/{name}"
    )
    yield env
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# In one process, as an operator would run the commands: migrate a fresh database, save the demo
# stash and its hooks through the models, migrate stash back to zero, forward again, and use it.
FROM_ZERO_AND_BACK = """
import io, sys, django
django.setup()
from django.core.management import call_command
from django.db import connection
print("vendor:", connection.vendor, connection.settings_dict["NAME"])
call_command("migrate", verbosity=0)
call_command("stash_demo", stdout=io.StringIO())
call_command("migrate", "stash", "zero", verbosity=0)
print("after zero:", sorted(table for table in connection.introspection.table_names() if table.startswith("stash_")))
call_command("migrate", verbosity=0)
call_command("stash_demo", stdout=io.StringIO())
sys.stdin = io.StringIO('{"text": "free money, act now"}')
call_command("stash_simulate", "audit", "-")
"""


def test_a_fresh_database_migrates_from_zero_and_back(fresh_database):
    done = subprocess.run(
        [sys.executable, "-c", FROM_ZERO_AND_BACK],
        cwd=ROOT,
        env=fresh_database,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert f"vendor: {connection.vendor} " in done.stdout
    assert "after zero: []" in done.stdout
    assert "verdict: rejected" in done.stdout


# A stash saved before versions were kept gets its current pipeline as its first version.
VERSIONS_OF_EARLIER_STASHES = """
import django
django.setup()
from django.core.management import call_command
from django.db.migrations.executor import MigrationExecutor
from django.db import connection
call_command("migrate", "stash", "0007", verbosity=0)
apps = MigrationExecutor(connection).loader.project_state(("stash", "0007_content_source_code")).apps
Stash, HookConfig = apps.get_model("stash", "Stash"), apps.get_model("stash", "HookConfig")
stash = Stash.objects.create(slug="old", name="Old", config_version=7)
HookConfig.objects.create(stash=stash, hook="max_size", label="Small", params={"max_bytes": 9}, position=1)
call_command("migrate", verbosity=0)
from stash.models import PipelineVersion
version = PipelineVersion.objects.get(stash__slug="old")
print("version:", version.number, version.summary, [hook["params"] for hook in version.document["hooks"]])
"""


def test_stashes_saved_before_versions_get_their_current_pipeline_as_a_version(fresh_database):
    done = subprocess.run(
        [sys.executable, "-c", VERSIONS_OF_EARLIER_STASHES],
        cwd=ROOT,
        env=fresh_database,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "version: 7 first kept version: created with 1 hook [{'max_bytes': 9}]" in done.stdout


def app_imports(path, package="stash.migrations"):
    """The modules of stash outside ``package`` that the module at ``path`` imports, anywhere in it."""
    named = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            named |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1]) if node.level else ""
            module = ".".join(part for part in (base, node.module or "") if part)
            named |= {module, *(f"{module}.{alias.name}" for alias in node.names)}
    return sorted(
        name for name in named if name.split(".")[0] == "stash" and name != "stash" and not name.startswith(package)
    )


def test_the_versions_migration_carries_what_it_needs_and_names_no_app_code():
    # A migration that imported stash.documents would record other versions the day that module
    # changes (a new stash field, another summary): it keeps its own copy of what it used.
    path = ROOT / "stash" / "migrations" / "0008_pipeline_versions_examples.py"
    assert app_imports(path) == []
    assert stash_modules_loaded_by("0008_pipeline_versions_examples") == [
        "stash",
        "stash.migrations",
        "stash.migrations.0008_pipeline_versions_examples",
    ]


# Migrating from 0007 through 0008 alone, on a database with stashes: the versions it records.
VERSIONS_RECORDED_BY_0008 = """
import json, django
django.setup()
from django.core.management import call_command
from django.db.migrations.executor import MigrationExecutor
from django.db import connection
call_command("migrate", "stash", "0007", verbosity=0)
apps = MigrationExecutor(connection).loader.project_state(("stash", "0007_content_source_code")).apps
Stash, HookConfig = apps.get_model("stash", "Stash"), apps.get_model("stash", "HookConfig")
audit = Stash.objects.create(slug="audit", name="Audit", description="Old one", allow_anonymous=True,
                             on_error="hold", max_payload_bytes=5000, queue="slow", config_version=4)
Stash.objects.create(slug="empty", name="Empty", is_active=False)
HookConfig.objects.create(stash=audit, hook="keyword_blocklist", label="No spam", params={"words": ["spam"]},
                          position=2, mode="observe", on_error="skip", condition="size(payload.text) > 3",
                          timeout_ms=500)
HookConfig.objects.create(stash=audit, hook="gone_hook", label="", params={"b": 1, "a": [2]}, position=1,
                          enabled=False)
call_command("migrate", "stash", "0008", verbosity=0)
apps = MigrationExecutor(connection).loader.project_state(("stash", "0008_pipeline_versions_examples")).apps
ids = {config.label: config.pk for config in apps.get_model("stash", "HookConfig").objects.all()}
versions = apps.get_model("stash", "PipelineVersion").objects.order_by("stash__slug")
print("versions:", json.dumps([{"stash": v.stash.slug, "number": v.number, "summary": v.summary,
                                "document": v.document, "by": v.created_by_id} for v in versions], sort_keys=True))
print("ids:", json.dumps(ids, sort_keys=True))
"""


def test_migrating_from_0007_through_0008_records_each_stash_as_it_was(fresh_database):
    done = subprocess.run(
        [sys.executable, "-c", VERSIONS_RECORDED_BY_0008],
        cwd=ROOT,
        env=fresh_database,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    said = dict(line.split(": ", 1) for line in done.stdout.splitlines() if ": " in line)
    ids = json.loads(said["ids"])
    hooks = [
        {
            "id": ids[""],
            "hook": "gone_hook",
            "label": "",
            "params": {"a": [2], "b": 1},
            "enabled": False,
            "mode": "enforce",
            "position": 1,
            "on_error": "inherit",
            "condition": "",
            "timeout_ms": 2000,
        },
        {
            "id": ids["No spam"],
            "hook": "keyword_blocklist",
            "label": "No spam",
            "params": {"words": ["spam"]},
            "enabled": True,
            "mode": "observe",
            "position": 2,
            "on_error": "skip",
            "condition": "size(payload.text) > 3",
            "timeout_ms": 500,
        },
    ]
    settings = {
        "examples_policy": "block",
        "allow_anonymous": False,
        "on_error": "reject",
        "max_payload_bytes": 1048576,
        "queue": "",
        "description": "",
    }
    assert json.loads(said["versions"]) == [
        {
            "stash": "audit",
            "number": 4,
            "by": None,
            "summary": "first kept version: created with 2 hooks",
            "document": {
                "format": "stash.pipeline",
                "format_version": 1,
                "hooks": hooks,
                "stash": {
                    **settings,
                    "slug": "audit",
                    "name": "Audit",
                    "description": "Old one",
                    "is_active": True,
                    "allow_anonymous": True,
                    "on_error": "hold",
                    "max_payload_bytes": 5000,
                    "queue": "slow",
                },
            },
        },
        {
            "stash": "empty",
            "number": 1,
            "by": None,
            "summary": "first kept version: created with 0 hooks",
            "document": {
                "format": "stash.pipeline",
                "format_version": 1,
                "hooks": [],
                "stash": {**settings, "slug": "empty", "name": "Empty", "is_active": False},
            },
        },
    ]


def stash_modules_loaded_by(migration):
    """The stash modules that importing ``stash.migrations.<migration>`` loads, in a fresh interpreter."""
    code = (
        f"import importlib, sys; importlib.import_module('stash.migrations.{migration}'); "
        "print(' '.join(sorted(name for name in sys.modules if name.split('.')[0] == 'stash')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings"},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()
