"""The one Django-side path. Every face (task, admin, API, form, command) calls these functions,
so the rules live here once:

- ``judging``: ``process`` claims and judges items and writes verdicts; ``sweep``, ``reprocess``
  (which leaves out items a person decided, ``decided_by_people``, unless told to include them),
  sink ``deliver``ies; ``delivery_slots``: ``delivery_slot``, at most ``STASH_SINK_CONCURRENCY``
  deliveries of one hook config at once.
- ``simulating``: ``simulate``, a stash's hooks (or a draft of them, ``drafted_hooks``) over a
  payload or an existing item (``simulation_item``), verbose or not; nothing is saved.
- ``claiming``: ``claim``, the compare-and-set that takes a batch of items for a message.
- ``submitting``: ``submit``, ``submit_many``, ``edit`` (what people and programs send) and
  ``queue_page`` (how consumers read a stash's accepted items).
- ``deadlines``: a message's ``Clock`` (its time limit, leases, which items fit); ``stopping``:
  ``recover``, for a message stopped at its time limit; ``isolation``: ``call_with_deadline``,
  how simulate and replay run hooks in a child process (``DeadlineExceeded`` past it).
- ``ordering``: ``reorder_hooks``, ``place_hooks``, ``place_dragged_hooks`` and ``move_hooks``,
  atomic under the stash's row lock (``Stash.lock``).
- ``configuring``: ``save_hook``, ``saving_hooks``, ``set_enabled``, ``duplicate_hooks`` and
  ``delete_hooks``, the admin's and the API's changes to hook configs, under the same lock;
  ``merge_secrets``, the secrets kept when params come back without them.
- ``reviewing``: ``approve``, ``reject``, ``overturn`` (items in bulk), ``decide`` (one item, only
  while it has the status the person saw), ``held_items``, ``next_held``, ``held_counts`` and
  ``with_held_counts`` (the items awaiting review), ``replay``, and ``DECIDED_STATUSES`` (an item
  the hooks are done with).
- ``housekeeping``: ``prune``, runs and final items past their retention, in short batches;
  ``exporting``: ``export_rows`` and ``write_jsonl``, a stash's items as JSON Lines.
- ``slowness``: which stashes are slow (``slow_stashes``, marked after a slow judging message,
  ``mark_stopped`` after one stopped at its time limit); ``slots``: ``judging_slot``, the share
  of judging processes a slow stash may take (``STASH_STASH_CONCURRENCY``). Both kinds of slots
  are ``cache_slots``: at most N holders of a name at once, in the shared cache.
- ``counting``: counts of what workers do that leaves no row (sweeper recoveries, sink
  deliveries), for ``/metrics``.
- ``activity``: ``hook_activity``, a stash's last 24 hours hour by hour (each hook's drop, hold
  and error rates and p95 time) and its queue lag, for its admin page.
- ``importing``: ``export_document`` and ``import_document``, a stash's pipeline as a JSON document
  (``stash.documents``), checked as the admin checks a save (``InvalidDocument``) and applied all
  or nothing (``import_permissions`` and ``missing_import_permissions``: what a user needs to
  import one); ``versions``: ``compare`` and ``restore`` the versions every change records;
  ``examples``: ``run_examples`` (golden examples, against the current or a drafted pipeline),
  ``compare_examples`` (against the live version and a draft: which examples a change breaks;
  ``ExamplesBroken`` when a stash that blocks that would have it) and ``example_from``;
  ``guarding``: ``run_checked``, a change kept only if the examples allow it, checked with no
  lock held (``PipelineChanged`` when the stash keeps changing meanwhile).
- ``one_change`` (``stash.versioning``): a block in which each stash's ``config_version`` moves
  once, however many of its rows the block writes (an admin save, an action).

Locks are always taken in one order: items, then stashes (by id), then hook configs.
"""
from .. import dispatch  # noqa: F401 - tests and callers reach the publisher through here
from ..versioning import one_change  # noqa: F401
from .activity import Unsupported as ActivityUnsupported, for_stash as hook_activity  # noqa: F401
from .configuring import (  # noqa: F401
    delete_hooks,
    duplicate_hooks,
    merge_secrets,
    save_hook,
    saving_hooks,
    set_enabled,
)
from .counting import count_sweep  # noqa: F401
from .deadlines import Clock  # noqa: F401
from .delivery_slots import SlotsTaken, delivery_slot  # noqa: F401
from .examples import (  # noqa: F401
    ExampleResult,
    ExamplesBroken,
    compare_examples,
    decider_title,
    example_from,
    run_examples,
)
from .exporting import export_rows, write_jsonl  # noqa: F401
from .guarding import CheckedChange, PipelineChanged, run_checked  # noqa: F401
from .housekeeping import BATCH_SIZE as PRUNE_BATCH_SIZE, PruneReport, prune, scheduled_prune  # noqa: F401
from .importing import (  # noqa: F401
    EXAMPLES_PERMISSIONS,
    PIPELINE_PERMISSIONS,
    ImportPlan,
    InvalidDocument,
    export_document,
    import_document,
    import_permissions,
    missing_import_permissions,
    public_document,
)
from .isolation import ChildFailed, DeadlineExceeded, Unanswered  # noqa: F401
from .judging import (  # noqa: F401
    BULK_SLICE,
    BatchReport,
    DeliveryError,
    PeoplesDecisions,
    SweepReport,
    build_pipeline,
    build_step,
    decided_by_people,
    deliver,
    forget_cached,
    item_for,
    pipeline_for,
    process,
    reprocess,
    sweep,
)
from .ordering import arrange_hooks, move_hooks, place_dragged_hooks, place_hooks, reorder_hooks  # noqa: F401
from .reviewing import (  # noqa: F401
    DECIDED_STATUSES,
    DECISIONS,
    Decision,
    ReplayChange,
    ReplayReport,
    approve,
    decide,
    decisions_for,
    held_counts,
    held_items,
    next_held,
    overturn,
    reject,
    replay,
    with_held_counts,
)
from .simulating import CONTENT_FIELD, drafted_hooks, simulate, simulation_item  # noqa: F401
from .slots import Slot, judging_slot  # noqa: F401
from .slowness import mark_stopped, slow_stashes  # noqa: F401
from .stopping import recover, token_for  # noqa: F401
from .submitting import (  # noqa: F401
    BULK_LIMIT,
    InvalidItems,
    check_key,
    check_payload,
    edit,
    may_submit,
    queue_page,
    submission_stash,
    submit,
    submit_item,
    submit_many,
    submittable_stashes,
    visible_contents,
)
from .versions import VersionDiff, compare as compare_versions, restore, shown as shown_version  # noqa: F401
