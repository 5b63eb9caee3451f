#!/usr/bin/env python3
"""Development server for the inspection sync contract (Schemas/openapi.yaml).

Run:  python3 Tools/devserver/server.py --port 8080
See Tools/devserver/README.md for the flags and the test-only admin endpoints.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import logging
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from waitress.channel import ClientDisconnected  # noqa: E402
from waitress.server import create_server  # noqa: E402
from werkzeug.security import generate_password_hash  # noqa: E402

from api import DROP_FLAG, Config, Faults, create_app  # noqa: E402
from storage import Store  # noqa: E402
from validate import FIELD_TYPES  # noqa: E402

log = logging.getLogger("devserver")

DEFAULT_USERS = [
    {"username": "inspector", "password": "inspector-pass", "role": "inspector", "display_name": "Dana Inspector"},
    {"username": "auditor", "password": "auditor-pass", "role": "auditor", "display_name": "Avery Auditor"},
]
ROLES = ("inspector", "auditor", "admin")
# Bodies up to the upload limit plus this much are read and answered by the
# app (413 in the envelope); waitress itself refuses anything larger with its
# own plain-text 413 before the app sees it.
READ_SLACK = 16 * 1024 * 1024
CONTROL_CHARS = {c: "?" for c in range(32)} | {127: "?"}


# -- the WSGI layer around the Flask app -------------------------------------


class Served:
    """The WSGI app that waitress serves: the Flask app plus what belongs to
    the transport, not to the contract: one log line per request (never a
    header, a query string, a token or a password), a count of the client
    connections seen, and dropping a connection without a byte of answer
    (fault injection: the app marks the request, this layer raises waitress's
    ClientDisconnected, on which waitress closes the connection unanswered)."""

    def __init__(self, app: Any, state: Any, quiet: bool) -> None:
        self.app = app
        self.state = state
        self.quiet = quiet
        self.lock = threading.Lock()
        self.peers: set[tuple[str, str]] = set()

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        started = time.monotonic()
        peer = (environ.get("REMOTE_ADDR", ""), environ.get("REMOTE_PORT", ""))
        with self.lock:
            fresh = peer not in self.peers
            if fresh:
                self.peers.add(peer)
        if fresh:
            self.state.count_connection()
        captured: dict[str, Any] = {}

        def capture(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            captured["status"] = status
            return start_response(status, headers, exc_info)

        method, path = environ.get("REQUEST_METHOD", "?"), environ.get("PATH_INFO", "?")
        # Flask buffers every answer (no streaming responses here), so the
        # body is complete when the app returns and a drop can still be decided.
        self.state.enter()
        try:
            result = self.app(environ, capture)
        finally:
            self.state.leave()
        if environ.get(DROP_FLAG):
            if hasattr(result, "close"):
                result.close()
            self.log(method, path, "dropped", 0, started)
            raise ClientDisconnected("response dropped after commit (injected fault)")
        body = b"".join(result)
        if hasattr(result, "close"):
            result.close()
        self.log(method, path, captured.get("status", "?").split(" ", 1)[0], len(body), started)
        return [body]

    def log(self, method: str, path: str, status: str, size: int, started: float) -> None:
        if self.quiet:
            return
        ms = (time.monotonic() - started) * 1000.0
        safe_path = path.translate(CONTROL_CHARS)
        sys.stderr.write(f"{time.strftime('%H:%M:%S')} {method} {safe_path} {status} {size}B {ms:.1f}ms\n")
        sys.stderr.flush()


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
    p.add_argument("--profile", choices=("contract", "reference"), default="contract",
                   help="contract: all of Schemas/openapi.yaml (default); reference: the reference app's backend, "
                        "without the document's extensions (no idempotency, no client_id, areas only by facility, "
                        "templates without version, a tokens-only login, logout behind the access token)")
    p.add_argument("--photo-outage-seconds", type=float, default=0.0,
                   help="photo uploads answer 500 for this many seconds from the start")
    p.add_argument("--openapi", type=Path, default=HERE.parent.parent / "Schemas" / "openapi.yaml",
                   help="the OpenAPI document requests are validated against (default Schemas/openapi.yaml)")
    p.add_argument("--fixtures", type=Path, default=HERE.parent / "fixtures",
                   help="directory holding facilities.json and templates.json (default Tools/fixtures)")
    p.add_argument("--user", action="append", type=parse_user, default=[], metavar="USER:PASS[:ROLE[:NAME]]",
                   help="a user to create (repeatable); without any, inspector/inspector-pass and "
                        "auditor/auditor-pass are created")
    p.add_argument("--access-ttl", type=int, default=900, help="access token lifetime in seconds (default 900)")
    p.add_argument("--refresh-ttl", type=int, default=30 * 24 * 3600,
                   help="refresh token lifetime in seconds (default 30 days)")
    p.add_argument("--refresh-grace", type=float, default=60.0,
                   help="seconds during which a used refresh token is answered again with the pair its first use "
                        "issued (default 60; 0 turns the grace off)")
    p.add_argument("--max-upload-bytes", type=int, default=20 * 1024 * 1024,
                   help="largest request body accepted; larger ones get 413 (default 20 MiB)")
    p.add_argument("--fault-rate", type=rate, default=0.0, help="share of API requests answered with an injected error")
    p.add_argument("--fault-status", type=int, choices=(500, 429), default=500,
                   help="status of injected errors (default 500)")
    p.add_argument("--latency-ms", type=int, default=0, help="delay added to every API request")
    p.add_argument("--drop-after-commit-rate", type=rate, default=0.0,
                   help="share of committed writes whose connection is closed without a response")
    p.add_argument("--drop-refresh-rate", type=rate, default=0.0,
                   help="share of token refreshes whose answer is lost after the rotation is committed")
    p.add_argument("--expire-tokens-every", type=float, default=0.0, metavar="S",
                   help="every S seconds, expire every access token issued so far (as expire_tokens_now)")
    p.add_argument("--refuse-refresh", action="store_true", help="answer every /auth/refresh with 401")
    p.add_argument("--seed", type=int, help="seed for the fault dice (deterministic fault sequences)")
    p.add_argument("--verify-score", action="store_true",
                   help="refuse an inspection whose overall_score does not match its form_data")
    p.add_argument("--admin", action="store_true", help="enable the test-only /__admin endpoints")
    p.add_argument("--witness-name", default="devserver.jqc.invalid/witness",
                   help="the name of the standard witness at /witness (its key's name)")
    p.add_argument("--witness-tamper", action="store_true",
                   help="DEVELOPMENT ONLY: the witness at /witness flips a bit of every cosignature it returns "
                        "(to test that clients refuse it)")
    p.add_argument("--exit-after", type=float, help="stop by itself after this many seconds")
    p.add_argument("--exit-with-parent", action="store_true",
                   help="stop by itself when the process that started it is gone")
    p.add_argument("--threads", type=int, default=32,
                   help="worker threads, i.e. requests served at once (default 32)")
    p.add_argument("--port-file", type=Path, help="write the port actually bound to this file")
    p.add_argument("--quiet", action="store_true", help="do not log each request")
    return p


def main(argv: list[str] | None = None) -> int:
    # A process inherits its parent thread's blocked signals, and the Swift
    # test runner starts servers from threads that block SIGTERM, SIGINT and
    # SIGCHLD among others: blocked, --exit-after's SIGTERM stayed pending
    # and a server whose test had died ran on for ever. The handlers below
    # need them delivered.
    signal.pthread_sigmask(signal.SIG_SETMASK, ())
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(name)s %(message)s")
    # waitress logs "client disconnected" at INFO for every dropped response
    # and a queue-depth warning under load: neither is news in a test run.
    logging.getLogger("waitress").setLevel(logging.ERROR)

    try:
        if not ipaddress.ip_address(args.host).is_loopback:
            log.warning("binding %s: this server is for development on this machine only", args.host)
    except ValueError:
        if args.host != "localhost":
            log.warning("binding %s: this server is for development on this machine only", args.host)
    if args.threads < 1:
        raise SystemExit("--threads must be at least 1")
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
        openapi_path=args.openapi,
        profile=args.profile,
        photo_outage_seconds=args.photo_outage_seconds,
        uploads_dir=uploads_dir,
        access_ttl=args.access_ttl,
        refresh_ttl=args.refresh_ttl,
        refresh_grace=args.refresh_grace,
        max_upload_bytes=args.max_upload_bytes,
        admin=args.admin,
        verify_score=args.verify_score,
        seed=args.seed,
        witness_name=args.witness_name,
        witness_tamper=args.witness_tamper,
        faults=Faults(
            fault_rate=args.fault_rate,
            latency_ms=args.latency_ms,
            drop_after_commit_rate=args.drop_after_commit_rate,
            refuse_refresh=args.refuse_refresh,
            drop_refresh_rate=args.drop_refresh_rate,
            fault_status=args.fault_status,
        ),
    )
    app = create_app(config, store)

    served = Served(app, app.extensions["devserver"], args.quiet)
    # waitress: a pool of worker threads behind one event loop; HTTP/1.1
    # keep-alive; TCP_NODELAY on every accepted socket (its default
    # socket_options); SO_REUSEADDR on the listener, so a restart on the same
    # port works at once.
    server = create_server(
        served,
        host=args.host,
        port=args.port,
        threads=args.threads,
        connection_limit=max(100, 4 * args.threads),
        channel_timeout=30,  # idle keep-alive connections are closed after this many seconds
        max_request_body_size=args.max_upload_bytes + READ_SLACK,
        ident="jqc-devserver",
        asyncore_use_poll=True,
        clear_untrusted_proxy_headers=True,
    )
    port = server.effective_port

    if args.port_file:
        tmp = args.port_file.with_name(args.port_file.name + ".tmp")
        tmp.write_text(f"{port}\n", encoding="utf-8")
        os.replace(tmp, args.port_file)

    stopping = threading.Event()

    def on_signal(signum: int, _frame: Any) -> None:
        # waitress's loop ends on SystemExit raised in the main thread.
        if not stopping.is_set():
            stopping.set()
            log.info("stopping: %s", signal.Signals(signum).name)
        raise SystemExit(0)

    def stop_later(reason: str) -> None:
        log.info("stopping: %s", reason)
        stopping.set()
        os.kill(os.getpid(), signal.SIGTERM)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    if args.exit_after is not None:
        timer = threading.Timer(args.exit_after, stop_later, args=(f"--exit-after {args.exit_after:g}s elapsed",))
        timer.daemon = True
        timer.start()
    if args.expire_tokens_every:
        def expire_tokens() -> None:
            while not stopping.wait(args.expire_tokens_every):
                epoch = store.bump_token_epoch()
                log.info("access tokens expired (--expire-tokens-every), epoch %d", epoch)

        threading.Thread(target=expire_tokens, name="token-expiry", daemon=True).start()
    if args.exit_with_parent:
        parent = os.getppid()

        def watch_parent() -> None:
            while not stopping.wait(0.5):
                if os.getppid() != parent:
                    stop_later(f"the parent process {parent} is gone (--exit-with-parent)")
                    return

        threading.Thread(target=watch_parent, name="parent-watch", daemon=True).start()

    host_text = f"[{args.host}]" if ":" in args.host else args.host
    print(f"listening on http://{host_text}:{port}", flush=True)
    log.info("db %s, uploads %s, users %s, admin %s, %d threads", db_path, uploads_dir,
             ", ".join(u["username"] for u in users), "on" if args.admin else "off", args.threads)
    log.info("profile %s", args.profile)
    try:
        server.run()
    except SystemExit:
        pass
    finally:
        server.close()
        store.close()
        if temp_dir is not None:
            shutil.rmtree(temp_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
