"""Run golden examples, each stash's through its hooks or through a pipeline document's; fail on a mismatch."""

from django.core.management.base import BaseCommand, CommandError

from stash import processing
from stash.core import documents
from stash.management.documents import named_stash, read_json, refused
from stash.management.progress import Progress, working
from stash.models import Stash

#: Examples run in one child process (each such run given STASH_EXAMPLES_TIMEOUT): the progress's step.
CHUNK = 50


class Command(BaseCommand):
    help = (
        "Run the golden examples of the named stashes (default: every stash that has some) through their "
        "current hooks: one line per example, PASS or FAIL with what went wrong, then the total. Exits with a "
        "non-zero status if an example fails; how many have run shows on standard error meanwhile. With "
        "--pipeline FILE, the hooks are those of a pipeline document (as stash_pipeline export writes it), "
        "which is not imported: nothing changes."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "stashes",
            nargs="*",
            metavar="stash",
            help="Slug of a stash (default: every stash that has golden examples).",
        )
        parser.add_argument(
            "--pipeline",
            metavar="FILE",
            help=(
                "Run the examples through the hooks of this pipeline document (a JSON file, or - for standard input) "
                "instead of the stash's own, without importing it: the stash's examples and the document's own "
                '"examples", if it has any. It tests one stash: the one named, or else the document\'s stash.slug '
                "(if that stash does not exist yet, the document's examples alone)."
            ),
        )

    def handle(self, *args, **options):
        verbosity = options["verbosity"]
        try:
            if options["pipeline"]:
                document = read_json(options["pipeline"], "document")
                with working(self.stderr, "running the examples through the document's hooks", verbosity):
                    runs = against_document(document, options["stashes"])
            else:
                runs = self.run_all(chosen(options["stashes"]), verbosity)
        except processing.Unanswered as exc:
            raise CommandError(str(exc)) from exc
        if not runs:
            self.stdout.write("No stash has golden examples.")
        passed = failed = 0
        for where, results in runs:
            if not results:
                self.stdout.write(f"{where}: no golden examples")
            for result in results:
                if result.passed:
                    passed += 1
                    self.stdout.write(f"PASS  {where}: {result.name}")
                else:
                    failed += 1
                    self.stdout.write(self.style.ERROR(f"FAIL  {where}: {result.describe()}"))
        total = f"{passed + failed} example(s): {passed} passed, {failed} failed"
        if failed:
            raise CommandError(total)
        self.stdout.write(self.style.SUCCESS(total))

    def run_all(self, stashes, verbosity):
        """``[(slug, results)]`` of each of ``stashes``, run ``CHUNK`` examples at a time, counted on
        standard error as they run."""
        examples = {stash.slug: list(stash.examples.all()) for stash in stashes}
        runs = []
        total = sum(len(some) for some in examples.values())
        with Progress(self.stderr, "stash_test", total, verbosity, unit="examples") as progress:
            for stash in stashes:
                results, mine = [], examples[stash.slug]
                for start in range(0, len(mine), CHUNK):
                    results += processing.run_examples(stash, examples=mine[start : start + CHUNK])
                    progress.advance(len(mine[start : start + CHUNK]))
                runs.append((stash.slug, results))
        return runs


def chosen(slugs):
    """The stashes named by ``slugs`` (``CommandError`` for one that does not exist), or else every stash
    that has golden examples."""
    if not slugs:
        return list(Stash.objects.filter(examples__isnull=False).distinct().order_by("slug"))
    found = {stash.slug: stash for stash in Stash.objects.filter(slug__in=slugs)}
    for slug in slugs:
        if slug not in found:
            raise CommandError(f"No stash with slug {slug!r}.")
    return [found[slug] for slug in dict.fromkeys(slugs)]


def against_document(document, slugs):
    """``[(where, results)]``: the examples of one stash, and those the document carries, run through the
    document's hooks by a dry run of its import (nothing changes). An example the document carries just as
    the stash has it runs once."""
    if len(slugs) > 1:
        raise CommandError("--pipeline tests one stash: name one, or none for the document's own.")
    slug = slugs[0] if slugs else named_stash(document)
    if not slug:
        raise CommandError("The document names no stash (stash.slug): name the stash to test.")
    stash = Stash.objects.filter(slug=slug).first()
    if stash is None and slugs:
        raise CommandError(f"No stash with slug {slug!r}.")
    try:
        # Checks the whole document; runs its examples, or the stash's if it carries none.
        plan = processing.import_document(stash or slug, document, dry_run=True)
        if "examples" not in document:
            return [(slug, plan.results)]
        ours = (
            []
            if stash is None
            else processing.import_document(
                stash, {key: value for key, value in document.items() if key != "examples"}, dry_run=True
            ).results
        )
    except processing.InvalidDocument as exc:
        raise refused(exc) from exc
    own = {entry["name"]: entry for entry in documents.example_entries(stash.examples.all())} if stash else {}
    theirs = [
        result
        for entry, result in zip(document["examples"], plan.results, strict=True)
        if own.get(result.name) != {name: documents.example_field(entry, name) for name in documents.EXAMPLE_FIELDS}
    ]
    return [(slug, ours), (f"{slug} (document)", theirs)] if theirs else [(slug, ours)]
