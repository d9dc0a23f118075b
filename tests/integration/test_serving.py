"""Production serving: the processes of Procfile.prod (gunicorn, a worker, the sinks worker, beat)
run with production settings, as docs/deploy.md starts them, and serve the site, its static files
and its probes.

Each test has a var directory of its own (SQLite and the filesystem broker), so they run the same
on both backends; the deploy check itself is in tests/ops/test_security_deploy.py.
"""

import http.client
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ..chaos.processes import free_port
from ..ops.test_security_deploy import manage, production
from ..support.worker import ROOT, stop_group, wait_for

pytestmark = pytest.mark.integration

HOST = "stash.example.com"  # the ALLOWED_HOSTS of tests.ops.test_security_deploy.production
# What a reverse proxy that ends TLS sends on; gunicorn believes it from 127.0.0.1 (its default
# FORWARDED_ALLOW_IPS), so Django sees HTTPS and does not redirect.
BEHIND_TLS = {"Host": HOST, "X-Forwarded-Proto": "https"}
CSS = 'text/css; charset="utf-8"'


class Procfile:
    """``honcho -f Procfile.prod start [process]`` on a free port; its output goes to a log file."""

    def __init__(self, env, log_dir, *processes):
        self.port = free_port()
        self.log_path = Path(log_dir) / "honcho.log"
        env = {
            **env,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
            # gunicorn's control socket goes there: never over another gunicorn's on this machine.
            "XDG_RUNTIME_DIR": str(log_dir),
        }
        with open(self.log_path, "w") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "honcho", "-f", "Procfile.prod", "start", "-p", str(self.port), *processes],
                cwd=ROOT,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def log(self):
        return self.log_path.read_text(errors="replace")

    def get(self, path, headers=BEHIND_TLS, method="GET", body=None):
        """``(status, headers, body)`` of one request, redirects not followed."""
        if self.process.poll() is not None:
            pytest.fail(f"honcho exited with {self.process.returncode}:\n{self.log()}")
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            connection.request(method, path, body=body, headers=headers)
            response = connection.getresponse()
            return response.status, dict(response.getheaders()), response.read()
        except OSError:
            return None, {}, b""
        finally:
            connection.close()

    def json(self, path, status, headers=BEHIND_TLS):
        """The JSON body of a GET answered with ``status``; None if it was answered otherwise."""
        answered, _, body = self.get(path, headers=headers)
        return json.loads(body) if answered == status else None

    def post_json(self, path, data, **headers):
        return self.get(
            path,
            method="POST",
            body=json.dumps(data),
            headers={**BEHIND_TLS, "Content-Type": "application/json", **headers},
        )

    def stop(self):
        stop_group(self.process, 30)


@pytest.fixture
def run(tmp_path):
    """``run(env, *processes)``: the Procfile's processes (all by default), stopped after the test."""
    started = []

    def start(env, *processes):
        started.append(Procfile(env, tmp_path, *processes))
        return started[-1]

    yield start
    for procfile in started:
        procfile.stop()


def deployed(tmp_path, **overrides):
    """The environment of a production start, after docs/deploy.md's steps before starting."""
    env = production(tmp_path, STASH_SWEEP_INTERVAL="1", **overrides)
    for step in (["migrate", "--noinput"], ["collectstatic", "--noinput"], ["stash_demo"]):
        done = manage(env, *step)
        assert done.returncode == 0, done.stderr
    return env


def test_the_production_processes_serve_the_site_its_static_files_and_judge_items(tmp_path, run):
    site = run(deployed(tmp_path))
    wait_for(lambda: site.get("/healthz", headers={"Host": HOST})[0] == 200, message="gunicorn")
    ready = wait_for(lambda: site.json("/readyz", 200, headers={"Host": HOST}), message="a worker answering /readyz")
    # Procfile.prod names each worker after its queue: the judging one's, or the sink deliveries'.
    assert ready["worker"].split("@")[0] in ("stash", "stash.sinks")
    wait_for(
        lambda: re.search(r"sinks\.1 +\| .*stash\.sinks@\S+ ready\.", site.log()),
        message="the sinks worker of Procfile.prod",
    )
    assert ready["lag"] == {"audit": 0.0}

    # Plain HTTP is sent to HTTPS (the probes excepted); behind the proxy, pages are served.
    status, headers, _ = site.get("/admin/login/", headers={"Host": HOST})
    assert (status, headers["Location"]) == (301, f"https://{HOST}/admin/login/")
    status, _, page = site.get("/admin/login/")
    assert status == 200

    # The admin's stylesheet, linked by its hashed name, comes from WhiteNoise compressed and
    # cached for good; its plain name is served too.
    stylesheet = re.search(rb'href="(/static/admin/css/base\.[0-9a-f]{12}\.css)"', page).group(1).decode()
    status, headers, _ = site.get(stylesheet, headers={**BEHIND_TLS, "Accept-Encoding": "gzip"})
    assert (status, headers["Content-Type"], headers["Content-Encoding"]) == (200, CSS, "gzip")
    assert "immutable" in headers["Cache-Control"]
    status, headers, css = site.get("/static/admin/css/base.css")
    assert (status, headers["Content-Type"]) == (200, CSS)
    assert b"body {" in css

    # An item submitted through the API is judged by the worker.
    status, _, body = site.post_json("/api/auth/token/", {"username": "admin", "password": "admin"})
    assert status == 200, body
    token = {**BEHIND_TLS, "Authorization": f"Token {json.loads(body)['token']}"}
    status, _, body = site.post_json("/api/contents/", {"stash": "audit", "payload": {"text": "hello"}}, **token)
    assert status == 201, body
    item = f"/api/contents/{json.loads(body)['id']}/"
    wait_for(
        lambda: site.json(item, 200, headers=token)["status"] not in ("pending", "processing"), message="the verdict"
    )
    assert site.json(item, 200, headers=token)["status"] == "accepted"

    # Beat sends the sweeper (every second here) and the worker runs it.
    wait_for(
        lambda: re.search(r"Task stash\.tasks\.sweep\[[-0-9a-f]+\] succeeded", site.log()),
        message="a sweep sent by beat and run by the worker",
    )


def test_with_the_database_down_both_probes_answer_503_naming_it(tmp_path, run):
    env = production(tmp_path, DATABASE_URL="postgres://stash@127.0.0.1:1/stash")
    site = run(env, "web")
    wait_for(lambda: site.get("/healthz", headers={"Host": HOST})[0] == 503, message="gunicorn")

    status, _, body = site.get("/healthz", headers={"Host": HOST})
    assert json.loads(body) == {
        "status": "unavailable",
        "checks": {"database": "unreachable: OperationalError", "broker": "ok"},
    }
    status, _, body = site.get("/readyz", headers={"Host": HOST})
    assert status == 503
    assert json.loads(body)["checks"] == {
        "database": "unreachable: OperationalError",
        "broker": "ok",
        "workers": "no worker answered within 1 s",
        "lag": "not checked: the database is unreachable",
    }
