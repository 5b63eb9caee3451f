"""The development server's C2SP witness (Tools/witness/tlog_witness.py,
written from the specs only), mounted at /witness:

    POST /witness/add-checkpoint   c2sp.org/tlog-witness
    GET  /witness/key              its cosigner verifier key (a development convenience)
    POST /witness/enrol            DEVELOPMENT ONLY: a logged-in client (Authorization:
                                   Bearer) enrols a log, body "<origin>\\n<log vkey>\\n".
                                   A real witness's operator enrols logs; this route
                                   exists so Tools/demo and tests need no operator.

Its key and state are kept beside the database (<db>.witness/). Its name is
NAME unless --witness-name says another (a test running several); the
server's --witness-tamper flips a bit of every cosignature it returns, a
DEVELOPMENT-ONLY switch for testing that clients refuse a cosignature that
does not verify (the spec-only witness's --tamper, the same bit)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable

from flask import Flask, Response, request

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "witness"))
from tlog_witness import Witness  # noqa: E402

NAME = "devserver.jqc.invalid/witness"


def register(app: Flask, state_dir: Path, authenticated: Callable[[], Any], name: str = NAME,
             tamper: bool = False) -> Witness:
    witness = Witness(state_dir, name, tamper=tamper)

    def text(status: int, media_type: str, body: str) -> Response:
        # content_type as given: the spec names text/x.tlog.size exactly, with no charset added.
        return Response(body, status=status, content_type=media_type)

    @app.post("/witness/add-checkpoint")
    def witness_add_checkpoint() -> Response:
        return text(*witness.add_checkpoint(request.get_data(cache=False)))

    @app.get("/witness/key")
    def witness_key() -> Response:
        return text(200, "text/plain", witness.vkey + "\n")

    @app.post("/witness/enrol")
    def witness_enrol() -> Response:
        authenticated()  # 401 without a session: a development convenience, never open to anyone
        origin, _, key = request.get_data(cache=False).decode("utf-8", "replace").partition("\n")
        try:
            witness.enrol(origin.strip(), key.strip())
        except ValueError as why:
            return text(400, "text/plain", f"{why}\n")
        return text(200, "text/plain", "enrolled\n")

    return witness
