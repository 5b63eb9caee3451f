"""Starts development servers by forking one that has already started.

A server's start is mostly Python importing Flask, openapi-core, waitress
and PyJWT and reading the OpenAPI document: 0.84 s of CPU to its port file,
measured, and the Swift tests start about 130 servers. A fork server pays
that once (a forked server: 0.04 s to its port file): it imports everything, reads the document, then forks a child for
each server asked for, which runs `server.py`'s `main` with the asker's
arguments, working directory, environment and standard streams.

    python3 forkserver.py run [server.py's arguments]

behaves as `python3 server.py [arguments]` does: the same streams, the
server's exit status as its own, SIGTERM and SIGINT passed on to the server,
and the server killed at once when this process dies (even by SIGKILL: the
server watches the connection between them). The first `run` starts the
fork server (`forkserver.py serve SOCKET`, in a session of its own); it
stops by itself after IDLE_SECONDS with no server running and nothing
asked. Anything wrong with the fork server (it cannot be started, reached
or trusted) makes `run` start the server directly instead, saying why on
stderr: it only ever saves time.

The socket is in a directory only this user can enter, named by a hash of
this interpreter, this checkout's path, the server's sources and the OpenAPI
document, so an edited server is never served by an old fork server.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
DOCUMENT = ROOT / "Schemas" / "openapi.yaml"
IDLE_SECONDS = 60
START_SECONDS = 60
# A request is the arguments, working directory and environment as JSON.
MAX_REQUEST = 1 << 20


def key() -> str:
    # This checkout's own fork server: another clone's, even of the same
    # sources, would serve that clone's files.
    digest = hashlib.sha256(f"{sys.executable}\0{HERE}".encode())
    for path in sorted(HERE.glob("*.py")) + [DOCUMENT]:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:24]


def socket_directory() -> Path:
    """A directory of this user's, mode 0700; refused when anyone else owns it."""
    base = Path(os.environ.get("XDG_RUNTIME_DIR") or "/tmp")
    directory = base / f"jqc-devserver-{os.getuid()}"
    try:
        directory.mkdir(mode=0o700)
    except FileExistsError:
        pass
    facts = os.lstat(directory)
    if facts.st_uid != os.getuid() or facts.st_mode & 0o077 or not os.path.isdir(directory) \
            or os.path.islink(directory):
        raise OSError(f"{directory} is not a directory only this user can enter")
    return directory


# MARK: - run (the asking side)

def run(arguments: list[str]) -> int:
    try:
        connection = connect()
    except OSError as error:
        print(f"forkserver: starting the server directly ({error})", file=sys.stderr)
        return direct(arguments)
    with connection:
        request = json.dumps({"argv": arguments, "cwd": os.getcwd(), "env": dict(os.environ)}).encode()
        try:
            socket.send_fds(connection, [len(request).to_bytes(4, "big") + request], [0, 1, 2])
            pid_line = read_line(connection)
        except OSError as error:
            print(f"forkserver: starting the server directly ({error})", file=sys.stderr)
            return direct(arguments)
        if not pid_line.isdigit():
            print(f"forkserver: starting the server directly (it answered {pid_line!r})", file=sys.stderr)
            return direct(arguments)
        pid = int(pid_line)

        def pass_on(signum: int, _frame: object) -> None:
            try:
                os.kill(pid, signum)
            except ProcessLookupError:
                pass

        signal.signal(signal.SIGTERM, pass_on)
        signal.signal(signal.SIGINT, pass_on)
        answer = read_line(connection)
    if answer.startswith("exit "):
        return int(answer.split()[1])
    if answer.startswith("signal "):
        return 128 + int(answer.split()[1])
    print(f"forkserver: the server {pid} ended without a status ({answer!r})", file=sys.stderr)
    return 1


def read_line(connection: socket.socket) -> str:
    data = b""
    while not data.endswith(b"\n"):
        try:
            chunk = connection.recv(64)
        except InterruptedError:
            continue
        if not chunk:
            break
        data += chunk
    return data.decode(errors="replace").strip()


def connect() -> socket.socket:
    directory = socket_directory()
    name = key()
    path = directory / f"{name}.sock"
    if len(os.fsencode(path)) >= 108:  # sun_path's size on Linux, with its NUL
        raise OSError(f"the socket path {path} is too long for a Unix socket")
    try:
        return open_connection(path)
    except (FileNotFoundError, ConnectionRefusedError):
        pass
    # One asker starts it; the others wait on the lock, then connect.
    with open(directory / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            return open_connection(path)
        except (FileNotFoundError, ConnectionRefusedError):
            pass
        path.unlink(missing_ok=True)
        with open(directory / f"{name}.log", "ab") as log:
            subprocess.Popen(
                [sys.executable, str(Path(__file__).resolve()), "serve", str(path)],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True, close_fds=True)
        deadline = time.monotonic() + START_SECONDS
        while True:
            try:
                return open_connection(path)
            except (FileNotFoundError, ConnectionRefusedError):
                if time.monotonic() > deadline:
                    raise OSError(f"the fork server did not start in {START_SECONDS} s; see {directory / name}.log")
                time.sleep(0.02)


def open_connection(path: Path) -> socket.socket:
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(str(path))
    except OSError:
        connection.close()
        raise
    return connection


def direct(arguments: list[str]) -> int:
    os.execv(sys.executable, [sys.executable, str(HERE / "server.py")] + arguments)
    return 1  # not reached


# MARK: - serve (the fork server)

def serve(path: Path) -> int:
    sys.path.insert(0, str(HERE))
    import contract
    import server  # noqa: F401 (imported here so each fork has it)

    # What every server reads at its start, read once (api.create_app asks
    # Contract.shared with the same path).
    for without_extensions in (False, True):
        contract.Contract.shared(DOCUMENT, without_extensions=without_extensions)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(64)
    woken_read, woken_write = os.pipe()
    os.set_blocking(woken_write, False)
    signal.set_wakeup_fd(woken_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "listener")
    selector.register(woken_read, selectors.EVENT_READ, "woken")
    waiting: dict[int, socket.socket] = {}
    last_activity = time.monotonic()
    try:
        while True:
            if not waiting and time.monotonic() - last_activity > IDLE_SECONDS:
                return 0
            for selected, _ in selector.select(timeout=5):
                if selected.data == "woken":
                    os.read(woken_read, 512)
                elif selected.data == "listener":
                    connection, _ = listener.accept()
                    last_activity = time.monotonic()
                    pid = fork_server(connection, listener, [woken_read, woken_write], waiting)
                    if pid is not None:
                        waiting[pid] = connection
                    else:
                        connection.close()
            reap(waiting)
            if waiting:
                last_activity = time.monotonic()
    finally:
        # Only the fork server removes the socket (a child never returns here).
        path.unlink(missing_ok=True)


def reap(waiting: dict[int, socket.socket]) -> None:
    while waiting:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        connection = waiting.pop(pid, None)
        if connection is None:
            continue
        answer = f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else f"exit {os.waitstatus_to_exitcode(status)}"
        try:
            connection.sendall(f"{answer}\n".encode())
        except OSError:
            pass  # the asker is gone: nobody to tell
        connection.close()


def fork_server(connection: socket.socket, listener: socket.socket, own: list[int],
                waiting: dict[int, socket.socket]) -> int | None:
    fds: list[int] = []
    try:
        connection.settimeout(10)
        message, fds, _, _ = socket.recv_fds(connection, MAX_REQUEST + 4, 3)
        length = int.from_bytes(message[:4], "big")
        while len(message) < 4 + length:
            chunk = connection.recv(MAX_REQUEST)
            if not chunk:
                raise OSError("the request was cut short")
            message += chunk
        request = json.loads(message[4:4 + length])
        connection.settimeout(None)
        if len(fds) != 3:
            raise OSError(f"the request passed {len(fds)} streams, not 3")
    except (OSError, ValueError) as error:
        print(f"forkserver: a request refused: {error}", file=sys.stderr, flush=True)
        for fd in fds:
            os.close(fd)
        return None
    pid = os.fork()
    if pid == 0:
        # Nothing of the fork server's stays open in a server: not the
        # listener, nor the other servers' connections to their askers.
        for other in waiting.values():
            other.close()
        os._exit(run_child(connection, listener, own, fds, request))
    for fd in fds:
        os.close(fd)
    try:
        connection.sendall(f"{pid}\n".encode())
    except OSError:
        os.kill(pid, signal.SIGKILL)
    return pid


def run_child(connection: socket.socket, listener: socket.socket, own: list[int], fds: list[int],
              request: dict) -> int:
    try:
        listener.close()
        signal.set_wakeup_fd(-1)
        for fd in own:
            os.close(fd)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        watch_asker(connection)
        import server

        sys.argv = [str(HERE / "server.py")] + request["argv"]
        return server.main(request["argv"]) or 0
    except SystemExit as stop:
        # As the interpreter ends on it: a number is the status, anything
        # else is printed and the status is 1.
        code = stop.code
        if code is None or isinstance(code, int):
            return code or 0
        print(code, file=sys.stderr)
        return 1
    except BaseException as error:  # noqa: BLE001 (the child's last word, then its status)
        print(f"devserver: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()


def watch_asker(connection: socket.socket) -> None:
    """Ends this server at once when its asker goes (whatever ended it)."""
    import threading

    def watch() -> None:
        while True:
            try:
                if not connection.recv(64):
                    break
            except InterruptedError:
                continue
            except OSError:
                break
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, daemon=True, name="asker-watch").start()


def main() -> int:
    # Signals a parent's thread blocked stay blocked here too (server.py's
    # main says why that matters): `run` passes SIGTERM and SIGINT on, and
    # `serve` is woken by SIGCHLD to answer a server's status at once.
    signal.pthread_sigmask(signal.SIG_SETMASK, ())
    if len(sys.argv) >= 2 and sys.argv[1] == "run":
        return run(sys.argv[2:])
    if len(sys.argv) == 3 and sys.argv[1] == "serve":
        return serve(Path(sys.argv[2]))
    print("usage: forkserver.py run [server.py's arguments] | forkserver.py serve SOCKET", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
