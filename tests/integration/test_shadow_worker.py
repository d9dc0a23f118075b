"""A shadow with a real worker, tried as a new user would: started over the API on 50% of 1,000 live saves, its
report matches a replay of the same draft over the same items, the live verdicts and payloads are untouched,
its webhook sends nothing, it finishes at its count, and promoting it makes one version."""

import collections
from dataclasses import replace

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from stash import processing
from stash.models import Content, PipelineRun, PipelineVersion, ShadowRun
from stash.processing import building, shadow_runs

from ..hooks.test_webhook import LOOPBACK, SECRET, Receiver
from ..support.worker import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

SAVES = 1000
PERCENT = 50
#: Fewer than the 50% of SAVES it samples: it finishes at its count.
COUNT = 400
WORDS = ["spam", "offer", "free money", "act now"]


@pytest.fixture
def receiver():
    server = Receiver()
    yield server
    server.close()


@pytest.fixture
def operator(django_user_model):
    user = django_user_model.objects.create_superuser("olga", password="pass-word-123")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def payload(n):
    text = ["hello", "spam here", "an offer", "free money today", "act now", "plain"][n % 6]
    return {"text": f"{text} {n}"} if n % 17 else {"title": f"no text {n}"}


def test_a_half_shadow_of_a_thousand_saves_matches_a_replay_sends_nothing_and_promotes_as_one_version(
    worker, make_stash, receiver, operator, settings
):
    settings.STASH_WEBHOOK_ALLOWED_NETWORKS = LOOPBACK
    webhook = {"hook": "webhook", "label": "Notify", "params": {"url": receiver.url(), "secret": SECRET}}
    audit = make_stash(
        "audit",
        hooks=[
            {"hook": "require_fields", "label": "Needs text", "params": {"fields": ["text"]}},
            {"hook": "keyword_blocklist", "label": "No spam", "params": {"words": ["spam"]}},
        ],
    )
    # The receiver answers a live webhook: a control that it is reachable from the workers.
    control = make_stash("control", hooks=[webhook])
    draft = processing.export_document(audit)
    draft["hooks"][1]["params"]["words"] = WORDS
    draft["hooks"].append({**webhook, "position": 3})

    started = operator.post(
        f"/api/stashes/{audit.slug}/shadows/", {"document": draft, "percent": PERCENT, "count": COUNT}, format="json"
    )
    assert started.status_code == 201, started.json()
    shadow_id = started.json()["id"]

    items = [Content.objects.create(stash=audit, payload=payload(n)) for n in range(SAVES)]
    Content.objects.create(stash=control, payload={"text": "control"})

    def report():
        (listed,) = operator.get(f"/api/stashes/{audit.slug}/shadows/").json()
        return listed if listed["status"] == "finished" else None

    finished = wait_for(report, timeout=120, message=f"the shadow to finish at {COUNT} items")
    live = Content.objects.filter(stash=audit)
    wait_for(lambda: live.filter(status__in=["accepted", "rejected"]).count() == SAVES, timeout=120, message="verdicts")

    # It finished at its count, on items its share chose.
    assert finished["report"]["items"] == COUNT == ShadowRun.objects.filter(shadow_id=shadow_id).count()
    shadowed = list(ShadowRun.objects.filter(shadow_id=shadow_id).select_related("content__stash"))
    assert all(shadow_runs.sampled(shadow_id, run.content_id, PERCENT) for run in shadowed)

    # A replay of the same draft over the same items gives the same matrix.
    replayed = building.document_pipeline(audit, processing.shadows_of(audit).get().document)
    expected = collections.Counter()
    for run in shadowed:
        item = replace(building.item_for(run.content), payload=building.submitted_payload(run.content))
        expected[f"{run.content.status}/{replayed.looking().run(item).verdict}"] += 1
    assert finished["report"]["matrix"] == dict(expected)
    assert finished["report"]["agreed"] + finished["report"]["disagreed"] == COUNT
    assert finished["report"]["disagreed"] == sum(n for key, n in expected.items() if len(set(key.split("/"))) > 1)

    # The live verdicts are the live pipeline's, one run each, payloads as saved.
    for item in items[:50]:
        item.refresh_from_db()
        assert item.runs.count() == 1
        assert item.payload == payload(int(item.payload.get("text", item.payload.get("title")).split()[-1]))
    assert PipelineRun.objects.filter(content__stash=audit).count() == SAVES
    assert live.filter(status="rejected", reason__contains="offer").count() == 0

    # The shadow's webhook sent nothing; the control's live one did.
    wait_for(lambda: len(receiver.requests) >= 1, timeout=30, message="the control's delivery")
    assert [request["headers"]["X-Stash-Delivery"].split(":")[-1] for request in receiver.requests] == ["accept"]

    # Promoting it makes exactly one new version, which the next save is judged by.
    versions = PipelineVersion.objects.filter(stash=audit).count()
    promoted = operator.post(f"/api/stashes/{audit.slug}/shadows/{shadow_id}/promote/")
    assert promoted.status_code == 200, promoted.json()
    assert PipelineVersion.objects.filter(stash=audit).count() == versions + 1
    after = Content.objects.create(stash=audit, payload={"text": "an offer"})
    wait_for(lambda: Content.objects.get(pk=after.pk).status == "rejected", timeout=30, message="the promoted verdict")
