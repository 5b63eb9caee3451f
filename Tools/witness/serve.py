#!/usr/bin/env python3
"""Serve a C2SP tlog-witness (`tlog_witness.Witness`) over HTTP, for
development and for `jqc`'s tests.

    python3 Tools/witness/serve.py --state DIR [--name NAME] [--port 0]
                                   [--enrol ORIGIN VKEY]... [--allow-enrolment] [--tamper]

Routes (the submission prefix is the server's root URL):

    POST /add-checkpoint   the protocol (c2sp.org/tlog-witness)
    GET  /key              the witness's cosignature verifier key (a development convenience)
    POST /enrol            with --allow-enrolment only: body "<origin>\\n<log vkey>\\n"
                           (development and tests only: a real witness's operator enrols logs)

On start it prints one JSON line, {"url": ..., "vkey": ...}, and serves until
stopped. --tamper flips a bit of every cosignature (to test that clients
refuse it)."""

from __future__ import annotations

import argparse
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tlog_witness import Witness  # noqa: E402

MAX_BODY = 64 * 1024


def handler(witness: Witness, allow_enrolment: bool) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def answer(self, status: int, media_type: str, body: str) -> None:
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", media_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def body(self) -> bytes | None:
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY:
                self.answer(413, "text/plain", "request body too large\n")
                return None
            return self.rfile.read(length)

        def do_GET(self) -> None:  # noqa: N802
            if self.path == "/key":
                self.answer(200, "text/plain", witness.vkey + "\n")
            else:
                self.answer(404, "text/plain", "not found\n")

        def do_POST(self) -> None:  # noqa: N802
            data = self.body()
            if data is None:
                return
            if self.path == "/add-checkpoint":
                self.answer(*witness.add_checkpoint(data))
            elif self.path == "/enrol" and allow_enrolment:
                origin, _, key = data.decode("utf-8", "replace").partition("\n")
                try:
                    witness.enrol(origin.strip(), key.strip())
                except ValueError as why:
                    self.answer(400, "text/plain", f"{why}\n")
                    return
                self.answer(200, "text/plain", "enrolled\n")
            else:
                self.answer(404, "text/plain", "not found\n")

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass

    return Handler


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--state", type=Path, required=True, help="directory of the witness's key and state")
    p.add_argument("--name", default="witness.example/dev", help="the witness's name (its key name)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0, help="0 picks a free port")
    p.add_argument("--enrol", nargs=2, action="append", default=[], metavar=("ORIGIN", "VKEY"),
                   help="trust VKEY for the log ORIGIN (repeatable)")
    p.add_argument("--allow-enrolment", action="store_true", help="serve POST /enrol (development only)")
    p.add_argument("--tamper", action="store_true", help="flip a bit of every cosignature (tests of clients)")
    args = p.parse_args(argv)
    witness = Witness(args.state, args.name, tamper=args.tamper)
    for origin, key in args.enrol:
        witness.enrol(origin, key)
    server = ThreadingHTTPServer((args.host, args.port), handler(witness, args.allow_enrolment))
    host, port = server.server_address[:2]
    print(json.dumps({"url": f"http://{host}:{port}", "vkey": witness.vkey}), flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
