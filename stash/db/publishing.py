"""Handing item ids to the workers: after commit, in chunks, never breaking the save.

Ids saved in one transaction travel together: the first save registers one on-commit callback
and later saves in the same transaction join it, so a bulk submit of 1,000 items sends
``ceil(1000 / STASH_BATCH_SIZE)`` messages, not 1,000. A publish that fails (broker down) is
logged and dropped: the item stays pending and the sweeper sends it again once its lease runs
out, so a save that returned success is still judged.

Saves of one stash that come close together share a message. A message with fewer ids than a
batch *wakes* its stash. While it waits in the queue or judges its first batch, a marker in the
cache says so, and a save of that stash publishes nothing: it *joins* the message, noting so in a
second key (on Redis the look at the marker and the note are one script; elsewhere first the note,
then a second look at the marker: a marker taken down meanwhile is put up by this save, which
publishes). Once its batch is judged, the worker takes the note (``take_joined``): if a save
joined, the marker stays up, and the worker claims the stash's items waiting for their first run
(see ``processing.judging``), batch after batch while saves keep joining; if none did, the marker
comes down in the same step (on Redis one script), and the next save publishes again. A message
holds the marker for half a lease at most, then hands what waits to a new one (``hand_over``); a
batch that fills sends a message beside it (``send_helper``), so that another worker can help. A
lone save costs its worker no query for others. The keys expire after a lease, and a claim that
fills its batch wakes the stash again; an item whose waking message is lost is sent by the
sweeper, as any lost message. Should the cache
lose the keys instead (flushed, restarted empty), saves that joined wait on a note that is gone:
each sweeper pass wakes every stash with items waiting for their first run whose marker is down
(``processing.sweeping.sweep``), so they wait a sweep interval at most, not a lease. The cache must
be one that web and worker processes share (Redis once they run on several machines).

Every message goes to the Celery queue of its items' stash (``Stash.queue``; blank: ``STASH_QUEUE``),
so a busy stash can have workers of its own: callers pass the stash's ``queue`` field as they have
it (a save, its stash; the sweeper, a column read with the ids), and items of stashes with
different queues never share a message. The markers are per stash, whatever its queue. A recovery
goes to the queue of the message it recovers.

Sink deliveries go to a queue of their own, ``STASH_SINK_QUEUE``, whatever their stash's queue:
its workers (a threads pool, where many deliveries wait on slow receivers at once) are not those
that judge, so a receiver that takes seconds to answer delays no verdict. With it blank, each goes
to the queue of its hook config's stash, as judging does.

With tracing on, the ids sent leave their transaction's span context in the cache first, for the
worker that judges them (``tracing.remember``), and a sink delivery is published in its item's trace.

Every judging message carries its hard time limit (``STASH_TIME_LIMIT``, or more for an item
whose hooks need it): see ``processing.time_limits``. A message stopped at its limit is followed by
a recovery message (``recover``). A message of a slow stash with no judging slot free is published
again, unchanged, a second or two later (``defer``; see ``processing.slots``).
"""

import json
import logging
import random
import weakref
from collections import defaultdict
from typing import NamedTuple

from celery import current_app
from django.conf import settings
from django.core.cache import DEFAULT_CACHE_ALIAS, cache, caches
from django.db import connections, transaction
from django_redis.cache import RedisCache

from stash.db import tracing
from stash.db.compat import on_commit_pending

logger = logging.getLogger(__name__)

PROCESS_TASK = "stash.tasks.process_contents"
DELIVER_TASK = "stash.tasks.deliver_sink"
RESUME_TASK = "stash.tasks.resume_run"
_RETRY_POLICY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.5}


# The batch of the transaction open on each connection (a connection belongs to one thread).
_batches: "weakref.WeakKeyDictionary[object, _Batch]" = weakref.WeakKeyDictionary()


def queue_name(queue):
    """The queue a stash's messages go to, from its ``queue`` field: blank is ``STASH_QUEUE``."""
    return queue or settings.STASH_QUEUE


class _Batch:
    """The ids of one transaction by stash (``None``: not known) and queue, sent when it commits."""

    def __init__(self):
        self.ids = defaultdict(list)

    def __call__(self):
        tracing.remember(*self.ids.values())
        for (stash, queue), ids in self.ids.items():
            send(ids, stash=stash, queue=queue)


def send_on_commit(ids, using="default", stash=None, queue=""):
    """Send ``ids`` (of ``stash``, if given) to the workers when the current transaction commits
    (now, outside one), on ``queue`` (a stash's ``queue`` field: blank is ``STASH_QUEUE``)."""
    if not ids:
        return
    connection = connections[using]
    if not connection.in_atomic_block:
        tracing.remember(ids)
        send(ids, stash=stash, queue=queue)
        return
    batch = _batches.get(connection)
    # A batch belongs to the transaction that registered it: once that one has committed or
    # rolled back, its callback is no longer pending and a new batch starts.
    if batch is None or not on_commit_pending(batch, using):
        batch = _Batch()
        _batches[connection] = batch
        transaction.on_commit(batch, using=using)
    batch.ids[stash, queue].extend(ids)


def send_each_on_commit(ids, using="default", time_limit=None, queue=""):
    """Send each of ``ids`` in a message of its own (of ``time_limit`` seconds, if given) on
    ``queue`` when the current transaction commits."""
    ids = list(ids)
    if not ids:
        return

    def send_each():
        for pk in ids:
            if time_limit is None:
                send([pk], queue=queue)
            else:
                _publish([str(pk)], queue, time_limit=time_limit)

    transaction.on_commit(send_each, using=using)


def send(ids, stash=None, queue=""):
    """Publish ``ids`` (of ``stash``, if given) in chunks on ``queue``; return how many were handed
    to the broker or to a message of their stash that waits in the queue."""
    ids = [str(pk) for pk in dict.fromkeys(ids)]
    size = max(1, settings.STASH_BATCH_SIZE)
    sent = 0
    for start in range(0, len(ids), size):
        chunk = ids[start : start + size]
        if stash is None or len(chunk) == size:
            sent += _publish(chunk, queue) and len(chunk)
        elif join_waiting_message(stash):
            sent += len(chunk)  # the stash's waiting message takes them
        elif _publish(chunk, queue, wake=stash):
            sent += len(chunk)
        else:
            message_lost(stash)
    return sent


def wake(stashes):
    """Have the items of ``stashes`` (stash id: its ``queue`` field) that wait for their first run
    claimed, unless a message already waits; return how many stashes a message was sent for."""
    woken = 0
    for stash, queue in stashes.items():
        if not put_marker_up(stash):
            continue
        if _publish([], queue, wake=stash):
            woken += 1
        else:
            message_lost(stash)
    return woken


def send_helper(stash, queue):
    """Send a message that claims the saves of ``stash`` waiting for their first run, whatever its
    marker says: the message that holds it has more than a batch to claim (``queue``: the stash's
    field)."""
    _publish([], queue, wake=stash)


def hand_over(stash, queue):
    """Saves of ``stash`` wait that a message stopping now leaves behind: send a message for
    them, or, if one already holds the marker, note them for it (``queue``: the stash's field)."""
    if wake({stash: queue}):
        return
    try:
        cache.set(_joined_key(stash), 1, timeout=settings.STASH_LEASE_SECONDS)
    except Exception:  # the sweeper wakes the stash once its marker is down
        logger.exception("Could not note the saves waiting in stash %s.", stash)


def moved(stash, queue):
    """``stash`` now has its messages sent to ``queue``: a message that holds its marker may wait
    where no worker reads any more, so the marker comes down and a message on the new queue
    claims the items waiting for their first run (those sent before are judged where they are,
    or sent again by the sweeper)."""
    message_lost(stash)
    wake({stash: queue})


def put_marker_up(stash):
    """Put the marker of ``stash`` up: saves from now on join the message that holds it. False if
    it was up (another message holds it). A cache that fails says True (and saves publish)."""
    try:
        return cache.add(_waiting_key(stash), 1, timeout=settings.STASH_LEASE_SECONDS)
    except Exception:
        logger.exception("Could not read the waiting-message marker of stash %s; publishing.", stash)
        return True


def join_waiting_message(stash):
    """Have the message that holds the marker of ``stash`` take a save, if one does: True if the
    save joined it; False if the marker was down and this save put it up, or the cache failed: the
    save then publishes.

    On Redis it is one round trip: a script looks at the marker and, finding it up, notes that a
    save joined, with nothing between the two (``_JOIN``). Elsewhere the marker is put up if it is
    down; if it was up, the save notes that it joined and looks at the marker again: one taken down
    meanwhile is put up by this save, which publishes."""
    lease = settings.STASH_LEASE_SECONDS
    try:
        client = _redis()
        if client is not None:
            join = client.register_script(_JOIN)  # sent by its digest; the script itself only once
            return bool(join(keys=_marker_keys(stash), args=[lease]))
        if put_marker_up(stash):
            return False
        cache.set(_joined_key(stash), 1, timeout=lease)
    except Exception:
        logger.exception("Could not read the waiting-message marker of stash %s; publishing.", stash)
        return False
    return not put_marker_up(stash)


# KEYS: the marker, the note of joined saves; ARGV: the lease in seconds. 0: the marker was down
# and is up now (the save publishes); 1: it was up, and the note says a save joined.
_JOIN = """
if redis.call('SET', KEYS[1], 1, 'NX', 'EX', ARGV[1]) then return 0 end
redis.call('SET', KEYS[2], 1, 'EX', ARGV[1])
return 1
"""


#: What ``take_joined`` found: no save joined (the marker is down); saves joined and the marker
#: stays up, held by the caller; saves joined but another message holds the marker.
NONE_JOINED, HOLDING, JOINED = "none", "holding", "joined"


def take_joined(stash):
    """Take the note of saves that joined the message holding the marker of ``stash`` (the
    caller's). If a save joined, the marker stays up for another lease, still held by the caller:
    ``HOLDING``. If none did, the marker comes down, and the next save publishes: ``NONE_JOINED``.

    On Redis it is one step (``_NEXT``): a save either joined before it, and is in the note, or
    comes after, and publishes. Elsewhere the marker comes down, then the note (as
    ``take_marker_down``), and goes up again if a save joined: ``JOINED`` when another message put
    it up first. A cache that fails says ``JOINED``: the saves are claimed once, and the keys expire."""
    try:
        client = _redis()
        if client is not None:
            take = client.register_script(_NEXT)
            return HOLDING if take(keys=_marker_keys(stash), args=[settings.STASH_LEASE_SECONDS]) else NONE_JOINED
    except Exception:
        logger.exception("Could not clear the waiting-message marker of stash %s.", stash)
        return JOINED
    if not take_marker_down(stash):
        return NONE_JOINED
    return HOLDING if put_marker_up(stash) else JOINED


# KEYS: the marker, the note of joined saves; ARGV: the lease in seconds. 1: a save joined (the
# note is gone, the marker is up for a lease more); 0: none did (the marker is down).
_NEXT = """
if redis.call('DEL', KEYS[2]) == 1 then
  redis.call('SET', KEYS[1], 1, 'EX', ARGV[1])
  return 1
end
redis.call('DEL', KEYS[1])
return 0
"""


def take_marker_down(stash):
    """Take the marker of ``stash`` down (the next save publishes), then the note of joined saves.
    Return True if a save joined since the last call, or the cache could not tell."""
    try:
        pipeline = _pipeline()
        if pipeline is None:
            cache.delete(_waiting_key(stash))
            return bool(cache.delete(_joined_key(stash)))
        cache.client.delete(_waiting_key(stash), client=pipeline)  # one round trip on Redis, the marker first
        cache.client.delete(_joined_key(stash), client=pipeline)
        _taken_down, noted = pipeline.execute()
        return bool(noted)
    except Exception:  # the keys expire on their own; saves meanwhile wait for the sweeper at worst
        logger.exception("Could not clear the waiting-message marker of stash %s.", stash)
        return True


def message_lost(stash):
    """The message that held the marker of ``stash`` could not be published: take the marker down
    (the next save publishes) and note that saves wait, so that the stash's next message claims
    them too (the sweeper sends them otherwise)."""
    try:
        cache.delete(_waiting_key(stash))
        cache.set(_joined_key(stash), 1, timeout=settings.STASH_LEASE_SECONDS)
    except Exception:
        logger.exception("Could not clear the waiting-message marker of stash %s.", stash)


def _pipeline():
    """A pipeline of the cache's Redis (its commands sent together, in order, in one round trip, not
    as a transaction), or None (see ``_redis``): callers then make one call per command."""
    client = _redis()
    return None if client is None else client.pipeline(transaction=False)


def _redis():
    """The cache's Redis client, or None when the cache is not django-redis's or the lease is no
    time (a timeout Redis cannot set)."""
    if settings.STASH_LEASE_SECONDS <= 0 or not isinstance(caches[DEFAULT_CACHE_ALIAS], RedisCache):
        return None
    return cache.client.get_client(write=True)


def _waiting_key(stash):
    return f"stash:waiting:{stash}"


def _joined_key(stash):
    return f"stash:joined:{stash}"


def _marker_keys(stash):
    """The Redis keys of the marker of ``stash`` and of its note of joined saves, for a script."""
    return [cache.make_key(_waiting_key(stash)), cache.make_key(_joined_key(stash))]


def recover(task_id, hung, queue=""):
    """Publish the recovery of the judging message ``task_id``, stopped at its time limit (``hung``:
    while its process still ran; see ``processing.recovering``), on ``queue``, the one that message
    came from; False (logged) if the broker refused it: the sweeper acts later."""
    return _publish([], queue, recover={"recover": str(task_id), "hung": bool(hung)})


def resume(callback_id, queue=""):
    """Publish the resume of the run waiting on ``callback_id`` (answered) on ``queue`` (a stash's
    ``queue`` field); False (logged) if the broker refused it: the sweeper sends it again."""
    try:
        current_app.send_task(
            RESUME_TASK,
            args=[callback_id],
            queue=queue_name(queue),
            retry=True,
            retry_policy=_RETRY_POLICY,
            time_limit=settings.STASH_TIME_LIMIT,
        )
    except Exception:
        logger.exception("Could not publish the resume of callback %s; the sweeper will send it again.", callback_id)
        return False
    return True


def defer(ids, queue, wake=None, time_limit=None):
    """Publish a judging message again on ``queue`` (the one it came from), to start in a second or
    two (a random part of it, so deferred messages do not all come back together): its stash has
    no judging slot free (``processing.slots``). False (logged) if the broker refused it: the
    caller then judges it at once."""
    kwargs = {"wake": wake} if wake is not None else {}
    try:
        current_app.send_task(
            PROCESS_TASK,
            args=[list(ids)],
            kwargs=kwargs,
            queue=queue_name(queue),
            retry=True,
            retry_policy=_RETRY_POLICY,
            time_limit=time_limit or settings.STASH_TIME_LIMIT,
            countdown=DEFER_SECONDS * (1 + random.random()),
        )
    except Exception:
        logger.exception("Could not defer a message of %d item(s); judging it now.", len(ids))
        return False
    return True


#: Seconds a deferred message waits at least (at most twice as long) before it is tried again.
DEFER_SECONDS = 1.0


def _publish(ids, queue, wake=None, time_limit=None, recover=None):
    """Publish one message on ``queue`` (blank: ``STASH_QUEUE``); False (logged) if the broker refused it."""
    kwargs = {"wake": wake} if wake is not None else {}
    kwargs.update(recover or {})
    try:
        current_app.send_task(
            PROCESS_TASK,
            args=[ids],
            kwargs=kwargs,
            queue=queue_name(queue),
            retry=True,
            retry_policy=_RETRY_POLICY,
            time_limit=time_limit or settings.STASH_TIME_LIMIT,
        )
    except Exception:
        logger.exception("Could not publish %d item(s); the sweeper will send them again.", len(ids))
        return False
    return True


class Delivery(NamedTuple):
    """One sink callback due: its task's arguments, and the queue of the hook config's stash (where
    it goes when ``STASH_SINK_QUEUE`` is blank)."""

    config_id: int
    content_id: str
    event: str
    queue: str = ""
    revision: int | None = None  # the item's revision whose verdict it delivers (none: feedback)

    @property
    def args(self):
        args = [self.config_id, str(self.content_id), self.event]
        return args if self.revision is None else [*args, self.revision]


def sink_queue(queue=""):
    """The queue a sink delivery goes to: ``STASH_SINK_QUEUE``; blank, the queue of its hook
    config's stash (``queue``, that stash's ``queue`` field)."""
    return settings.STASH_SINK_QUEUE or queue_name(queue)


def send_deliveries(deliveries):
    """Publish one sink delivery task per ``Delivery``, on the sink queue; failures are logged, and
    the deliveries that could not be published returned."""
    unsent = []
    for delivery in deliveries:
        try:
            with tracing.continuing(delivery.content_id):  # the delivery's task joins its item's trace
                current_app.send_task(
                    DELIVER_TASK,
                    args=delivery.args,
                    queue=sink_queue(delivery.queue),
                    retry=True,
                    retry_policy=_RETRY_POLICY,
                )
        except Exception:
            logger.exception(
                "Could not publish the %s delivery of %s to hook config %s.",
                delivery.event,
                delivery.content_id,
                delivery.config_id,
            )
            unsent.append(delivery)
    return unsent


def send_delivery_later(args, countdown, retries=0, queue="", task_id=None):
    """Publish the delivery ``args`` (a ``Delivery``'s) again, to run in ``countdown`` seconds, on
    ``queue`` (blank: the sink queue), keeping its count of ``retries`` and its task id; False
    (logged) if the broker refused it."""
    try:
        current_app.send_task(
            DELIVER_TASK,
            args=list(args),
            queue=queue or sink_queue(),
            countdown=countdown,
            retries=retries,
            task_id=task_id,
            retry=True,
            retry_policy=_RETRY_POLICY,
        )
    except Exception:
        logger.exception("Could not send the delivery %s again.", list(args))
        return False
    return True


FEEDBACK_TASK = "stash.tasks.give_feedback"


def send_feedback(feedback):
    """Publish one feedback task per ``Delivery`` (its ``event``: the item's new status), on the
    sink queue, as sink deliveries go; failures are logged."""
    for one in feedback:
        try:
            with tracing.continuing(one.content_id):
                current_app.send_task(
                    FEEDBACK_TASK, args=one.args, queue=sink_queue(one.queue), retry=True, retry_policy=_RETRY_POLICY
                )
        except Exception:
            logger.exception("Could not publish the %s feedback on %s to hook config %s.", *one.args[::-1])


PRECISION_TASK = "stash.tasks.check_precision"


def send_precision_checks(checks):
    """Publish one precision check per ``(config id, stash queue)`` of ``checks``, on the sink queue
    as feedback goes; failures are logged (the hook's next decided item sends one again)."""
    for config_id, queue in checks:
        try:
            current_app.send_task(
                PRECISION_TASK, args=[config_id], queue=sink_queue(queue), retry=True, retry_policy=_RETRY_POLICY
            )
        except Exception:
            logger.exception("Could not publish the precision check of hook config %s.", config_id)


SHADOW_TASK = "stash.tasks.run_shadow"


#: Seconds a shadow's message waits before it takes the runs gathered meanwhile (on Redis): one message
#: writes the runs of many live batches, so a shadow costs about its hooks' time per item, not a write. A
#: live message that runs beside that write is slower (one CPU fewer): at one write a second, 2% of a 100%
#: shadow's live messages did, at one every two seconds 0.9% (docs/BENCHMARKS.md), and the report is still
#: two seconds behind at most.
SHADOW_GATHER_SECONDS = 2


def gather_shadow_runs(shadow_id, runs, queue=""):
    """On Redis, add ``runs`` (a shadow's runs judged in a live worker, as JSON-ready dicts) to shadow
    ``shadow_id``'s list and, unless a message is on its way for it, send one (``run_shadow`` with no
    rows) that takes the list in ``SHADOW_GATHER_SECONDS`` (``take_shadow_runs``) and writes it. False
    elsewhere, or if the cache failed: the caller writes the runs itself.

    The runs go in before the message's marker is asked for, and the message takes its marker down
    before it takes the list: a run is either in the list a message takes, or finds the marker down and
    sends a message. Runs whose message is lost wait until the marker expires (a lease) and the
    shadow's next live batch sends one."""
    client = _redis()
    if client is None:
        return False
    runs_key, marker = _shadow_keys(shadow_id)
    try:
        pipeline = client.pipeline(transaction=False)
        pipeline.rpush(runs_key, *[json.dumps(run) for run in runs])
        pipeline.expire(runs_key, settings.STASH_LEASE_SECONDS * 10)
        pipeline.set(marker, 1, nx=True, ex=settings.STASH_LEASE_SECONDS)
        first = pipeline.execute()[-1]
    except Exception:
        logger.exception("Could not gather %d run(s) of shadow %s; writing them now.", len(runs), shadow_id)
        return False
    if first:
        send_shadow(shadow_id, [], queue, countdown=SHADOW_GATHER_SECONDS)
    return True


def take_shadow_runs(shadow_id):
    """The runs gathered for shadow ``shadow_id`` (``gather_shadow_runs``), as JSON text, one string a run,
    taken off its list, its marker down first (in one transaction): runs gathered from now on send a
    message of their own."""
    client = _redis()
    if client is None:
        return []
    runs_key, marker = _shadow_keys(shadow_id)
    try:
        pipeline = client.pipeline(transaction=True)
        pipeline.delete(marker)
        pipeline.lrange(runs_key, 0, -1)
        pipeline.delete(runs_key)
        taken = pipeline.execute()[1]
    except Exception:  # the marker expires: the next live batch sends a message that takes them
        logger.exception("Could not take the runs gathered for shadow %s.", shadow_id)
        return []
    return [run.decode() if isinstance(run, bytes) else run for run in taken]


def _shadow_keys(shadow_id):
    return cache.make_key(f"stash:shadow-runs:{shadow_id}"), cache.make_key(f"stash:shadow-message:{shadow_id}")


def send_shadow(shadow_id, rows, queue="", time_limit=None, countdown=None):
    """Publish ``rows`` (``[id, revision, live verdict, live decider]`` each) for shadow ``shadow_id`` to
    judge, now; none: the message writes the runs gathered for it (``gather_shadow_runs``). False if the
    broker refused: logged, as a shadow is a sample and the items' live verdicts stand."""
    try:
        current_app.send_task(
            SHADOW_TASK,
            args=[shadow_id, rows],
            queue=queue_name(queue),
            retry=True,
            retry_policy=_RETRY_POLICY,
            time_limit=time_limit or settings.STASH_TIME_LIMIT,
            countdown=countdown,
        )
    except Exception:
        logger.exception("Could not publish %d item(s) for shadow %s; they are not shadowed.", len(rows), shadow_id)
        return False
    return True
