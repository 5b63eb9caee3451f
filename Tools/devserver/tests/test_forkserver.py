"""The fork server (forkserver.py): a server it forks behaves as one started
directly, and only ever saves time.

Each test has a fork server of its own (XDG_RUNTIME_DIR in a temporary
directory), killed at the end."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator

import pytest
import requests

from devserver_harness import DEVSERVER

FORKSERVER = DEVSERVER / "forkserver.py"
SERVER = DEVSERVER / "server.py"


def processes_naming(text: str) -> list[int]:
    """The processes whose command line contains `text`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in command:
            found.append(int(entry.name))
    return found


def parent_of(pid: int) -> int:
    # The field after the command's closing parenthesis: state, then the parent.
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rindex(")") + 2:].split()[1])


@pytest.fixture
def runtime() -> Iterator[Path]:
    # Short: a Unix socket's path has at most 107 bytes, and tmp_path's are long.
    directory = Path(tempfile.mkdtemp(prefix="fs-"))
    yield directory
    for pid in processes_naming(str(directory)):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    shutil.rmtree(directory, ignore_errors=True)


def start(runtime: Path, workdir: Path, *args: str, script: Path = FORKSERVER,
          blocked: frozenset[signal.Signals] = frozenset()) -> tuple[subprocess.Popen, int]:
    """Starts a server; `blocked`: signals the server is started with blocked,
    as a parent's thread that blocks them passes its mask on."""
    workdir.mkdir(parents=True, exist_ok=True)
    port_file = workdir / "port"
    command = [sys.executable, str(script)] + (["run"] if script == FORKSERVER else []) + [
        "--port", "0", "--port-file", str(port_file), "--exit-after", "120", "--quiet",
        "--db", str(workdir / "server.sqlite"), *args]
    process = subprocess.Popen(
        command, stdout=open(workdir / "stdout", "wb"), stderr=open(workdir / "stderr", "wb"),
        stdin=subprocess.DEVNULL, env={**os.environ, "XDG_RUNTIME_DIR": str(runtime)},
        preexec_fn=(lambda: signal.pthread_sigmask(signal.SIG_BLOCK, blocked)) if blocked else None)
    deadline = time.monotonic() + 60
    while not (port_file.exists() and port_file.read_text().strip()):
        assert process.poll() is None, (workdir / "stderr").read_text()
        assert time.monotonic() < deadline, "no port in 60 s"
        time.sleep(0.02)
    return process, int(port_file.read_text())


def logs_in(base: str, port: int) -> int:
    answer = requests.post(f"http://127.0.0.1:{port}/api/v1/auth/login",
                           json={"username": "inspector", "password": "inspector-pass"}, timeout=10)
    return answer.status_code


def refuses(port: int, within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) != 0:
                return True
        time.sleep(0.01)
    return False


def test_two_servers_are_forked_by_one_fork_server_and_answer_as_a_direct_one(runtime: Path, tmp_path: Path) -> None:
    first, first_port = start(runtime, tmp_path / "a")
    second, second_port = start(runtime, tmp_path / "b")
    direct, direct_port = start(runtime, tmp_path / "c", script=SERVER)
    try:
        assert [logs_in("a", first_port), logs_in("b", second_port)] == [logs_in("c", direct_port)] * 2 == [200, 200]
        # A forked server keeps the fork server's command line.
        named = processes_naming(f"forkserver.py serve {runtime}")
        forkers = [pid for pid in named if parent_of(pid) not in named]
        assert len(forkers) == 1, named
        assert sorted(pid for pid in named if parent_of(pid) == forkers[0]) == sorted(set(named) - set(forkers))
        assert len(named) == 3, named
        for workdir, port in (("a", first_port), ("b", second_port)):
            assert (tmp_path / workdir / "stdout").read_text() == f"listening on http://127.0.0.1:{port}\n"
    finally:
        for process in (first, second, direct):
            process.terminate()
            process.wait(timeout=30)


def test_a_server_that_refuses_its_arguments_exits_as_a_direct_one_would(runtime: Path, tmp_path: Path) -> None:
    outcomes = []
    for script in (FORKSERVER, SERVER):
        command = [sys.executable, str(script)] + (["run"] if script == FORKSERVER else []) + ["--threads", "0"]
        done = subprocess.run(command, capture_output=True, text=True, timeout=60,
                              env={**os.environ, "XDG_RUNTIME_DIR": str(runtime)})
        outcomes.append((done.returncode, "--threads must be at least 1" in done.stderr))
    assert outcomes == [(1, True), (1, True)]
    bad_flag = subprocess.run([sys.executable, str(FORKSERVER), "run", "--no-such-flag"], capture_output=True,
                              text=True, timeout=60, env={**os.environ, "XDG_RUNTIME_DIR": str(runtime)})
    assert bad_flag.returncode == 2 and "--no-such-flag" in bad_flag.stderr


def test_sigterm_is_passed_on_and_the_servers_status_returned(runtime: Path, tmp_path: Path) -> None:
    process, port = start(runtime, tmp_path / "a")
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 0
    assert "stopping: SIGTERM" in (tmp_path / "a" / "stderr").read_text()
    assert refuses(port, within=5)


# What a Swift test process's pool threads block (Dispatch's workers), and
# so every process it starts with Foundation's Process: seen in
# /proc/PID/status of servers the Swift suites started.
POOL_THREAD_MASK = frozenset({signal.SIGHUP, signal.SIGINT, signal.SIGQUIT, signal.SIGTERM, signal.SIGCHLD,
                              signal.SIGUSR1, signal.SIGUSR2, signal.SIGALRM})


@pytest.mark.parametrize("script", [FORKSERVER, SERVER], ids=["forked", "direct"])
def test_a_server_started_with_signals_blocked_still_stops_by_itself_and_on_sigterm(
        runtime: Path, tmp_path: Path, script: Path) -> None:
    # --exit-after is the server's own SIGTERM: blocked, it would stay
    # pending, and a server whose test died would run on for ever.
    # A server started directly is not named by `runtime`'s clean-up: one
    # that does not stop is killed here, not left running.
    started: list[subprocess.Popen] = []
    try:
        process, port = start(runtime, tmp_path / "a", "--exit-after", "2", script=script, blocked=POOL_THREAD_MASK)
        started.append(process)
        assert process.wait(timeout=60) == 0
        assert "stopping: --exit-after 2s elapsed" in (tmp_path / "a" / "stderr").read_text()
        assert refuses(port, within=5)
        process, port = start(runtime, tmp_path / "b", script=script, blocked=POOL_THREAD_MASK)
        started.append(process)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
        assert "stopping: SIGTERM" in (tmp_path / "b" / "stderr").read_text()
        assert refuses(port, within=5)
    finally:
        for process in started:
            if process.poll() is None:
                process.kill()
                process.wait(timeout=30)


def test_killing_the_asker_kills_its_server_at_once(runtime: Path, tmp_path: Path) -> None:
    process, port = start(runtime, tmp_path / "a")
    process.kill()
    process.wait(timeout=30)
    assert refuses(port, within=5)
    # And a restart on the same port is served.
    again, again_port = start(runtime, tmp_path / "b", "--port", str(port))
    try:
        assert again_port == port and logs_in("b", port) == 200
    finally:
        again.terminate()
        again.wait(timeout=30)


def test_a_socket_directory_others_can_enter_is_not_trusted(runtime: Path, tmp_path: Path) -> None:
    shared = runtime / f"jqc-devserver-{os.getuid()}"
    shared.mkdir()
    shared.chmod(0o777)
    process, port = start(runtime, tmp_path / "a")
    try:
        assert logs_in("a", port) == 200
        stderr = (tmp_path / "a" / "stderr").read_text()
        assert "forkserver: starting the server directly" in stderr and "only this user can enter" in stderr
        assert processes_naming(f"forkserver.py serve {runtime}") == []
        assert list(shared.iterdir()) == []
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_a_socket_path_too_long_for_a_unix_socket_starts_the_server_directly(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 100)
    deep.mkdir(mode=0o700)
    process, port = start(deep, tmp_path / "a")
    try:
        assert logs_in("a", port) == 200
        assert "is too long for a Unix socket" in (tmp_path / "a" / "stderr").read_text()
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_a_malformed_request_is_refused_and_the_fork_server_goes_on(runtime: Path, tmp_path: Path) -> None:
    first, _ = start(runtime, tmp_path / "a")
    first.terminate()
    first.wait(timeout=30)
    (path,) = (runtime / f"jqc-devserver-{os.getuid()}").glob("*.sock")
    for request in (b"\x00\x00\x00\x05{bad}", b"\x00\x00\x00\x02{}", b"\xff\xff"):
        with socket.socket(socket.AF_UNIX) as asker:
            asker.connect(str(path))
            asker.sendall(request)
            asker.shutdown(socket.SHUT_WR)
            assert asker.recv(64) == b""  # refused: closed without a pid
    again, port = start(runtime, tmp_path / "b")
    try:
        assert logs_in("b", port) == 200
        assert "forkserver: starting the server directly" not in (tmp_path / "b" / "stderr").read_text()
    finally:
        again.terminate()
        again.wait(timeout=30)
