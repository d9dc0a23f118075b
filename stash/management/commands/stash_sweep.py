"""One sweeper pass: fail items out of attempts, send again those whose lease ran out."""

from django.core.management.base import BaseCommand

from stash import processing


class Command(BaseCommand):
    help = "Send again items left pending or processing past their lease; fail those out of attempts."

    def handle(self, *args, **options):
        report = processing.sweep()
        processing.count_sweep(report)
        self.stdout.write(f"{report.requeued} item(s) sent again, {report.failed} failed.")
