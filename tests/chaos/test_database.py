"""The database misbehaves: its connections are cut, it is written by fifty submitters at once,
and items are edited while they are judged."""

import sqlite3
import threading
import time

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, connections
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from stash import processing
from stash.models import Content

from ..support.worker import wait_for
from .ledger import CHECKS, payload, scaled

pytestmark = [pytest.mark.chaos, pytest.mark.integration, pytest.mark.django_db(transaction=True)]

SUBMITTERS = 50


def claimed(stash):
    wait_for(lambda: Content.objects.filter(stash=stash, status="processing").exists(), message="a claimed batch")


def test_database_connections_cut(chaos, chaos_worker):
    """The database drops the worker, three times while it judges: PostgreSQL terminates every other
    connection to the test database; SQLite, a file with no server, is held by another writer instead
    (its write lock, for two seconds each time)."""
    count = scaled(40, 400)
    stash = chaos.stash("connections-cut", hooks=[*CHECKS, ("test_sleep", {"seconds": 1.5 / min(count, 200)})])
    chaos.submit_bulk(stash, [payload(i, spam=i % 7 == 0, sleep=True) for i in range(count)])
    claimed(stash)
    cut = 0
    for _ in range(3):
        cut += cut_connections() if connection.vendor == "postgresql" else hold_the_write_lock(seconds=2)
        wait_for(
            lambda: (
                Content.objects.filter(stash=stash, status="processing").exists()
                or not Content.objects.filter(stash=stash, status="pending").exists()
            ),
            message="another claim",
        )
    assert cut
    chaos.healed()
    chaos.settle()


def cut_connections():
    """Terminate this database's other backends (never another database's, never this one); how many."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return cursor.fetchone()[0]


def hold_the_write_lock(seconds):
    """Take the SQLite file's write lock from a connection of its own and keep it ``seconds``; 1."""
    other = sqlite3.connect(connection.settings_dict["NAME"], isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        time.sleep(seconds)
        other.execute("COMMIT")
    finally:
        other.close()
    return 1


def test_fifty_concurrent_submissions(chaos, chaos_worker):
    """Fifty API clients submit at the same moment (SQLite: no "database is locked") while a worker judges."""
    stash = chaos.stash("concurrent")
    user = get_user_model().objects.create_superuser("chaos", "chaos@example.com", "chaos-password")
    token = Token.objects.create(user=user).key
    rounds = scaled(1, 4)
    start = threading.Barrier(SUBMITTERS)
    answers = []

    def submitter(n):
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
        try:
            start.wait()
            for r in range(rounds):
                i = n * rounds + r
                response = client.post(
                    "/api/contents/", {"stash": stash.slug, "payload": payload(i, spam=i % 5 == 0)}, format="json"
                )
                answers.append((response.status_code, response.content[:300]))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=submitter, args=(n,)) for n in range(SUBMITTERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [answer for answer in answers if answer[0] != 201] == []
    assert len(answers) == SUBMITTERS * rounds
    chaos.track(Content.objects.filter(stash=stash))
    chaos.settle()


def test_edit_during_a_run(chaos, chaos_worker):
    """Every item is edited while its batch is being judged: the verdict is the new revision's,
    the run of the old one is dropped, and no revision is judged twice."""
    count = scaled(20, 200)
    stash = chaos.stash("edited", hooks=[*CHECKS, ("test_sleep", {"seconds": 1.0 / min(count, 200)})])
    items = chaos.submit_bulk(stash, [payload(i, sleep=True) for i in range(count)])
    claimed(stash)
    for i, item in enumerate(items):
        processing.edit_payload(item, payload(i, spam=True, sleep=True))
    chaos.healed()
    chaos.settle()
    assert set(Content.objects.filter(stash=stash).values_list("revision", "processed_revision")) == {(2, 2)}
