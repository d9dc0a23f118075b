"""The one place stash reads another library's private state: each read is pinned by a test
(tests/test_compat.py) to the version that requirements.txt installs."""
from django.db import connections


def on_commit_pending(callback, using="default") -> bool:
    """Whether ``callback``, registered with ``transaction.on_commit``, still waits for the current
    transaction on ``using`` to commit: not yet run, and not dropped by a rollback (of the
    transaction, or of the savepoint it was registered in).

    Django says this nowhere in public. This reads ``connection.run_on_commit`` (Django 5.2),
    the list of waiting callbacks that a commit empties and a rollback prunes.
    """
    return any(entry[1] is callback for entry in connections[using].run_on_commit)
