"""The progress of long commands: plain lines when piped, a bar on a terminal, nothing at -v 0."""

import io
import json
import re

import pytest
from django.core.management import call_command

from stash import processing
from stash.management.progress import Progress, working
from stash.models import Content, Example


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_piped_progress_is_a_plain_line_every_few_seconds_and_one_at_the_end():
    out, clock = io.StringIO(), Clock()
    with Progress(out, "export audit", total=3000, every=5, clock=clock) as progress:
        for _ in range(3000):
            clock.now += 0.004  # 250 items a second
            progress.advance()
    assert out.getvalue().splitlines() == [
        "export audit: 1,250 of 3,000 items (41%), 250/s",
        "export audit: 2,500 of 3,000 items (83%), 250/s",
        "export audit: 3,000 items in 12.0 s, 250/s",
    ]


def test_progress_without_a_total_counts_and_verbosity_2_writes_every_step():
    out, clock = io.StringIO(), Clock()
    with Progress(out, "prune", verbosity=2, unit="rows", clock=clock) as progress:
        for so_far in (500, 1000):
            clock.now += 1
            progress.update(so_far)
    assert out.getvalue().splitlines() == [
        "prune: 500 rows, 500/s",
        "prune: 1,000 rows, 500/s",
        "prune: 1,000 rows in 2.0 s, 500/s",
    ]


def test_verbosity_0_writes_nothing():
    out = io.StringIO()
    with Progress(out, "export audit", total=10, verbosity=0) as progress:
        list(progress.wrap(range(10)))
    with working(out, "import audit", verbosity=0):
        pass
    assert out.getvalue() == ""


def test_on_a_terminal_it_is_a_bar_with_counts_and_rate():
    out = Terminal()
    with Progress(out, "export audit", total=40) as progress:
        assert list(progress.wrap(range(40))) == list(range(40))
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue())  # without the terminal's colours
    assert "export audit" in text and "━━" in text and "40/40 items" in text and re.search(r"[\d,]+/s", text)


def test_a_step_that_cannot_count_says_what_it_does_and_how_long_it_took():
    out, clock = io.StringIO(), Clock()
    with working(out, "import audit: checking the document", clock=clock):
        clock.now += 2.5
    assert out.getvalue().splitlines() == [
        "import audit: checking the document…",
        "import audit: checking the document: done in 2.5 s",
    ]


@pytest.mark.django_db
def test_stash_export_counts_on_standard_error_and_leaves_standard_output_to_the_items(make_stash):
    stash = make_stash("audit")
    for n in range(3):
        processing.submit(stash, {"text": f"item {n}"})
    out, err = io.StringIO(), io.StringIO()
    call_command("stash_export", "audit", "-v", "2", stdout=out, stderr=err)
    assert len(out.getvalue().splitlines()) == 3 and out.getvalue().startswith('{"id":')
    steps = [line.split(",")[0] for line in err.getvalue().splitlines()]
    assert steps[:3] == [
        "export audit: 1 of 3 items (33%)",
        "export audit: 2 of 3 items (66%)",
        "export audit: 3 of 3 items (100%)",
    ]
    assert steps[3].startswith("export audit: 3 items in ")

    quiet = io.StringIO()
    call_command("stash_export", "audit", "-v", "0", stdout=io.StringIO(), stderr=quiet)
    assert quiet.getvalue() == ""


@pytest.mark.django_db
def test_stash_test_counts_the_examples_as_they_run(make_stash, monkeypatch):
    monkeypatch.setattr("stash.management.commands.stash_test.CHUNK", 2)
    stash = make_stash("audit", hooks=[("keyword_blocklist", {"words": ["spam"]})])
    for n in range(5):
        Example.objects.create(stash=stash, name=f"e{n}", payload={"text": "fine"}, verdict="accepted")
    out, err = io.StringIO(), io.StringIO()
    call_command("stash_test", "audit", "-v", "2", stdout=out, stderr=err, no_color=True)
    steps = [line.split(",")[0] for line in err.getvalue().splitlines()]
    assert steps[:3] == [
        "stash_test: 2 of 5 examples (40%)",
        "stash_test: 4 of 5 examples (80%)",
        "stash_test: 5 of 5 examples (100%)",
    ]
    assert out.getvalue().splitlines()[-1] == "5 example(s): 5 passed, 0 failed"


@pytest.mark.django_db(transaction=True)
def test_stash_reprocess_waits_counting_the_new_verdicts(make_stash, monkeypatch):
    stash = make_stash("audit", hooks=[("keyword_blocklist", {"words": ["spam"]})])
    items = [Content.objects.create(stash=stash, payload={"text": text}) for text in ("fine", "spam")]
    processing.judge([item.pk for item in items])
    # A worker that judges each message as it comes; the command counts every second (here at once).
    monkeypatch.setattr(processing.publishing, "send", lambda batch, stash=None, queue="": processing.judge(batch))
    monkeypatch.setattr("stash.management.commands.stash_reprocess.POLL", 0)
    out, err = io.StringIO(), io.StringIO()
    call_command("stash_reprocess", "--stash", "audit", "--wait", "-v", "2", stdout=out, stderr=err)
    assert out.getvalue().splitlines() == ["2 item(s) sent to be judged again.", "All 2 item(s) judged again."]
    lines = err.getvalue().splitlines()
    assert lines[0] == "sending the items to be judged again…"
    assert "judged again: 2 of 2 items (100%)" in [line.split(",")[0] for line in lines]
    assert lines[-1].startswith("judged again: 2 items in ")


@pytest.mark.django_db
def test_stash_pipeline_import_counts_the_golden_examples_as_they_run(make_stash, tmp_path):
    stash = make_stash("audit", hooks=[("keyword_blocklist", {"words": ["spam"]})])
    for n in range(3):
        Example.objects.create(stash=stash, name=f"e{n}", payload={"text": "fine"}, verdict="accepted")
    path = tmp_path / "audit.json"
    call_command("stash_pipeline", "export", "audit", "-o", str(path), stdout=io.StringIO())

    out, err = io.StringIO(), io.StringIO()
    call_command("stash_pipeline", "import", str(path), "--stash", "copy", verbosity=2, stdout=out, stderr=err)
    lines = err.getvalue().splitlines()
    assert [line.split(",")[0] for line in lines[:3]] == [
        "import copy: 1 of 3 golden examples (33%)",
        "import copy: 2 of 3 golden examples (66%)",
        "import copy: 3 of 3 golden examples (100%)",
    ]
    assert lines[3].startswith("import copy: 3 golden examples in ") and len(lines) == 4
    assert out.getvalue().splitlines()[-1] == "applied as version 1"

    # Without examples of its own, the stash's are counted; without any, it says what it checks.
    document = json.loads(path.read_text())
    del document["examples"]
    path.write_text(json.dumps(document))
    err = io.StringIO()
    call_command("stash_pipeline", "import", str(path), "--dry-run", stdout=io.StringIO(), stderr=err)
    assert err.getvalue().splitlines()[-1].startswith("import audit: 3 golden examples in ")
    err = io.StringIO()
    call_command("stash_pipeline", "import", str(path), "--stash", "new", "--dry-run", stdout=io.StringIO(), stderr=err)
    assert err.getvalue().splitlines()[0] == "import new: checking the document…"

    quiet = io.StringIO()
    call_command("stash_pipeline", "import", str(path), "--dry-run", verbosity=0, stdout=io.StringIO(), stderr=quiet)
    assert quiet.getvalue() == ""


@pytest.mark.django_db
def test_stash_pipeline_import_on_a_terminal_draws_a_bar(make_stash, tmp_path):
    stash = make_stash("audit", hooks=[("keyword_blocklist", {"words": ["spam"]})])
    Example.objects.create(stash=stash, name="e", payload={"text": "fine"}, verdict="accepted")
    path = tmp_path / "audit.json"
    call_command("stash_pipeline", "export", "audit", "-o", str(path), stdout=io.StringIO())

    err = Terminal()
    call_command("stash_pipeline", "import", str(path), "--dry-run", stdout=io.StringIO(), stderr=err)
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", err.getvalue())
    assert "import audit" in text and "━━" in text and "1/1 golden examples" in text
