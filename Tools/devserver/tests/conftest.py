"""Fixtures for the development server tests (helpers live in devserver_harness.py)."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any, Iterator

import pytest

from devserver_harness import DevServer


@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[Any]:
    """Factory: start_server(*args) -> DevServer; all are stopped at teardown."""
    started: list[DevServer] = []

    def start(*args: str, name: str | None = None) -> DevServer:
        server = DevServer(tmp_path / (name or f"server-{uuid.uuid4().hex[:8]}"), list(args))
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture(scope="module")
def shared_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    workdir = tmp_path_factory.mktemp("shared")
    server = DevServer(workdir, ["--admin", "--seed", "7", "--db", str(workdir / "db.sqlite3")])
    yield server
    server.stop()
