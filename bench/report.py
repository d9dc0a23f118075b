"""docs/BENCHMARKS.md from the runner's results: setup, one table per backend, where the time goes.

    write(Path("docs/BENCHMARKS.md"), results, meta)

Every row shows its target and whether it was met; a missed target reads **missed**. The section
between ``<!-- notes -->`` and ``<!-- /notes -->`` is kept from the existing file, for notes by hand.
"""

import json
import re
import statistics

from .baseline.checks import HOOKS

NOTES_START, NOTES_END = "<!-- notes -->", "<!-- /notes -->"
DEFAULT_NOTES = "(Notes from profiling by hand go here; `make bench` keeps this section as it is.)"
BACKEND_TITLES = {
    "services": "Services: PostgreSQL + Redis",
    "embedded": "Embedded default: SQLite + filesystem broker",
    "rabbitmq": "Services on RabbitMQ: PostgreSQL + RabbitMQ (the cache on Redis)",
}


def write(path, results, meta):
    """Write the report for ``results`` (one dict per backend) to ``path``, keeping its notes."""
    notes = existing_notes(path)
    parts = [header(results, meta)]
    for backend in results:
        parts.append(table(backend))
    parts.append(method(results))
    parts.append(where_time_goes(results))
    parts.append(f"## Notes\n\n{NOTES_START}\n{notes}\n{NOTES_END}\n")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(parts))


def existing_notes(path):
    text = path.read_text() if path.exists() else ""
    found = re.search(re.escape(NOTES_START) + r"\n?(.*?)\n?" + re.escape(NOTES_END), text, re.DOTALL)
    return found.group(1) if found else DEFAULT_NOTES


def header(results, meta):
    rounds = {backend["sizes"]["rounds"] for backend in results}
    servers = ", ".join(dict.fromkeys(value for backend in results for value in backend["servers"].values()))
    versions = ", ".join(f"{name} {version}" for name, version in meta["versions"].items())
    hooks = ", ".join(f"`{name}` `{json.dumps(params)}`" for name, params in HOOKS)
    return f"""# Benchmarks

Written by `{meta["command"]}` on {meta["date"]}; the run took {meta["minutes"]:.1f} min.
Every figure is the **median of {"/".join(map(str, sorted(rounds)))} round(s)**; in each round every row runs for stash,
then for the hand-written baseline, on the same worker, database and broker, so the ratio compares
the two under the same load. Ratios are stash ÷ hand-written.

- **Machine**: {meta["machine"]}.
- **Versions**: {versions}; servers: {servers}.
- **Processes**: one Celery worker, `celery -A hooksite worker --concurrency 2 --pool prefork -Q <stash queue>,<bench
  queue> --without-mingle --without-gossip` (DEBUG off); gunicorn, 2 sync workers; wrk, 2 threads, 16 connections;
  and the runner, all on this machine. For the slow-receiver row, as production has it, a sinks worker too
  (`--pool threads --concurrency 8 -Q <sink queue>`) and a webhook receiver, a thread of the runner.
- **Stash under test**: five filters, in order: {hooks}. The baseline (`bench/baseline/`) runs the same five
  checks in plain Python; payloads are mixed and one in ten is dropped. In every round the runner checked
  that both sides judged every item and gave the same verdict for every payload, and that every stash item
  has exactly one pipeline run.
"""


def median(backend, row, side, key=None):
    figures = backend["rows"].get(row, {}).get(side)
    if not figures:
        return None
    return statistics.median(figure[key] if key else figure for figure in figures)


def ratio(stash, hand):
    return stash / hand if stash is not None and hand else None


def met(value, minimum=None, maximum=None):
    if value is None:
        return "—"
    ok = (minimum is None or value >= minimum) and (maximum is None or value <= maximum)
    return "yes" if ok else "**missed**"


def cells(path, stash, hand, value, target, verdict):
    return f"| {path} | {stash} | {hand} | {value} | {target} | {verdict} |"


def per_second(value, unit="items/s"):
    return f"{value:,.0f} {unit}" if value is not None else "—"


def ms(value):
    return f"{value:,.1f} ms" if value is not None else "—"


def times(value):
    return f"{value:.2f}×" if value is not None else "—"


def compared_row(path, backend, row, unit, key=None, minimum=None, maximum=None, target="—", on_stash=False):
    """A row with both sides and the ratio; the target bounds the ratio, or with ``on_stash`` stash's figure."""
    stash, hand = median(backend, row, "stash", key), median(backend, row, "hand", key)
    value = ratio(stash, hand)
    return cells(
        path,
        unit(stash),
        unit(hand),
        times(value),
        target,
        met(stash if on_stash else value, minimum, maximum) if target != "—" else "—",
    )


def table(backend):
    sizes = backend["sizes"]
    lines = [
        f"## {BACKEND_TITLES[backend['backend']]}",
        "",
        "| path | stash | hand-written | ratio | target | met? |",
        "|---|---|---|---|---|---|",
    ]
    rows = ROWS[backend["backend"]]
    lines += [line for make in rows for line in make(backend, sizes)]
    return "\n".join(lines) + "\n"


def bulk_row(backend, sizes):
    yield compared_row(
        f"bulk: `submit_many` ×1,000 ↔ `bulk_create` + `judge_batch` per 100 ({sizes['bulk']:,} "
        "items, first save → last verdict)",
        backend,
        "bulk",
        per_second,
        minimum=1.0,
        target="≥ 1.0×",
    )


def single_row(backend, sizes):
    path = (
        f"single saves: `Content.objects.create` ↔ `Item.objects.create` + `judge_one` after commit "
        f"({sizes['single']:,} items, first save → last verdict)"
    )
    if backend["backend"] == "services":
        yield compared_row(path, backend, "single", per_second, minimum=2.0, target="≥ 2.0×")
    else:
        yield compared_row(
            path, backend, "single", per_second, minimum=100, target="stash ≥ 100 items/s", on_stash=True
        )


def orm_row(backend, sizes):
    stash, bulk = median(backend, "orm", "stash"), median(backend, "bulk", "stash")
    value = ratio(stash, bulk)
    yield cells(
        f"ORM saves in transactions: {sizes['orm']:,} `Content.objects.create`, "
        f"{sizes['orm_per_transaction']:,} per `atomic()` (stash only; ratio to stash's bulk)",
        per_second(stash),
        f"— (stash bulk: {per_second(bulk)})",
        times(value),
        "≥ 0.8× of bulk",
        met(value, minimum=0.8),
    )


def latency_rows(backend, sizes):
    path = f"latency {{}}: save → verdict, {sizes['latency']:,} items one at a time, idle worker"
    yield compared_row(path.format("p50"), backend, "latency", ms, key="p50")
    yield compared_row(path.format("p95"), backend, "latency", ms, key="p95")
    if backend["backend"] == "services":
        yield compared_row(path.format("p99"), backend, "latency", ms, key="p99", maximum=1.5, target="≤ 1.5×")
    else:
        yield compared_row(
            path.format("p99"), backend, "latency", ms, key="p99", maximum=250, target="stash ≤ 250 ms", on_stash=True
        )


def api_rows(backend, sizes):
    path = (
        f"API: wrk, 16 connections, {sizes['api_seconds']} s: `POST /api/contents/` ↔ `POST /bench/items/` (token auth)"
    )
    yield compared_row(
        f"{path}, req/s", backend, "api", lambda v: per_second(v, "req/s"), key="rps", minimum=1.0, target="≥ 1.0×"
    )
    yield compared_row(f"{path}, p99", backend, "api", ms, key="p99", maximum=1.5, target="≤ 1.5×")


def memory_row(backend, sizes):
    memory = backend.get("memory")
    path = "worker RSS (main + pool children) after 1,000 → after 100,000 stash items (bulk), fresh worker"
    if not memory:
        yield cells(path, "not run (`--quick`)", "—", "—", "≤ 1.10", "—")
        return
    value = memory["large_kb"] / memory["small_kb"]
    yield cells(
        path.replace("1,000", f"{memory['small']:,}").replace("100,000", f"{memory['large']:,}"),
        f"{memory['small_kb'] / 1024:,.0f} MiB → {memory['large_kb'] / 1024:,.0f} MiB",
        "—",
        times(value),
        "≤ 1.10",
        met(value, maximum=1.10),
    )


def quick_posts_row(backend, sizes):
    value = median(backend, "quick_posts", "stash")
    yield cells(
        f"{sizes['quick_posts']} quick POSTs through the API (gunicorn): last POST answered → its verdict",
        ms(value * 1000 if value is not None else None),
        "—",
        "—",
        "—",
        "—",
    )


def live_under_bulk_rows(backend, sizes):
    path = (
        f"live saves under a bulk backlog: a save every 50 ms to another stash (the baseline: `judge_one`) "
        f"while {sizes['live_bulk']:,} items are imported in bulk and judged; save → verdict {{}}"
    )
    yield compared_row(path.format("p50"), backend, "live_under_bulk", ms, key="p50")
    yield compared_row(path.format("p95"), backend, "live_under_bulk", ms, key="p95")
    yield compared_row(
        path.format("p99"),
        backend,
        "live_under_bulk",
        ms,
        key="p99",
        maximum=250,
        target="stash ≤ 250 ms",
        on_stash=True,
    )

    def still_open(side):
        figures = backend["rows"].get("live_under_bulk", {}).get(side)
        if not figures:
            return "—"
        return (
            f"{statistics.median(f['open_median'] for f in figures):,.0f} / "
            f"{statistics.median(f['open_max'] for f in figures):,.0f} ({figures[0]['saves']} saves)"
        )

    yield cells(
        "… bulk items still open at a live save: median / max", still_open("stash"), still_open("hand"), "—", "—", "—"
    )


def tracing_rows(backend, sizes):
    """Tracing on ÷ off (``bench.tracing``): stash only, the off figure in the second column."""
    figures = backend["rows"].get("tracing", {}).get("stash") or []
    measures = (
        ("single", per_second, f"single saves ({sizes['single']:,} items)", {"minimum": 0.7}),
        ("p99", ms, f"save → verdict p99 ({sizes['latency']:,} items)", {"maximum": 1.5}),
    )
    for key, unit, what, bound in measures:
        on = statistics.median(f["on"][key] for f in figures) if figures else None
        off = statistics.median(f["off"][key] for f in figures) if figures else None
        value = ratio(on, off)
        target = f"≥ {bound['minimum']}×" if "minimum" in bound else f"≤ {bound['maximum']}×"
        yield cells(
            f"tracing on vs off: {what}, OTLP/HTTP to a local collector (stash only; ratio on ÷ off)",
            f"on: {unit(on)}",
            f"— (off: {unit(off)})",
            times(value),
            target,
            met(value, **bound),
        )


def shadow_rows(backend, sizes):
    """Save → verdict p99 with a 100% shadow of the same five filters ÷ without (``bench.shadows``): stash
    only, the figure without in the second column; met while the shadow slows it by no more than its own
    hooks' time per item (p95)."""
    figures = backend["rows"].get("shadow", {}).get("stash") or []
    on = statistics.median(f["on"]["p99"] for f in figures) if figures else None
    off = statistics.median(f["off"]["p99"] for f in figures) if figures else None
    own = statistics.median(f["shadow_p95_ms"] or 0 for f in figures) if figures else None
    blocks = figures[0].get("blocks", 1) if figures else "—"
    yield cells(
        f"save → verdict p99 with a 100% shadow of the same five filters vs without ({blocks} blocks of "
        f"{sizes['latency']:,} items each way, in turn, one at a time; stash only; ratio with ÷ without)",
        f"with: {ms(on)}",
        f"— (without: {ms(off)})",
        times(ratio(on, off)),
        f"≤ without + the shadow's own time per item (p95: {ms(own)})",
        met(on, maximum=off + own) if figures else "—",
    )


def slow_neighbour_rows(backend, sizes):
    path = (
        f"a fast stash while another's webhook receiver takes {sizes['slow_delay']:g} s: a save to each every "
        f"0.5 s for {sizes['slow_seconds']} s, deliveries on the sinks worker (threads, 8); fast stash's save → "
        "verdict {}"
    )
    yield compared_row(path.format("p50"), backend, "slow_neighbour", ms, key="p50")
    yield compared_row(path.format("p95"), backend, "slow_neighbour", ms, key="p95")
    yield compared_row(
        path.format("p99"),
        backend,
        "slow_neighbour",
        ms,
        key="p99",
        maximum=250,
        target="stash ≤ 250 ms",
        on_stash=True,
    )
    figures = backend["rows"].get("slow_neighbour", {}).get("stash")
    waiting = "—"
    if figures:
        waiting = (
            f"{statistics.median(f['arrived'] for f in figures):,.0f} arrived / "
            f"{statistics.median(f['waiting'] for f in figures):,.0f} waiting (of "
            f"{statistics.median(f['due'] for f in figures):,.0f})"
        )
    yield cells("… the slow stash's deliveries when the last fast verdict was in", waiting, "—", "—", "—", "—")


def hook_rows(backend, sizes):
    """A batched hook against the same hook one item at a time (``bench.hooks``): stash only, the
    one-at-a-time figure in the second column, the ratio batched ÷ one at a time."""
    profanity = (
        f"profanity hook (alt-profanity-check, `timeout_ms` 400), {sizes['profanity']:,} items in bulk, one in "
        "ten offensive: batched (`run_many`, one model call per batch the worker judges) ↔ one at a time (`run`, "
        "one call per item), first save → last verdict (stash only; ratio batched ÷ one at a time)"
    )
    moderation = (
        f"`moderation_api` (sync, `timeout_ms` 400) against a service answering in "
        f"{sizes['moderation_latency'] * 1000:g} ms, {sizes['moderation']:,} items in bulk: one request per batch "
        "the worker judges ↔ one per item, first save → last verdict (stash only; ratio batched ÷ one at a time)"
    )
    for row, path, minimum in (("profanity", profanity, 5.0), ("moderation", moderation, None)):
        figures = backend["rows"].get(row, {}).get("stash") or []
        batched = statistics.median(f["batched"] for f in figures) if figures else None
        single = statistics.median(f["single"] for f in figures) if figures else None
        value = ratio(batched, single)
        requests = {way: [f["requests"][way] for f in figures if "requests" in f] for way in ("batched", "single")}
        asked = {way: f" ({statistics.median(n):,.0f} requests)" if n else "" for way, n in requests.items()}
        yield cells(
            path,
            f"batched: {per_second(batched)}{asked['batched']}",
            f"— (one at a time: {per_second(single)}{asked['single']})",
            times(value),
            f"≥ {minimum:g}×" if minimum else "—",
            met(value, minimum=minimum) if minimum else "—",
        )


def moderation_async_rows(backend, sizes):
    """``moderation_api`` in async mode (``bench.hooks.moderation_async``): stash only, no baseline."""
    path = (
        f"`moderation_api` (async: 202, then a signed callback through `POST /api/callbacks/<token>/` and a "
        f"resume) against a service calling back after {sizes['moderation_latency'] * 1000:g} ms, "
        f"{sizes['moderation_async']:,} single saves back to back, one in ten rejected (stash only)"
    )
    figures = backend["rows"].get("moderation_async", {}).get("stash") or []

    def mid(key):
        return statistics.median(f[key] for f in figures) if figures else None

    asked = f" ({mid('requests'):,.0f} requests)" if figures else ""
    yield cells(f"{path}: first save → last verdict", f"{per_second(mid('rate'))}{asked}", "—", "—", "—", "—")
    for key in ("p50", "p95", "p99"):
        yield cells(f"… save → verdict {key}", ms(mid(key)), "—", "—", "—", "—")
    for key in ("p50", "p95", "p99"):
        yield cells(
            f"… save → verdict {key}, {sizes['moderation_async_alone']:,} saves one at a time, each judged before "
            "the next",
            ms(mid(f"idle_{key}")),
            "—",
            "—",
            "—",
            "—",
        )


ROWS = {
    "services": [
        bulk_row,
        single_row,
        orm_row,
        latency_rows,
        api_rows,
        live_under_bulk_rows,
        slow_neighbour_rows,
        hook_rows,
        moderation_async_rows,
        shadow_rows,
        tracing_rows,
        memory_row,
    ],
    "embedded": [
        single_row,
        latency_rows,
        quick_posts_row,
        live_under_bulk_rows,
        slow_neighbour_rows,
        shadow_rows,
        tracing_rows,
    ],
    "rabbitmq": [live_under_bulk_rows, slow_neighbour_rows],
}


def method(results):
    return """## How it is measured

- **Throughput** (items/s): items saved ÷ (latest `processed_at` written by the worker − the client's clock just
  before the first save). The runner polls the database every 50 ms until no item is pending or processing.
- **Latency**: an item's `processed_at` − the client's clock just after its save committed (an on-commit callback
  registered before the save, so it runs before the save's own publish), one item at a time.
- **API**: wrk's own count and latency distribution; every response must be a 2xx with no socket error, or the
  run fails. The worker judges what was posted meanwhile; every item is judged before the next figure.
- Between figures both tables and the pipeline runs are emptied and the worker goes idle; on PostgreSQL the
  database is vacuumed then (`VACUUM (ANALYZE)`), as autovacuum would, so no figure scans the dead rows of the
  ones before it.
"""


def where_time_goes(results):
    parts = [
        "## Where the time goes",
        "",
        (
            "Measured in the runner's process before the worker starts: pending items made with `bulk_create` "
            "(nothing published), then one call of `stash.processing.judge(ids)` and of the baseline's task "
            "(`judge_batch(ids)`, `judge_one(id)`), each on fresh items; wall time of a plain call, SQL queries "
            "of another (`CaptureQueriesContext`), and the top of a cProfile of a third (stash). Then the two "
            "writes of a judged batch by `stash.db.bulk_sql` and by Django's own bulk methods, alternately, each "
            "call in a transaction of its own (its commit included)."
        ),
        "",
    ]
    for backend in results:
        if backend["profile"]:
            parts.append(profile_section(backend))
    return "\n".join(parts)


def profile_section(backend):
    profile = backend["profile"]
    calls = profile["calls"]
    lines = [
        f"### {BACKEND_TITLES[backend['backend']]}",
        "",
        "| call | items | ms | SQL queries | statements |",
        "|---|---|---|---|---|",
    ]
    for name, call in calls.items():
        side, size = name.rsplit(" ", 1)
        lines.append(f"| {side} | {size} | {call['ms']:.1f} | {call['queries']} | {call['statements']} |")
    lines += bulk_sql_lines(profile["bulk_sql"])
    for name, call in calls.items():
        if "top" in call:
            lines += [
                "",
                f"`judge()` on {name.split()[-1]} item(s), top {len(call['top'])} by cumulative time:",
                "",
                "| cumulative ms | own ms | calls | function |",
                "|---|---|---|---|",
            ]
            lines += [
                f"| {entry['cum_ms']:.1f} | {entry['own_ms']:.1f} | {entry['calls']} | `{entry['where']}` |"
                for entry in call["top"]
            ]
    return "\n".join(lines) + "\n"


BULK_WRITES = {
    "update": "verdicts: `bulk_sql.update_rows` ↔ `bulk_update` (5 fields per item, 4 alike for all)",
    "insert": "pipeline runs: `bulk_sql.insert_rows` (COPY on PostgreSQL, `bulk_create` on SQLite) ↔ `bulk_create`",
}


def bulk_sql_lines(figures):
    """What ``stash.db.bulk_sql`` buys: ms per call on both ways, and the ratio bulk_sql ÷ Django."""
    title = (
        f"`stash.db.bulk_sql` against Django, {figures['rows']} items, ms per call (median of {figures['repeats']}):"
    )
    lines = ["", title, "", "| write | bulk_sql | Django | ratio |", "|---|---|---|---|"]
    for write, title in BULK_WRITES.items():
        ours, django = figures[write]["bulk_sql"], figures[write]["django"]
        lines.append(f"| {title} | {ms(ours)} | {ms(django)} | {times(ratio(ours, django))} |")
    return lines
