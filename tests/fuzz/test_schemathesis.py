"""Schemathesis against the live API: every operation, all checks, positive and negative data, stateful.

The run is the schemathesis CLI against ``live_server`` (a real HTTP server in this process, on the
test database), as a token-authenticated superuser, with a stash that takes anonymous submissions
and one that does not. It passes when no response is a 5xx and every response matches the schema
at ``/api/schema/`` (``schemathesis.toml`` beside this module says which operations may refuse a
schema-valid request with 400, and why).

    STASH_FUZZ_EXAMPLES   test cases per operation and phase (default 5: a short run for the suite;
                          `make chaos` sets it higher, e.g. STASH_FUZZ_EXAMPLES=200)
    STASH_FUZZ_SEED       the random seed (default: a new one each run, printed on failure)
"""

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from rest_framework.authtoken.models import Token

from stash.models import Content

pytestmark = pytest.mark.django_db(transaction=True)

EXAMPLES = int(os.environ.get("STASH_FUZZ_EXAMPLES", "5"))
SCHEMATHESIS = Path(sys.executable).with_name("schemathesis")
CONFIG = Path(__file__).with_name("schemathesis.toml")


@pytest.fixture
def api_data(make_stash, django_user_model, settings):
    # The fuzzer is one client sending thousands of requests: throttling it tests nothing.
    settings.STASH_THROTTLE_RATES = {scope: "100000/minute" for scope in settings.STASH_THROTTLE_RATES}
    audit = make_stash(
        "audit", hooks=[("require_fields", {"fields": ["text"]}), ("keyword_blocklist", {"words": ["spam"]})]
    )
    make_stash("open", allow_anonymous=True)
    user = django_user_model.objects.create_superuser("fuzz", password="pass-word-123")
    Content.objects.create(stash=audit, payload={"text": "hello"}, submitted_by=user)
    return Token.objects.create(user=user).key


def test_the_api_answers_every_generated_request_without_a_5xx_or_a_schema_mismatch(live_server, api_data, tmp_path):
    seed = int(os.environ.get("STASH_FUZZ_SEED") or random.randrange(2**32))
    command = [
        str(SCHEMATHESIS),
        "--config-file",
        str(CONFIG),
        "run",
        f"{live_server.url}/api/schema/",
        "--checks",
        "all",
        "--mode",
        "all",
        "--phases",
        "examples,coverage,fuzzing,stateful",
        "--max-examples",
        str(EXAMPLES),
        "--seed",
        str(seed),
        "--workers",
        "1",
        "--header",
        f"Authorization: Token {api_data}",
        "--report-dir",
        str(tmp_path),
        "--no-color",
    ]
    run = subprocess.run(command, capture_output=True, text=True, timeout=3600, cwd=tmp_path)
    assert run.returncode == 0, f"schemathesis (seed {seed}) found problems:\n{run.stdout}\n{run.stderr}"
