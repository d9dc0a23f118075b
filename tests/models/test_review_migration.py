"""Migration 0009_review keeps the decisions people made before reviews were kept as a history."""

import subprocess
import sys

from ..support.worker import ROOT
from .test_migrations import fresh_database  # noqa: F401 - a fixture

# An item a person decided before reviews were kept gets its decision as a review, so that judging it
# again later still says who had decided; an item the hooks judged again since gets none.
DECISIONS_MADE_BEFORE = """
import django
django.setup()
from datetime import timedelta
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone
call_command("migrate", "stash", "0008", verbosity=0)
apps = MigrationExecutor(connection).loader.project_state(("stash", "0008_pipeline_versions_examples")).apps
Stash, Content = apps.get_model("stash", "Stash"), apps.get_model("stash", "Content")
alice = apps.get_model("auth", "User").objects.create(username="alice")
stash = Stash.objects.create(slug="old", name="Old")
now = timezone.now()
Content.objects.create(stash=stash, payload={"n": 1}, status="rejected", reviewed_by=alice, reviewed_at=now,
                       review_note="spam", processed_at=now - timedelta(minutes=1))
Content.objects.create(stash=stash, payload={"n": 2}, status="accepted", reviewed_by=alice, reviewed_at=now,
                       processed_at=now + timedelta(minutes=1))
call_command("migrate", verbosity=0)
from stash.models import Review
print("reviews:", [(r.content.payload, r.decision, r.status, r.reviewer.username, r.note, r.replaced_at)
                   for r in Review.objects.all()])
"""


def test_decisions_made_before_the_history_are_kept_by_the_migration(fresh_database):  # noqa: F811
    done = subprocess.run(
        [sys.executable, "-c", DECISIONS_MADE_BEFORE],
        cwd=ROOT,
        env=fresh_database,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "reviews: [({'n': 1}, 'reject', 'rejected', 'alice', 'spam', None)]" in done.stdout
