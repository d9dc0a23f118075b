"""A stash's pipeline as a JSON document: export it, or import one (checked, all or nothing)."""

from django.core.management.base import BaseCommand, CommandError

from stash import processing
from stash.core import documents
from stash.management.documents import named_stash, read_json, refused
from stash.management.progress import Progress, working
from stash.models import Stash
from stash.processing import limits


class Command(BaseCommand):
    help = (
        "Export a stash's pipeline (its settings, hooks and golden examples; no secrets) as a JSON document, "
        "or import one into a stash: checked as the admin checks a save, its examples run first, and applied "
        "all or nothing as one new version."
    )

    def add_arguments(self, parser):
        actions = parser.add_subparsers(dest="action", required=True, metavar="{export,import}")
        export = actions.add_parser("export", help="Print (or write) a stash's pipeline document.")
        export.add_argument("stash", help="Slug of the stash.")
        export.add_argument("--output", "-o", metavar="FILE", help="Write to FILE instead of standard output.")
        load = actions.add_parser("import", help="Make a stash's pipeline what a document says.")
        load.add_argument("file", help="Path of the JSON document, or - for standard input.")
        load.add_argument(
            "--stash",
            metavar="SLUG",
            help="The stash to import into (created if missing); default: the document's stash.slug.",
        )
        load.add_argument("--dry-run", action="store_true", help="Only say what would change; change nothing.")

    def handle(self, *args, **options):
        if options["action"] == "export":
            self.export(options["stash"], options["output"])
        else:
            self.load(options["file"], options["stash"], options["dry_run"], options["verbosity"])

    def export(self, slug, output):
        stash = Stash.objects.filter(slug=slug).first()
        if stash is None:
            raise CommandError(f"No stash with slug {slug!r}.")
        text = documents.dumps(processing.export_document(stash)) + "\n"
        if output is None:
            self.stdout.write(text, ending="")
            return
        try:
            with open(output, "w", encoding="utf-8") as out:
                out.write(text)
        except OSError as exc:
            raise CommandError(f"Cannot write {output}: {exc.strerror or exc}.") from exc
        self.stdout.write(f"The pipeline of {stash.slug} written to {output}.")

    def load(self, source, slug, dry_run, verbosity=1):
        document = read_json(source, "document", check_bytes=limits.check_document_bytes)
        slug = slug or named_stash(document)
        if not slug:
            raise CommandError("The document names no stash (stash.slug): say which with --stash.")
        total = processing.examples_to_run(slug, document)
        try:
            if total:  # counted as they run, once the document is checked
                with Progress(self.stderr, f"import {slug}", total, verbosity, unit="golden examples") as progress:
                    plan = processing.import_document(slug, document, dry_run=dry_run, on_example=progress.update)
            else:
                with working(self.stderr, f"import {slug}: checking the document", verbosity):
                    plan = processing.import_document(slug, document, dry_run=dry_run)
        except (processing.InvalidDocument, processing.ExamplesBroken) as exc:
            raise refused(exc) from exc
        except (processing.Unanswered, processing.PipelineChanged) as exc:
            raise CommandError(str(exc)) from exc
        for change in plan.changes or ["no change"]:
            self.stdout.write(change)
        for result in plan.results:
            line = f"example {result.describe()}"
            self.stdout.write(line if result.passed else self.style.WARNING(line))
        if dry_run:
            self.stdout.write("dry run: nothing changed")
        elif plan.applied:
            self.stdout.write(self.style.SUCCESS(f"applied as version {plan.version.number}"))
            if plan.broken:
                self.stdout.write(
                    self.style.WARNING(
                        f"{len(plan.broken)} golden example(s) fail: {plan.stash.slug} takes such changes "
                        "with a warning"
                    )
                )
        else:
            self.stdout.write(f"nothing to apply: {plan.stash.slug} stays at version {plan.stash.config_version}")
