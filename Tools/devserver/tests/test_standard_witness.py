"""The development server's C2SP witness at /witness (Tools/witness): its
key, the development-only enrolment (a logged-in client only) and the
add-checkpoint status codes of the spec."""

from __future__ import annotations

import base64
import hashlib
import struct
import sys
from pathlib import Path
from typing import Any

import requests
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "witness"))
import tlog_witness as tw  # noqa: E402

ORIGIN = "jqc/6f1c1c1e-0000-4000-8000-000000000002"


def note(key: Ed25519PrivateKey, size: int, root: bytes) -> str:
    body = f"{ORIGIN}\n{size}\n{base64.b64encode(root).decode()}\n"
    public = key.public_key().public_bytes_raw()
    blob = tw.key_id(ORIGIN, tw.NOTE_ED25519, public) + key.sign(body.encode())
    return body + "\n" + f"\u2014 {ORIGIN} {base64.b64encode(blob).decode()}\n"


def test_enrolment_needs_a_session_and_each_status_is_the_specs(start_server: Any) -> None:
    server = start_server()
    base = f"{server.base}/witness"
    vkey = requests.get(f"{base}/key", timeout=10).text.strip()
    name, _, public = tw.parse_vkey(vkey, tw.COSIGNATURE_ED25519)
    log = Ed25519PrivateKey.generate()
    log_vkey = tw.vkey(ORIGIN, tw.NOTE_ED25519, log.public_key().public_bytes_raw())
    root = hashlib.sha256(b"\x00one").digest()
    first = f"old 0\n\n{note(log, 1, root)}"
    assert requests.post(f"{base}/add-checkpoint", data=first, timeout=10).status_code == 404
    enrolment = f"{ORIGIN}\n{log_vkey}\n"
    assert requests.post(f"{base}/enrol", data=enrolment, timeout=10).status_code == 401
    token = server.login()["access_token"]
    enrolled = requests.post(f"{base}/enrol", data=enrolment, headers={"Authorization": f"Bearer {token}"}, timeout=10)
    assert enrolled.status_code == 200, enrolled.text
    answer = requests.post(f"{base}/add-checkpoint", data=first, timeout=10)
    assert answer.status_code == 200, answer.text
    blob = base64.b64decode(answer.text.split(" ")[2])
    (timestamp,) = struct.unpack(">Q", blob[4:12])
    body = f"{ORIGIN}\n1\n{base64.b64encode(root).decode()}\n"
    Ed25519PublicKey.from_public_bytes(public).verify(blob[12:], f"cosignature/v1\ntime {timestamp}\n{body}".encode())
    assert answer.text.startswith(f"\u2014 {name} ")
    conflict = requests.post(f"{base}/add-checkpoint", data=first, timeout=10)
    assert (conflict.status_code, conflict.headers["Content-Type"], conflict.text) == (409, "text/x.tlog.size", "1\n")
    other = note(Ed25519PrivateKey.generate(), 2, root)
    assert requests.post(f"{base}/add-checkpoint", data=f"old 1\n\n{other}", timeout=10).status_code == 403
    assert requests.post(f"{base}/add-checkpoint", data=f"old 1\n\n{note(log, 2, root)}", timeout=10).status_code == 422
    assert requests.post(f"{base}/add-checkpoint", data="old x\n\n", timeout=10).status_code == 400


def test_the_witness_name_and_the_development_tamper_switch(start_server: Any) -> None:
    """--witness-name names the witness's key; --witness-tamper (development only) spoils every cosignature."""
    server = start_server("--witness-name", "witness.example/dev2", "--witness-tamper")
    base = f"{server.base}/witness"
    vkey = requests.get(f"{base}/key", timeout=10).text.strip()
    name, _, public = tw.parse_vkey(vkey, tw.COSIGNATURE_ED25519)
    assert name == "witness.example/dev2"
    log = Ed25519PrivateKey.generate()
    log_vkey = tw.vkey(ORIGIN, tw.NOTE_ED25519, log.public_key().public_bytes_raw())
    token = server.login()["access_token"]
    enrolment = f"{ORIGIN}\n{log_vkey}\n"
    assert requests.post(f"{base}/enrol", data=enrolment, headers={"Authorization": f"Bearer {token}"},
                         timeout=10).status_code == 200
    root = hashlib.sha256(b"\x00one").digest()
    answer = requests.post(f"{base}/add-checkpoint", data=f"old 0\n\n{note(log, 1, root)}", timeout=10)
    assert answer.status_code == 200, answer.text
    assert answer.text.startswith("\u2014 witness.example/dev2 ")
    blob = base64.b64decode(answer.text.split(" ")[2])
    (timestamp,) = struct.unpack(">Q", blob[4:12])
    body = f"{ORIGIN}\n1\n{base64.b64encode(root).decode()}\n"
    message = f"cosignature/v1\ntime {timestamp}\n{body}".encode()
    try:
        Ed25519PublicKey.from_public_bytes(public).verify(blob[12:], message)
    except InvalidSignature:
        return
    raise AssertionError("a tampered cosignature verified")
