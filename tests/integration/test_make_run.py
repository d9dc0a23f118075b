"""`make run` on another address: HOST and PORT reach the printed URL and the web process of the
Procfile, which serves there."""

import http.client
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ..chaos.processes import free_port
from ..support.worker import ROOT, stop_group, wait_for

pytestmark = pytest.mark.integration


def test_make_run_prints_and_passes_on_the_host_and_port_it_is_given():
    dry = subprocess.run(
        ["make", "-n", "run", "HOST=0.0.0.0", "PORT=9123"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert "stash runs at http://0.0.0.0:9123/  (admin: http://0.0.0.0:9123/admin/)" in dry
    assert "HOST=0.0.0.0 .venv/bin/honcho --procfile Procfile start --port 9123" in dry

    default = subprocess.run(["make", "-n", "run"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert "stash runs at http://127.0.0.1:8000/" in default


def test_the_procfiles_web_process_serves_on_the_given_port(tmp_path):
    port = free_port()
    env = {
        **{key: value for key, value in os.environ.items() if key != "DJANGO_SETTINGS_MODULE"},
        "HOST": "127.0.0.1",
        "STASH_VAR_DIR": str(tmp_path),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    with open(tmp_path / "honcho.log", "w") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "honcho", "--procfile", "Procfile", "start", "--port", str(port), "web"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:

        def answers():
            try:
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                connection.request("GET", "/healthz")
                return connection.getresponse().status
            except OSError:
                return None

        assert wait_for(answers, timeout=60, message=f"runserver on port {port}") in (200, 503)
    finally:
        stop_group(process, 10)
    assert f"127.0.0.1:{port}" in (tmp_path / "honcho.log").read_text()
