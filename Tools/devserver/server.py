#!/usr/bin/env python3
"""Development server for the inspection sync contract (Schemas/openapi.yaml).

Run:  python3 Tools/devserver/server.py --port 8080
See Tools/devserver/README.md for the flags and the test-only admin endpoints.
"""

from __future__ import annotations

import argparse
import http
import io
import ipaddress
import json
import logging
import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from werkzeug.security import generate_password_hash  # noqa: E402
from werkzeug.serving import ThreadedWSGIServer, WSGIRequestHandler  # noqa: E402

from api import DROP_FLAG, Config, Faults, create_app  # noqa: E402
from storage import Store  # noqa: E402
from validate import FIELD_TYPES  # noqa: E402

log = logging.getLogger("devserver")

DEFAULT_USERS = [
    {"username": "inspector", "password": "inspector-pass", "role": "inspector", "display_name": "Dana Inspector"},
    {"username": "auditor", "password": "auditor-pass", "role": "auditor", "display_name": "Avery Auditor"},
]
ROLES = ("inspector", "auditor", "admin")
# A request body larger than this is not read at all: the app answers 413 and
# the connection is closed after the answer.
READ_SLACK = 1024 * 1024


# -- HTTP/1.1 keep-alive request handler ------------------------------------


class Handler(WSGIRequestHandler):
    """Werkzeug's handler, with a run_wsgi that supports HTTP/1.1 keep-alive
    (Werkzeug 3 always answers ``Connection: close``), buffers each response
    so it carries a Content-Length, can drop a connection without answering
    (fault injection), and logs without headers or query strings."""

    protocol_version = "HTTP/1.1"
    timeout = 30  # idle keep-alive connections are closed after this many seconds

    def setup(self) -> None:
        super().setup()
        # Without TCP_NODELAY, Nagle's algorithm and the client's delayed ACK
        # stall every small response on a kept-alive connection by ~40 ms.
        try:
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass  # not a TCP socket (never the case here); nothing to tune
        state = getattr(self.server, "devstate", None)
        if state is not None:
            state.count_connection()

    def _read_body(self, environ: dict[str, Any]) -> bool:
        """Read the whole request body into memory.  Returns False when the
        body was too large to read (the connection must then be closed)."""
        limit = self.server.max_body + READ_SLACK
        if environ.get("wsgi.input_terminated"):  # chunked request body
            stream = environ["wsgi.input"]
            data = stream.read(limit + 1)
            environ.pop("wsgi.input_terminated", None)
            environ.pop("HTTP_TRANSFER_ENCODING", None)
            if len(data) > limit:
                environ["wsgi.input"] = io.BytesIO(b"")
                environ["CONTENT_LENGTH"] = str(len(data))
                return False
            environ["wsgi.input"] = io.BytesIO(data)
            environ["CONTENT_LENGTH"] = str(len(data))
            return True
        raw_length = environ.get("CONTENT_LENGTH", "")
        try:
            length = int(raw_length) if raw_length else 0
        except ValueError:
            length = -1
        if length < 0:
            environ["wsgi.input"] = io.BytesIO(b"")
            environ["CONTENT_LENGTH"] = "0"
            return False
        if length > limit:
            environ["wsgi.input"] = io.BytesIO(b"")
            return False
        data = self.rfile.read(length) if length else b""
        environ["wsgi.input"] = io.BytesIO(data)
        return len(data) == length

    def run_wsgi(self) -> None:
        started = time.monotonic()
        if self.headers.get("Expect", "").lower().strip() == "100-continue":
            self.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        environ = self.make_environ()
        if not self._read_body(environ):
            self.close_connection = True

        captured: dict[str, Any] = {}

        def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            captured["status"] = status
            captured["headers"] = headers
            return lambda data: captured.setdefault("extra", []).append(data)

        try:
            result = self.server.app(environ, start_response)
            try:
                body = b"".join(captured.pop("extra", [])) + b"".join(result)
            finally:
                if hasattr(result, "close"):
                    result.close()
        except Exception:  # the Flask app handles its own errors; this is a last resort
            log.exception("request failed")
            captured = {"status": "500 INTERNAL SERVER ERROR",
                        "headers": [("Content-Type", "application/json")]}
            body = b'{"ok":false,"data":null,"error":"internal server error"}'

        path = environ.get("PATH_INFO", "?")
        if environ.get(DROP_FLAG):
            # The write is committed; the client never hears about it.
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self._log_line(self.command, path, "dropped", 0, started)
            return

        code = int(captured["status"].split(" ", 1)[0])
        try:
            reason = http.HTTPStatus(code).phrase
        except ValueError:
            reason = ""
        self.send_response_only(code, reason)
        self.send_header("Server", "jqc-devserver")
        self.send_header("Date", self.date_time_string())
        for key, value in captured["headers"]:
            if key.lower() in ("content-length", "transfer-encoding", "connection"):
                continue
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        if self.close_connection:
            self.send_header("Connection", "close")
        elif self.request_version == "HTTP/1.0":
            self.send_header("Connection", "keep-alive")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        self.wfile.flush()
        self._log_line(self.command, path, str(code), len(body), started)

    def _log_line(self, method: str, path: str, status: str, size: int, started: float) -> None:
        # Never the query string, never a header: tokens travel in headers and bodies only.
        ms = (time.monotonic() - started) * 1000.0
        safe_path = path.translate(self._control_char_table)
        sys.stderr.write(f"{time.strftime('%H:%M:%S')} {method} {safe_path} {status} {size}B {ms:.1f}ms\n")
        sys.stderr.flush()

    def log_request(self, code: Any = "-", size: Any = "-") -> None:
        pass  # run_wsgi logs its own line

    def log_message(self, format: str, *args: Any) -> None:
        # Used by http.server for malformed requests and timeouts: it may quote
        # the request line (method and path), never headers.
        sys.stderr.write(f"{time.strftime('%H:%M:%S')} {format % args}\n")
        sys.stderr.flush()

    log_error = log_message


class Server(ThreadedWSGIServer):
    daemon_threads = True
    max_body = 0
    devstate: Any = None


# -- fixtures and users -----------------------------------------------------


def normalise_id(value: Any, what: str) -> int:
    if isinstance(value, bool):
        raise SystemExit(f"fixtures: {what} id {value!r} is not an integer")
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    raise SystemExit(f"fixtures: {what} id {value!r} is not an integer")


FIELD_KEYS = {"id", "type", "label", "required", "options", "columns", "col", "row", "colSpan", "rowSpan"}


def load_fixtures(directory: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    facilities_raw = json.loads((directory / "facilities.json").read_text(encoding="utf-8"))
    templates_raw = json.loads((directory / "templates.json").read_text(encoding="utf-8"))
    facilities = []
    for f in facilities_raw:
        fid = normalise_id(f["id"], "facility")
        areas = [
            {"id": normalise_id(a["id"], "area"), "facility_id": fid, "name": str(a["name"]),
             "area_type": str(a.get("area_type", ""))}
            for a in f.get("areas", [])
        ]
        facilities.append({"id": fid, "name": str(f["name"]), "address": str(f.get("address", "")),
                           "project_name": str(f.get("project_name", "")), "areas": areas})
    templates = []
    for t in templates_raw:
        tid = normalise_id(t["id"], "template")
        fields = t["form_schema"]["fields"]
        for field in fields:
            extra = set(field) - FIELD_KEYS
            if extra:
                raise SystemExit(f"fixtures: template {tid} field {field.get('id')!r} has unknown keys {sorted(extra)}")
            if field.get("type") not in FIELD_TYPES:
                raise SystemExit(f"fixtures: template {tid} field {field.get('id')!r} has unknown type {field.get('type')!r}")
        templates.append({"id": tid, "name": str(t["name"]), "version": int(t.get("version", 1)),
                          "form_schema": {"fields": fields}})
    return facilities, templates


def parse_user(text: str) -> dict[str, str]:
    parts = text.split(":", 3)
    if len(parts) < 2 or not parts[0] or not parts[1]:
        raise argparse.ArgumentTypeError("--user wants USERNAME:PASSWORD[:ROLE[:DISPLAY NAME]]")
    role = parts[2] if len(parts) > 2 and parts[2] else "inspector"
    if role not in ROLES:
        raise argparse.ArgumentTypeError(f"--user role must be one of {', '.join(ROLES)}")
    display = parts[3] if len(parts) > 3 and parts[3] else parts[0]
    return {"username": parts[0], "password": parts[1], "role": role, "display_name": display}


def rate(text: str) -> float:
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError("a rate is a number from 0 to 1")
    return value


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--port", type=int, default=8080, help="port to listen on; 0 picks a free port (default 8080)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1, loopback only)")
    p.add_argument("--db", type=Path, help="SQLite database file (default: a new temporary file, removed on exit)")
    p.add_argument("--fixtures", type=Path, default=HERE.parent / "fixtures",
                   help="directory holding facilities.json and templates.json (default Tools/fixtures)")
    p.add_argument("--user", action="append", type=parse_user, default=[], metavar="USER:PASS[:ROLE[:NAME]]",
                   help="a user to create (repeatable); without any, inspector/inspector-pass and "
                        "auditor/auditor-pass are created")
    p.add_argument("--access-ttl", type=int, default=900, help="access token lifetime in seconds (default 900)")
    p.add_argument("--refresh-ttl", type=int, default=30 * 24 * 3600,
                   help="refresh token lifetime in seconds (default 30 days)")
    p.add_argument("--max-upload-bytes", type=int, default=20 * 1024 * 1024,
                   help="largest request body accepted; larger ones get 413 (default 20 MiB)")
    p.add_argument("--fault-rate", type=rate, default=0.0, help="share of API requests answered with an injected error")
    p.add_argument("--fault-status", type=int, choices=(500, 429), default=500,
                   help="status of injected errors (default 500)")
    p.add_argument("--latency-ms", type=int, default=0, help="delay added to every API request")
    p.add_argument("--drop-after-commit-rate", type=rate, default=0.0,
                   help="share of committed writes whose connection is closed without a response")
    p.add_argument("--refuse-refresh", action="store_true", help="answer every /auth/refresh with 401")
    p.add_argument("--seed", type=int, help="seed for the fault dice (deterministic fault sequences)")
    p.add_argument("--verify-score", action="store_true",
                   help="refuse an inspection whose overall_score does not match its form_data")
    p.add_argument("--admin", action="store_true", help="enable the test-only /__admin endpoints")
    p.add_argument("--exit-after", type=float, help="stop by itself after this many seconds")
    p.add_argument("--port-file", type=Path, help="write the port actually bound to this file")
    p.add_argument("--quiet", action="store_true", help="do not log each request")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("werkzeug").setLevel(logging.WARNING)

    try:
        if not ipaddress.ip_address(args.host).is_loopback:
            log.warning("binding %s: this server is for development on this machine only", args.host)
    except ValueError:
        if args.host != "localhost":
            log.warning("binding %s: this server is for development on this machine only", args.host)
    if args.access_ttl < 1:
        raise SystemExit("--access-ttl must be at least 1 second")

    temp_dir: Path | None = None
    if args.db is None:
        temp_dir = Path(tempfile.mkdtemp(prefix="jqc-devserver-"))
        db_path = temp_dir / "devserver.sqlite3"
    else:
        db_path = args.db.resolve()
        db_path.parent.mkdir(parents=True, exist_ok=True)
    uploads_dir = db_path.parent / (db_path.name + ".uploads")

    facilities, templates = load_fixtures(args.fixtures)
    store = Store(db_path)
    store.seed_reference(facilities, templates)
    users = args.user or DEFAULT_USERS
    store.seed_users([
        {**u, "password_hash": generate_password_hash(u["password"], method="pbkdf2:sha256:20000")}
        for u in users
    ])

    config = Config(
        db_path=db_path,
        uploads_dir=uploads_dir,
        access_ttl=args.access_ttl,
        refresh_ttl=args.refresh_ttl,
        max_upload_bytes=args.max_upload_bytes,
        admin=args.admin,
        verify_score=args.verify_score,
        seed=args.seed,
        faults=Faults(
            fault_rate=args.fault_rate,
            latency_ms=args.latency_ms,
            drop_after_commit_rate=args.drop_after_commit_rate,
            refuse_refresh=args.refuse_refresh,
            fault_status=args.fault_status,
        ),
    )
    app = create_app(config, store)

    if args.quiet:
        Handler._log_line = lambda *a, **k: None  # type: ignore[method-assign]
    server = Server(args.host, args.port, app, handler=Handler)
    server.max_body = args.max_upload_bytes
    server.devstate = app.extensions["devserver"]
    port = server.socket.getsockname()[1]

    if args.port_file:
        tmp = args.port_file.with_name(args.port_file.name + ".tmp")
        tmp.write_text(f"{port}\n", encoding="utf-8")
        os.replace(tmp, args.port_file)

    def stop(reason: str) -> None:
        log.info("stopping: %s", reason)
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, lambda *_: stop("SIGTERM"))
    signal.signal(signal.SIGINT, lambda *_: stop("SIGINT"))
    if args.exit_after is not None:
        timer = threading.Timer(args.exit_after, stop, args=(f"--exit-after {args.exit_after:g}s elapsed",))
        timer.daemon = True
        timer.start()

    host_text = f"[{args.host}]" if ":" in args.host else args.host
    print(f"listening on http://{host_text}:{port}", flush=True)
    log.info("db %s, uploads %s, users %s, admin %s", db_path, uploads_dir,
             ", ".join(u["username"] for u in users), "on" if args.admin else "off")
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
        store.close()
        if temp_dir is not None:
            shutil.rmtree(temp_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
