"""Shadows of a stash from the command line: start one, see its agreement report, stop it, promote it."""

import json

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from stash import processing
from stash.management.documents import read_json, refused
from stash.models import Stash
from stash.processing import limits


class Command(BaseCommand):
    help = (
        "Start a shadow of a stash (a pipeline document, or one of its saved versions, judged beside the live "
        "pipeline on a share of its live saves, its sinks off, changing no verdict), show its agreement "
        "report, stop it, or promote it to be the live pipeline (one new version, golden examples checked)."
    )

    def add_arguments(self, parser):
        actions = parser.add_subparsers(dest="action", required=True, metavar="{start,status,stop,promote}")
        start = actions.add_parser("start", help="Start a shadow of a stash.")
        start.add_argument("stash", help="Slug of the stash.")
        source = start.add_mutually_exclusive_group(required=True)
        source.add_argument("--version", type=int, metavar="N", help="Run the stash's saved version N.")
        source.add_argument(
            "--document", metavar="FILE", help="Run this pipeline document (a JSON file, or - for standard input)."
        )
        start.add_argument("--percent", type=int, required=True, help="The share of live saves it judges (1-100).")
        start.add_argument("--count", type=int, help="It finishes after this many items.")
        start.add_argument("--minutes", type=int, help="It finishes after this many minutes.")
        status = actions.add_parser("status", help="The stash's latest shadow and its agreement report.")
        status.add_argument("stash", help="Slug of the stash.")
        status.add_argument("--json", action="store_true", help="Print it as JSON, as the API answers.")
        for name, text in (("stop", "Stop the stash's running shadow."), ("promote", "Promote its latest shadow.")):
            actions.add_parser(name, help=text).add_argument("stash", help="Slug of the stash.")

    def handle(self, *args, **options):
        stash = Stash.objects.filter(slug=options["stash"]).first()
        if stash is None:
            raise CommandError(f"No stash with slug {options['stash']!r}.")
        try:
            getattr(self, options["action"])(stash, options)
        except ValidationError as exc:
            raise CommandError(_said(exc)) from exc
        except (processing.InvalidDocument, processing.ExamplesBroken) as exc:
            raise refused(exc) from exc
        except (processing.ShadowConflict, processing.Unanswered, processing.PipelineChanged) as exc:
            raise CommandError(str(exc)) from exc

    def start(self, stash, options):
        document = None
        if options["document"] is not None:
            document = read_json(options["document"], "document", check_bytes=limits.check_document_bytes)
        shadow = processing.start_shadow(
            stash,
            document=document,
            version=options["version"],
            percent=options["percent"],
            count=options["count"],
            minutes=options["minutes"],
        )
        self.stdout.write(self.style.SUCCESS(f"shadow {shadow.pk} of {stash.slug} started: {_limits(shadow)}"))

    def status(self, stash, options):
        shadow = processing.shadows_of(stash).select_related("stash").first()
        if shadow is None:
            self.stdout.write(f"{stash.slug} has no shadow.")
            return
        described = processing.described_shadow(shadow)
        if options["json"]:
            self.stdout.write(json.dumps(described, indent=2))
            return
        report = described["report"]
        self.stdout.write(f"shadow {shadow.pk} of {stash.slug}: {shadow.status}, {_limits(shadow)}")
        self.stdout.write(f"items {report['items']}, agreed {report['agreed']}, disagreed {report['disagreed']}")
        for key, count in report["matrix"].items():
            self.stdout.write(f"  {key:<24} {count}")
        for row in report["deciders"]:
            live, shadowed = row["live"] or "(none)", row["shadow"] or "(none)"
            self.stdout.write(f"  decided live by {live}, in the shadow by {shadowed}: {row['count']}")
        if report["time"]["mean_ms"] is not None:
            self.stdout.write(f"time per item: mean {report['time']['mean_ms']} ms, p95 {report['time']['p95_ms']} ms")

    def stop(self, stash, options):
        shadow = processing.running_shadow(stash)
        if shadow is None:
            raise CommandError(f"{stash.slug} has no running shadow.")
        processing.stop_shadow(shadow)
        self.stdout.write(self.style.SUCCESS(f"shadow {shadow.pk} of {stash.slug} stopped after {shadow.items} items"))

    def promote(self, stash, options):
        shadow = processing.shadows_of(stash).first()
        if shadow is None:
            raise CommandError(f"{stash.slug} has no shadow.")
        plan = processing.promote_shadow(shadow)
        if plan.version is None:
            self.stdout.write(f"shadow {shadow.pk} promoted: the live pipeline was already its own")
        else:
            self.stdout.write(self.style.SUCCESS(f"shadow {shadow.pk} promoted as version {plan.version.number}"))


def _limits(shadow):
    until = [f"{shadow.count} items"] if shadow.count is not None else []
    until += [f"{shadow.ends_at:%Y-%m-%d %H:%M} UTC"] if shadow.ends_at is not None else []
    return f"{shadow.source} on {shadow.percent}% of live saves, until {' or '.join(until)}"


def _said(exc):
    return "; ".join(f"--{field}: {' '.join(messages)}" for field, messages in exc.message_dict.items())
