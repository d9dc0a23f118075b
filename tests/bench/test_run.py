"""`make bench` in small: the runner's ``--quick`` mode end to end, on the backend this test run uses.

The runner starts its own worker and gunicorn, on a database or var directory of its own (named
after this run's, so the two passes of `make test` and `make bench` never share one), and drives
them with real saves and wrk. Behaviour only is asserted here, never a timing.
"""

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.conf import settings

ROOT = Path(__file__).resolve().parents[2]
BENCH_REDIS_DB = 11  # `make bench` uses 12, the suites 15 (and 13 by hand)
ROWS = {
    "services": [
        "| bulk:",
        "| single saves:",
        "| ORM saves in transactions:",
        "| latency p50:",
        "| latency p95:",
        "| latency p99:",
        "| API: wrk",
        "| live saves under a bulk backlog:",
        "| … bulk items still open",
        "| a fast stash while another's webhook receiver takes",
        "| … the slow stash's deliveries",
        "| profanity hook (alt-profanity-check,",
        "| `moderation_api` (sync, `timeout_ms` 400) against a service",
        "| `moderation_api` (async: 202, then a signed callback",
        "| … save → verdict p50",
        "| … save → verdict p95",
        "| … save → verdict p99 |",
        "| … save → verdict p99, 10 saves one at a time",
        "| save → verdict p99 with a 100% shadow of the same five filters",
        "| tracing on vs off: single saves",
        "| tracing on vs off: save → verdict p99",
        "| worker RSS",
    ],
    "embedded": [
        "| single saves:",
        "| latency p50:",
        "| latency p95:",
        "| latency p99:",
        "| 20 quick POSTs",
        "| live saves under a bulk backlog:",
        "| … bulk items still open",
        "| a fast stash while another's webhook receiver takes",
        "| … the slow stash's deliveries",
        "| save → verdict p99 with a 100% shadow of the same five filters",
        "| tracing on vs off: single saves",
        "| tracing on vs off: save → verdict p99",
    ],
}


def runner_options():
    """The backend pytest runs on, and where the runner keeps its own database, broker and files."""
    options = ["--var-dir", str(Path(settings.VAR_DIR) / "bench")]
    database_url = os.environ.get("DATABASE_URL", "")
    if not database_url:
        return "embedded", options
    database = urlsplit(database_url)
    bench_database = database._replace(path=f"/{database.path.strip('/')}_bench").geturl()
    broker = urlsplit(os.environ["CELERY_BROKER_URL"])._replace(path=f"/{BENCH_REDIS_DB}").geturl()
    return "services", [*options, "--database-url", bench_database, "--broker-url", broker]


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    backend, options = runner_options()
    out = tmp_path_factory.mktemp("bench")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.run",
            "--quick",
            "--backend",
            backend,
            "--report",
            str(out / "BENCHMARKS.md"),
            "--json",
            str(out / "bench.json"),
            *options,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"bench.run failed:\n{done.stdout}\n{done.stderr}"
    results = json.loads((out / "bench.json").read_text())["backends"]
    assert [r["backend"] for r in results] == [backend]
    return backend, results[0], (out / "BENCHMARKS.md").read_text()


@pytest.mark.integration
def test_both_sides_judge_every_item(quick_run):
    _backend, results, _report = quick_run
    figures = [check for check in results["checks"] if "side" in check]
    assert {check["side"] for check in figures} == {"stash", "hand"}
    for check in figures:
        assert check["saved"] == check["judged"] == check["expected"] > 0, check


@pytest.mark.integration
def test_both_sides_give_the_same_verdicts(quick_run):
    _backend, results, _report = quick_run
    comparisons = [check for check in results["checks"] if "compared" in check]
    assert comparisons
    for check in comparisons:
        assert check["compared"] > 0 and check["differing"] == 0 and check["same_payloads"], check
    counts = {}  # (row, round) -> {(accepted, saved) of each side}
    for check in results["checks"]:
        if check.get("side") and check["row"] != "api":  # wrk sends each side as many payloads as it can
            counts.setdefault((check["row"], check["round"]), set()).add((check["accepted"], check["saved"]))
    assert all(len(pairs) == 1 for pairs in counts.values()), counts
    assert any(0 < accepted < saved for pairs in counts.values() for accepted, saved in pairs)


@pytest.mark.integration
def test_every_stash_item_has_one_pipeline_run(quick_run):
    _backend, results, _report = quick_run
    stash_checks = [check for check in results["checks"] if check.get("side") == "stash"]
    assert stash_checks and all(check["runs_ok"] for check in stash_checks)


@pytest.mark.integration
def test_the_tracing_row_measures_both_phases_and_its_spans_reach_the_collector(quick_run):
    _backend, results, _report = quick_run
    (figures,) = results["rows"]["tracing"]["stash"]
    for phase in ("on", "off"):
        assert figures[phase]["single"] > 0 and 0 < figures[phase]["p50"] <= figures[phase]["p99"], figures
    assert figures["posts"] > 0, "the worker and the runner exported their spans"


@pytest.mark.integration
def test_the_shadow_row_measures_both_phases_and_the_shadow_judged_every_live_save(quick_run):
    _backend, results, _report = quick_run
    (figures,) = results["rows"]["shadow"]["stash"]
    for phase in ("on", "off"):
        assert 0 < figures[phase]["p50"] <= figures[phase]["p99"], figures
    assert figures["shadowed"] == figures["blocks"] * results["sizes"]["latency"] and figures["disagreed"] == 0, figures
    assert figures["shadow_mean_ms"] > 0, figures


@pytest.mark.integration
def test_the_report_has_every_row_and_section(quick_run):
    from bench.report import BULK_WRITES

    backend, _results, report = quick_run
    for row in ROWS[backend]:
        assert row in report, row
    assert "## Where the time goes" in report
    assert "`stash.db.bulk_sql` against Django, 200 items, ms per call (median of 5):" in report
    for title in BULK_WRITES.values():
        assert f"| {title} | " in report, title
    assert "<!-- notes -->" in report and "<!-- /notes -->" in report


@pytest.mark.integration
def test_the_slow_neighbours_deliveries_reach_its_receiver(quick_run):
    """The slow stash's webhooks go through the sinks worker to the runner's receiver on 127.0.0.1:
    the fast stash is timed while deliveries really are under way."""
    _backend, results, _report = quick_run
    figures = results["rows"]["slow_neighbour"]["stash"]
    assert figures
    for figure in figures:
        assert figure["due"] == figure["saves"] > 0, figure
        assert 0 < figure["arrived"] <= figure["due"] and figure["waiting"] == figure["due"] - figure["arrived"], figure


@pytest.mark.integration
def test_the_hook_rows_judge_both_ways_and_send_the_service_a_request_per_batch(quick_run):
    """A batched hook and its one-at-a-time twin judged the same items alike (``bench.hooks`` fails
    the run otherwise); the moderation service was asked once per item one at a time, far less batched."""
    backend, results, _report = quick_run
    if backend != "services":
        assert not {"profanity", "moderation"} & results["rows"].keys()  # PostgreSQL + Redis only
        return
    for row in ("profanity", "moderation"):
        (figures,) = results["rows"][row]["stash"]
        assert figures["batched"] > 0 and figures["single"] > 0, figures
        assert figures["rejected"] == figures["items"] // 10, figures
    (moderation,) = results["rows"]["moderation"]["stash"]
    assert moderation["requests"]["single"] == moderation["items"], moderation
    assert 0 < moderation["requests"]["batched"] <= moderation["items"] // 5, moderation


@pytest.mark.integration
def test_the_async_moderation_row_judges_every_item_through_callbacks(quick_run):
    """``moderation_api`` in async mode: every verdict came by a callback the API took (``bench.hooks``
    fails the run otherwise), one in ten rejected, and each item's save → verdict was timed."""
    backend, results, _report = quick_run
    if backend != "services":
        assert "moderation_async" not in results["rows"]  # PostgreSQL + Redis only
        return
    (figures,) = results["rows"]["moderation_async"]["stash"]
    assert figures["rate"] > 0 and figures["rejected"] == figures["items"] // 10, figures
    assert 0 < figures["requests"] <= figures["items"], figures
    assert 0 < figures["p50"] <= figures["p95"] <= figures["p99"], figures
    assert 0 < figures["idle_p50"] <= figures["idle_p95"] <= figures["idle_p99"], figures


@pytest.mark.integration
def test_bulk_sql_and_django_are_both_timed_on_200_items(quick_run):
    _backend, results, _report = quick_run
    figures = results["profile"]["bulk_sql"]
    assert (figures["rows"], figures["repeats"]) == (200, 5)
    for write in ("update", "insert"):
        assert figures[write]["bulk_sql"] > 0 and figures[write]["django"] > 0, figures


def test_rows_names_only_the_rows_there_are(capsys):
    from bench import measure, run

    assert set(run.ROW_NAMES) == {*measure.ROWS, "memory"}
    assert run.parser().parse_args(["--rows", "single, latency"]).rows == ["single", "latency"]
    with pytest.raises(SystemExit):
        run.parser().parse_args(["--rows", "single,nope"])
    assert "unknown row(s) nope" in capsys.readouterr().err
