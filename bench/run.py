"""`make bench`: stash against the hand-written baseline, end to end, figures in docs/BENCHMARKS.md.

    python -m bench.run --backend all --report docs/BENCHMARKS.md         # the full run (make bench)
    python -m bench.run --quick --backend embedded --report /tmp/B.md     # a short one (make test)

Per backend it recreates a database (or var directory), migrates, and runs ``bench.measure`` in a
process with that backend's environment, which starts a real worker and gunicorn and drives them;
then it writes the report. Bad options, missing tools and failed checks end it with a message on
stderr and a non-zero exit.
"""

import argparse
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import time
from datetime import datetime, timezone
from importlib import metadata
from importlib.util import find_spec
from pathlib import Path

from . import backends, report
from .errors import BenchError

# bench.measure.ROWS, and memory
ROW_NAMES = (
    "bulk",
    "single",
    "orm",
    "latency",
    "api",
    "quick_posts",
    "live_under_bulk",
    "slow_neighbour",
    "profanity",
    "moderation",
    "moderation_async",
    "shadow",
    "tracing",
    "memory",
)
PACKAGES = {
    "Django": "django",
    "Celery": "celery",
    "kombu": "kombu",
    "DRF": "djangorestframework",
    "gunicorn": "gunicorn",
    "psycopg": "psycopg",
}


def parser():
    p = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--backend",
        choices=list(backends.CHOICES),
        default="all",
        help="both: services and embedded; all: those and rabbitmq",
    )
    p.add_argument("--report", type=Path, default=Path("docs/BENCHMARKS.md"), help="where the report goes")
    p.add_argument("--quick", action="store_true", help="small sizes and one round, for `make test`")
    p.add_argument("--rounds", type=positive, help="rounds per row (default: 3, or 1 with --quick)")
    p.add_argument("--json", type=Path, help="also write the raw figures and checks here")
    p.add_argument("--rows", type=rows, help="only these rows, comma-separated (e.g. single,latency)")
    p.add_argument(
        "--database-url",
        default="postgres://postgres@127.0.0.1:5432/stash_bench",
        help="services: a PostgreSQL database with 'bench' in its name; it is dropped and created",
    )
    p.add_argument("--broker-url", default="redis://127.0.0.1:6379/12", help="services: the Redis broker")
    p.add_argument(
        "--amqp-url",
        default="amqp://guest:guest@127.0.0.1:5672//",
        help="rabbitmq: the RabbitMQ broker (the queues are named for the run and deleted after)",
    )
    p.add_argument(
        "--var-dir",
        default="var/bench",
        help="base of the var directories (<it>-services, <it>-embedded); wiped at start",
    )
    p.add_argument(
        "--sinks-on-judging-queue",
        action="store_true",
        help="STASH_SINK_QUEUE blank: sink deliveries run among the judging, as before the sinks "
        "worker (to see what the slow_neighbour row catches)",
    )
    p.add_argument("--child", choices=backends.BACKENDS, help=argparse.SUPPRESS)
    p.add_argument("--results", type=Path, help=argparse.SUPPRESS)
    return p


def positive(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"not a positive whole number: {text!r}")
    return value


def rows(text):
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in ROW_NAMES]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown row(s) {', '.join(unknown) or repr(text)}; rows: {', '.join(ROW_NAMES)}"
        )
    return names


def main(argv=None):
    args = parser().parse_args(argv)
    if args.child:
        return measure_child(args)
    args.backends = backends.CHOICES[args.backend]
    started = time.monotonic()
    try:
        check_tools()
        check_report(args.report)
        backends.check_options(args)
        results = [run_backend(backend, args) for backend in args.backends]
    except BenchError as exc:
        print(f"bench: error: {exc}", file=sys.stderr)
        return 1
    meta = describe(args, started)
    report.write(args.report, results, meta)
    if args.json:
        args.json.write_text(json.dumps({"meta": meta, "backends": results}, indent=1))
    print(f"bench: report written to {args.report}")
    return 0


def measure_child(args):
    """In the backend's own process: set Django up, then measure."""
    import django

    django.setup()
    from . import measure

    try:
        measure.main(args.child, args.quick, args.results, args.rounds, args.rows)
    except BenchError as exc:
        print(f"bench: error: {exc}", file=sys.stderr)
        return 1
    return 0


def check_tools():
    if not shutil.which("wrk"):
        raise BenchError("wrk is not installed: `apt-get install -y wrk` (`make bench` installs it)")
    if find_spec("gunicorn") is None:
        raise BenchError("gunicorn is not installed: `pip install -r requirements.txt` (or `make venv`)")


def check_report(path):
    """Fail now, not after the run, if the report cannot be written."""
    if path.is_dir():
        raise BenchError(f"--report {path}: a directory; give a file path")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BenchError(f"--report {path}: cannot create its directory: {exc}") from exc
    if not os.access(path.parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise BenchError(f"--report {path}: not writable")


def run_backend(backend, args):
    """Prepare ``backend`` from scratch and measure it in a process with its environment."""
    env = backends.environment(backend, args)
    print(f"bench: {backend}: preparing {env.get('DATABASE_URL') or env['STASH_VAR_DIR']}", flush=True)
    backends.prepare(backend, env)
    results_path = Path(env["STASH_VAR_DIR"]) / "results.json"
    command = [sys.executable, "-m", "bench.run", "--child", backend, "--results", str(results_path)]
    command += ["--quick"] * args.quick + (["--rounds", str(args.rounds)] if args.rounds else [])
    command += ["--rows", ",".join(args.rows)] if args.rows else []
    done = subprocess.run(command, cwd=backends.ROOT, env=env)
    if done.returncode:
        raise BenchError(f"the {backend} run failed (exit {done.returncode}); logs in {env['STASH_VAR_DIR']}/logs")
    return json.loads(results_path.read_text())


def describe(args, started):
    """Command, date, duration, machine and versions, for the report's header."""
    command = (
        "make bench"
        if os.environ.get("MAKELEVEL") and not args.quick
        else "python -m bench.run " + shlex.join(sys.argv[1:])
    )
    versions = {
        "Python": platform.python_version(),
        **{name: metadata.version(package) for name, package in PACKAGES.items()},
        "wrk": wrk_version(),
    }
    return {
        "command": command,
        "date": f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC",
        "minutes": (time.monotonic() - started) / 60,
        "machine": machine(),
        "versions": versions,
    }


def wrk_version():
    out = subprocess.run(["wrk", "-v"], capture_output=True, text=True).stdout.split()
    return out[1] if len(out) > 1 else "?"


def machine():
    cpu = next(
        (line.split(":", 1)[1].strip() for line in read_lines("/proc/cpuinfo") if line.startswith("model name")),
        platform.processor() or "unknown CPU",
    )
    mem_kb = next((int(line.split()[1]) for line in read_lines("/proc/meminfo") if line.startswith("MemTotal")), 0)
    return f"{os.cpu_count()} CPUs (nproc), {cpu}, {mem_kb / 1024 / 1024:.1f} GiB RAM, Linux {platform.release()}"


def read_lines(path):
    try:
        return Path(path).read_text().splitlines()
    except OSError:
        return []


if __name__ == "__main__":
    sys.exit(main())
