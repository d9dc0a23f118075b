"""A stash's own Celery queue: every message about its items goes there, and only there."""

import time
from datetime import timedelta

import pytest
from django.contrib.auth.models import Permission
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from stash import processing
from stash.db import publishing
from stash.models import Content, Stash

pytestmark = pytest.mark.django_db(transaction=True)

HOOKS = [("require_fields", {"fields": ["text"]})]
MAIL = {"hook": "email", "params": {"to": ["ops@example.com"]}}


@pytest.fixture
def busy(make_stash):
    return make_stash("busy", hooks=HOOKS, queue="busy")


@pytest.fixture
def quiet(make_stash):
    return make_stash("quiet", hooks=HOOKS)


def submit(stash, **payload):
    return Content.objects.create(stash=stash, payload=payload or {"text": "hi"})


def queues_of(broker, name=publishing.PROCESS_TASK):
    """Each message's queue, with the ids it carries."""
    return [(message["queue"], message["args"][0]) for message in broker.messages if message["name"] == name]


def stash_queue_of(pk):
    return Content.objects.select_related("stash").get(pk=pk).stash.effective_queue


def assert_never_mixed(broker):
    """Every message carries items of stashes whose queue is the message's queue."""
    for queue, ids in queues_of(broker):
        assert {stash_queue_of(pk) for pk in ids} <= {queue}


# --- saves ------------------------------------------------------------------------------------


def test_a_save_goes_to_its_stash_queue_and_a_stash_without_one_to_the_default(busy, quiet, broker, settings):
    routed, default = submit(busy), submit(quiet)
    assert queues_of(broker) == [("busy", [str(routed.pk)]), (settings.STASH_QUEUE, [str(default.pk)])]


def test_saves_of_stashes_on_different_queues_never_share_a_message(busy, quiet, make_stash, broker, settings):
    settings.STASH_BATCH_SIZE = 3
    also_busy = make_stash("also-busy", hooks=HOOKS, queue="busy")
    with transaction.atomic():
        items = [submit(stash, text=str(n)) for n in range(4) for stash in (busy, quiet, also_busy)]
        Content.objects.filter(pk=items[0].pk).update()  # unrelated writes change nothing
    assert sorted(pk for _, ids in queues_of(broker) for pk in ids) == sorted(str(item.pk) for item in items)
    assert_never_mixed(broker)
    assert {queue for queue, _ in queues_of(broker)} == {"busy", settings.STASH_QUEUE}


def test_a_bulk_submission_goes_to_its_stash_queue_in_chunks(busy, broker, settings):
    settings.STASH_BATCH_SIZE = 10
    contents = processing.submit_many(busy, [{"text": str(n)} for n in range(25)])
    assert [(queue, len(ids)) for queue, ids in queues_of(broker)] == [("busy", 10), ("busy", 10), ("busy", 5)]
    assert [pk for _, ids in queues_of(broker) for pk in ids] == [str(c.pk) for c in contents]


def _api(client, stash):
    return client.post("/api/contents/", {"stash": stash.slug, "payload": {"text": "hi"}}, format="json")


def _api_bulk(client, stash):
    return client.post(
        "/api/contents/bulk/", {"stash": stash.slug, "items": [{"text": "a"}, {"text": "b"}]}, format="json"
    )


def _form(client, stash):
    return client.post(f"/s/{stash.slug}/submit/", {"text": "hi", "data": ""})


def _admin(client, stash):
    return client.post(reverse("admin:stash_content_add"), {"stash": stash.pk, "payload": '{"text": "hi"}'})


@pytest.mark.parametrize("face", [_api, _api_bulk, _form, _admin])
def test_every_face_sends_to_the_stash_queue(busy, broker, admin_user, face):
    client = APIClient()
    client.force_login(admin_user)
    response = face(client, busy)
    assert response.status_code in (200, 201, 302), response.content
    saved = {str(pk) for pk in Content.objects.filter(stash=busy).values_list("pk", flat=True)}
    assert saved and {pk for _, ids in queues_of(broker) for pk in ids} == saved
    assert {queue for queue, _ in queues_of(broker)} == {"busy"}


def test_learning_the_queue_costs_a_save_no_query(busy, broker):
    with CaptureQueriesContext(connection) as queries:
        submit(busy)
    assert [q["sql"] for q in queries.captured_queries if "stash_stash" in q["sql"]] == []
    assert queues_of(broker)[0][0] == "busy"


def test_an_api_submission_to_a_routed_stash_still_takes_three_queries(
    busy, broker, django_user_model, django_assert_num_queries
):
    submitter = django_user_model.objects.create_user("sam")
    submitter.user_permissions.add(Permission.objects.get(content_type__app_label="stash", codename="add_content"))
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=submitter).key}")
    with django_assert_num_queries(3):  # the token with its user; the stash with the permission; the insert
        assert _api(client, busy).status_code == 201
    assert queues_of(broker)[0][0] == "busy"


# --- what the workers and the sweeper send again -----------------------------------------------


def test_the_sweeper_sends_each_stash_items_again_to_its_queue(busy, quiet, broker, settings):
    past = timezone.now() - timedelta(seconds=1)
    lost = Content.objects.bulk_create(
        [Content(stash=stash, payload={"text": "x"}, lease_until=past) for stash in (busy, quiet, busy)]
    )
    crashed = Content.objects.bulk_create(
        [
            Content(stash=stash, payload={"text": "x"}, status="processing", attempts=1, lease_until=past)
            for stash in (busy, quiet)
        ]
    )
    assert processing.sweep().requeued == 5
    sent = queues_of(broker)
    assert sorted(pk for _, ids in sent for pk in ids) == sorted(str(c.pk) for c in lost + crashed)
    assert_never_mixed(broker)
    assert ("busy", sorted([str(lost[0].pk), str(lost[2].pk)])) in [(q, sorted(ids)) for q, ids in sent]  # together
    assert ("busy", [str(crashed[0].pk)]) in sent and (settings.STASH_QUEUE, [str(crashed[1].pk)]) in sent


def test_the_sweep_task_itself_stays_on_the_default_queue(settings):
    schedule = settings.CELERY_BEAT_SCHEDULE["stash-sweep"]
    assert schedule["task"] == "stash.tasks.sweep" and "queue" not in schedule.get("options", {})
    assert settings.CELERY_TASK_DEFAULT_QUEUE == settings.STASH_QUEUE


def test_reprocessing_sends_each_item_to_its_stash_queue(busy, quiet, broker):
    items = [submit(busy), submit(quiet), submit(busy)]
    broker.messages.clear()
    assert processing.reprocess(Content.objects.filter(pk__in=[i.pk for i in items])) == 3
    assert sorted(pk for _, ids in queues_of(broker) for pk in ids) == sorted(str(i.pk) for i in items)
    assert_never_mixed(broker)


def test_items_a_batch_sends_back_go_to_their_stash_queue(busy, broker):
    items = [submit(busy, text=str(n)) for n in range(3)]
    Content.objects.filter(pk__in=[i.pk for i in items]).update(attempts=1)  # each claimed once before
    broker.messages.clear()
    report = processing.judge([i.pk for i in items])
    assert (report.judged, report.released) == (1, 2)
    assert queues_of(broker) == [("busy", [str(items[1].pk)]), ("busy", [str(items[2].pk)])]  # each alone


def test_items_that_do_not_fit_in_the_time_left_go_back_to_their_stash_queue(busy, broker):
    items = [submit(busy, text=str(n)) for n in range(3)]
    broker.messages.clear()
    # An item needs its hook's 2 s and the 5 s margin: 6 s left is room for the first only.
    clock = processing.Clock(limit=8, started=time.monotonic() - 2)
    report = processing.judge([i.pk for i in items], clock=clock)
    assert (report.judged, report.released) == (1, 2)
    assert queues_of(broker) == [("busy", [str(items[1].pk), str(items[2].pk)])]


def test_a_claim_that_fills_its_batch_wakes_the_stash_on_its_queue(busy, broker, settings):
    settings.STASH_BATCH_SIZE = 2
    broker.held = True
    items = [submit(busy, text=str(n)) for n in range(5)]
    judged = 0
    while broker.messages:
        message = broker.messages.pop(0)
        assert message["queue"] == "busy"
        judged += processing.judge(*message["args"], **message["kwargs"]).judged
    assert judged == 5
    assert not Content.objects.filter(pk__in=[i.pk for i in items]).exclude(status="accepted").exists()


def test_the_items_of_a_stopped_message_are_sent_again_to_their_stash_queue(busy, quiet, broker):
    items = [submit(busy), submit(quiet)]
    stopped = processing.token_for("stopped-message")
    Content.objects.filter(pk__in=[i.pk for i in items]).update(status="processing", attempts=1, lease_token=stopped)
    broker.messages.clear()
    report = processing.recover(stopped, hung=True)
    assert report.released == 2
    assert sorted(queues_of(broker)) == sorted(
        [("busy", [str(items[0].pk)]), (publishing.queue_name(""), [str(items[1].pk)])]
    )


def test_a_recovery_goes_to_the_queue_of_the_message_it_recovers(broker):
    assert publishing.recover("stopped-message", hung=True, queue="busy")
    [message] = broker.messages
    assert (message["queue"], message["kwargs"]) == ("busy", {"recover": "stopped-message", "hung": True})


# --- sink deliveries ---------------------------------------------------------------------------


def deliveries_sent(make_stash, broker):
    """Judge an item of a stash routed to "busy" and one of a plain stash, both with an email sink;
    the sink queue each delivery is sent to, with its args."""
    routed = make_stash("routed", hooks=[*HOOKS, MAIL], queue="busy")
    plain = make_stash("plain", hooks=[*HOOKS, MAIL])
    items = [submit(routed), submit(plain)]
    report = processing.judge([i.pk for i in items])
    publishing.send_deliveries(report.deliveries)
    sent = sorted((m["queue"], m["args"]) for m in broker.messages if m["name"] == publishing.DELIVER_TASK)
    expected = [
        [stash.hooks.get(hook="email").pk, str(item.pk), "on_accept", 1]  # the revision judged
        for stash, item in zip((routed, plain), items, strict=True)
    ]
    return sent, expected


def test_sink_deliveries_go_to_the_sink_queue_whatever_their_stash_queue(make_stash, broker, settings):
    assert settings.STASH_SINK_QUEUE == f"{settings.STASH_QUEUE}.sinks"  # the default
    sent, (routed, plain) = deliveries_sent(make_stash, broker)
    assert sent == sorted([(settings.STASH_SINK_QUEUE, routed), (settings.STASH_SINK_QUEUE, plain)])


def test_with_the_sink_queue_blank_deliveries_go_to_the_queue_of_their_config_stash(make_stash, broker, settings):
    settings.STASH_SINK_QUEUE = ""
    sent, (routed, plain) = deliveries_sent(make_stash, broker)
    assert sent == sorted([("busy", routed), (settings.STASH_QUEUE, plain)])


def test_a_reviewer_verdict_reaches_the_sinks_through_the_sink_queue(make_stash, broker, admin_user, settings):
    routed = make_stash("routed", hooks=[*HOOKS, MAIL], queue="busy")
    item = submit(routed)
    Content.objects.filter(pk=item.pk).update(status="held")
    broker.messages.clear()
    assert processing.approve(Content.objects.filter(pk=item.pk), admin_user) == 1
    [message] = broker.messages
    assert (message["name"], message["queue"]) == (publishing.DELIVER_TASK, settings.STASH_SINK_QUEUE)


# --- moving a stash to another queue -----------------------------------------------------------


def test_a_stash_moved_to_another_queue_has_its_waiting_items_claimed_there(busy, broker):
    broker.held = True  # the first message waits in "busy", where no worker may read any more
    waiting = [submit(busy, text=str(n)) for n in range(3)]
    assert queues_of(broker) == [("busy", [str(waiting[0].pk)])]
    busy.queue = "elsewhere"
    busy.save()
    message = broker.messages[-1]
    assert (message["queue"], message["args"], message["kwargs"]) == ("elsewhere", [[]], {"wake": busy.pk})
    assert processing.judge(*message["args"], **message["kwargs"]).judged == 3
    later = submit(busy, text="later")
    assert broker.messages[-1]["queue"] == "elsewhere" and broker.chunks[-1] == [str(later.pk)]


def test_a_save_that_leaves_the_queue_alone_sends_nothing(busy, broker):
    busy.name = "Renamed"
    busy.save()
    assert broker.messages == []


# --- the field -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, message",
    [
        ("two words", "cannot contain blanks"),
        ("tab\tbed", "cannot contain blanks"),
        (" busy", "cannot contain blanks"),
        ("bell\x07", "cannot contain control characters"),
        ("nul\x00", "cannot contain control characters"),
        ("zero\u200bwidth", "cannot contain control characters"),
        ("a/b", "cannot contain / or \\"),
        ("amq.busy", 'starting with "amq." are reserved by RabbitMQ'),
        ("q" * 201, "at most 200 characters"),
        ("é" * 101, "at most 200 bytes in UTF-8"),
    ],
)
def test_a_queue_name_no_broker_takes_is_refused_with_the_reason(quiet, name, message):
    quiet.queue = name
    with pytest.raises(ValidationError) as caught:
        quiet.full_clean()
    assert message in " ".join(caught.value.message_dict["queue"])


@pytest.mark.parametrize("name", ["busy", "stash.busy-1", "tenant:42_b@eu", "q" * 200, "é" * 100])
def test_queue_names_brokers_take_are_accepted(quiet, name):
    quiet.queue = name
    quiet.full_clean()


def stash_form(stash, **fields):
    return {
        "name": stash.name,
        "slug": stash.slug,
        "description": "",
        "on_error": stash.on_error,
        "max_payload_bytes": stash.max_payload_bytes,
        "is_active": "on",
        "examples_policy": stash.examples_policy,
        "hooks-TOTAL_FORMS": 0,
        "hooks-INITIAL_FORMS": 0,
        "hooks-MIN_NUM_FORMS": 0,
        "hooks-MAX_NUM_FORMS": 1000,
        **fields,
    }


def test_the_admin_edits_the_queue_and_refuses_a_bad_one_on_its_field(admin_client, quiet, broker):
    url = reverse("admin:stash_stash_change", args=[quiet.pk])
    page = admin_client.get(url).content.decode()
    assert 'name="queue"' in page and "celery -A hooksite worker -Q" in page

    response = admin_client.post(url, stash_form(quiet, queue="two words"))
    assert response.status_code == 200
    assert response.context["adminform"].form.errors == {"queue": ["A queue name cannot contain blanks."]}
    assert Stash.objects.get(pk=quiet.pk).queue == ""

    version = quiet.config_version
    assert admin_client.post(url, stash_form(quiet, queue="busy")).status_code == 302
    stash = Stash.objects.get(pk=quiet.pk)
    assert (stash.queue, stash.config_version) == ("busy", version + 1)


def test_the_api_shows_the_queue_and_where_items_go(busy, quiet, admin_user, settings):
    client = APIClient()
    client.force_authenticate(admin_user)
    shown = {s["slug"]: (s["queue"], s["effective_queue"]) for s in client.get("/api/stashes/").json()}
    assert shown == {"busy": ("busy", "busy"), "quiet": ("", settings.STASH_QUEUE)}
