"""Test harness: development servers as subprocesses on free loopback ports.

Every server is started with --exit-after, and every server a test starts is
terminated when the test (or module) ends, so no server outlives the run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import requests
from hypothesis.configuration import set_hypothesis_home_dir

# Keep Hypothesis's caches out of the work tree.
set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "jqc-devserver-hypothesis")

HERE = Path(__file__).resolve().parent
DEVSERVER = HERE.parent
REPO = DEVSERVER.parent.parent
SERVER = DEVSERVER / "server.py"
OPENAPI = REPO / "Schemas" / "openapi.yaml"
FIXTURES = REPO / "Tools" / "fixtures"

INSPECTOR = ("inspector", "inspector-pass")
AUDITOR = ("auditor", "auditor-pass")


class DevServer:
    def __init__(self, workdir: Path, args: list[str]) -> None:
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        self.port_file = workdir / "port"
        self.stdout_path = workdir / "stdout.log"
        self.stderr_path = workdir / "stderr.log"
        cmd = [
            sys.executable, str(SERVER),
            "--port", "0",
            "--port-file", str(self.port_file),
            "--exit-after", "600",  # a backstop: a module-shared server outlives a loaded run
            "--exit-with-parent",
            *args,
        ]
        self._stdout = open(self.stdout_path, "wb")
        self._stderr = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen(cmd, stdout=self._stdout, stderr=self._stderr, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while True:
            if self.port_file.exists() and self.port_file.read_text().strip():
                break
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited early ({self.proc.returncode}):\n{self.stderr()}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"server did not start:\n{self.stderr()}")
            time.sleep(0.02)
        self.port = int(self.port_file.read_text().strip())
        self.base = f"http://127.0.0.1:{self.port}"
        self.api = f"{self.base}/api/v1"
        # The "listening on" line is printed just after the port file is written.
        deadline = time.monotonic() + 10
        while "listening on" not in self.stdout() and time.monotonic() < deadline:
            time.sleep(0.02)

    def stdout(self) -> str:
        return self.stdout_path.read_text(errors="replace")

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def stop(self) -> int | None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        self._stdout.close()
        self._stderr.close()
        return self.proc.returncode

    # -- small client helpers ------------------------------------------------

    def admin(self, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        if body is None and path == "stats":
            r = requests.get(f"{self.base}/__admin/stats", timeout=10)
        else:
            r = requests.post(f"{self.base}/__admin/{path}", json=body or {}, timeout=10)
        assert r.status_code == 200, r.text
        return r.json()["data"]

    def admin_get(self, path: str) -> dict[str, Any]:
        r = requests.get(f"{self.base}/__admin/{path}", timeout=10)
        assert r.status_code == 200, r.text
        return r.json()["data"]

    def stats(self) -> dict[str, Any]:
        return self.admin("stats")

    def login(self, user: tuple[str, str] = INSPECTOR) -> dict[str, Any]:
        r = requests.post(f"{self.api}/auth/login", json={"username": user[0], "password": user[1]}, timeout=10)
        assert r.status_code == 200, r.text
        return r.json()["data"]


def envelope_error(response: requests.Response) -> str:
    body = response.json()
    assert body["ok"] is False, body
    assert body["data"] is None, body
    assert isinstance(body["error"], str) and body["error"], body
    return body["error"]


def envelope_data(response: requests.Response) -> Any:
    body = response.json()
    assert body["ok"] is True, body
    assert body["error"] is None, body
    return body["data"]


def load_fixture(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())
