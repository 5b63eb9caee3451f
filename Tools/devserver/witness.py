"""The server as a witness of each device's log (Schemas/ledger-format.md,
"The witness protocol"): a device sends its signed checkpoint (C2SP
tlog-checkpoint, signed-note Ed25519) with an RFC 9162 consistency proof from
the last checkpoint this server acknowledged for it. The server checks the
signature and the proof, keeps the newest checkpoint, and refuses with 409
one that does not extend it: a device whose log was rewritten after it synced
is caught here, whatever its own files say."""

from __future__ import annotations

import base64
import hashlib
from typing import Any, Callable

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from flask import Flask, Response, request

from validate import ApiError

TABLE = """
CREATE TABLE IF NOT EXISTS witness_checkpoints (
    device TEXT PRIMARY KEY,
    key TEXT NOT NULL,
    size INTEGER NOT NULL,
    root TEXT NOT NULL,
    note TEXT NOT NULL,
    acknowledged_at TEXT NOT NULL
)
"""


# -- signed notes and checkpoints -------------------------------------------


def parse_key(vkey: str) -> tuple[str, bytes, bytes]:
    """A signed-note verifier key `name+hex key id+base64(0x01 || key)`: (name, key id, public key)."""
    parts = vkey.strip().split("+", 2)
    if len(parts) != 3:
        raise ValueError("the key is not name+keyid+base64")
    name, key_id, blob = parts
    try:
        raw = base64.b64decode(blob, validate=True)
    except ValueError:
        raise ValueError("the key's base64 is malformed") from None
    if len(raw) != 33 or raw[0] != 1:
        raise ValueError("the key is not an Ed25519 verifier key")
    computed = hashlib.sha256(name.encode() + b"\n" + raw).digest()[:4]
    if computed.hex() != key_id:
        raise ValueError("the key id does not match the key")
    return name, computed, raw[1:]


def open_checkpoint(note: str, vkey: str) -> tuple[str, int, bytes]:
    """Checks the note's signature by `vkey`; returns (origin, size, root)."""
    name, key_id, public = parse_key(vkey)
    text, sep, signatures = note.partition("\n\n")
    if not sep:
        raise ValueError("the note has no blank line before its signatures")
    text += "\n"
    verified = False
    for line in signatures.splitlines():
        if not line.startswith("\u2014 "):
            raise ValueError("a signature line does not start with an em dash")
        signer, _, blob = line[2:].partition(" ")
        try:
            raw = base64.b64decode(blob, validate=True)
        except ValueError:
            raise ValueError("a signature's base64 is malformed") from None
        if signer != name or raw[:4] != key_id:
            continue
        try:
            Ed25519PublicKey.from_public_bytes(public).verify(raw[4:], text.encode())
        except InvalidSignature:
            raise ValueError(f"the signature by {name} does not verify") from None
        verified = True
    if not verified:
        raise ValueError(f"the note is not signed by {name}")
    lines = text.split("\n")
    if len(lines) < 4:
        raise ValueError("the checkpoint body is not origin, size, root")
    try:
        size, root = int(lines[1]), base64.b64decode(lines[2], validate=True)
    except ValueError:
        raise ValueError("the checkpoint body is not origin, size, root") from None
    if str(size) != lines[1] or size < 0 or len(root) != 32:
        raise ValueError("the checkpoint body is not origin, size, root")
    return lines[0], size, root


# -- RFC 9162 section 2.1.4.2: verifying a consistency proof ---------------------------


def _node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def verify_consistency(m: int, n: int, first: bytes, second: bytes, proof: list[bytes]) -> bool:
    if m > n:
        return False
    if m == n:
        return not proof and first == second
    if m == 0:
        return not proof
    if not proof:
        return False
    path = list(proof)
    if m & (m - 1) == 0:
        path.insert(0, first)
    fn, sn = m - 1, n - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = _node(c, fr)
            sr = _node(c, sr)
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = _node(sr, c)
        fn >>= 1
        sn >>= 1
    return sn == 0 and fr == first and sr == second


# -- the routes ----------------------------------------------------------------------


def register(app: Flask, api: str, store: Any, envelope: Callable[..., Response], authenticated: Callable[[], Any],
             now: Callable[[], str]) -> None:
    with store.write() as c:
        c.execute(TABLE)

    def held(c: Any, device: str) -> Any:
        return c.execute("SELECT * FROM witness_checkpoints WHERE device = ?", (device,)).fetchone()

    def row_json(row: Any) -> dict[str, Any]:
        return {"device": row["device"], "checkpoint": row["note"], "key": row["key"], "size": row["size"],
                "root": row["root"], "acknowledged_at": row["acknowledged_at"]}

    # Test-only (behind --admin, like every /__admin route): a witness that
    # answers with another checkpoint than the one sent, which a device must
    # not take for an acknowledgement.
    behaviour = {"answer": "honest"}

    @app.post("/__admin/witness")
    def admin_witness() -> Response:
        body = request.get_json(silent=True)
        answer = body.get("answer") if isinstance(body, dict) else None
        if answer not in ("honest", "another_checkpoint"):
            raise ApiError(400, "answer: 'honest' or 'another_checkpoint'")
        behaviour["answer"] = answer
        return envelope({"answer": answer})

    @app.post(f"{api}/ledger/checkpoints")
    def witness_checkpoint() -> Response:
        authenticated()
        body = request.get_json(silent=True)
        if not isinstance(body, dict):
            raise ApiError(400, "body: a JSON object with checkpoint, key and consistency is required")
        note, vkey, proof = body.get("checkpoint"), body.get("key"), body.get("consistency", [])
        if not isinstance(note, str) or not isinstance(vkey, str) or not isinstance(proof, list):
            raise ApiError(400, "body: checkpoint and key are strings, consistency a list of base64 hashes")
        try:
            origin, size, root = open_checkpoint(note, vkey)
            hashes = [base64.b64decode(h, validate=True) for h in proof]
        except (ValueError, TypeError) as exc:
            raise ApiError(422, f"checkpoint: {exc}") from None
        if any(len(h) != 32 for h in hashes):
            raise ApiError(422, "consistency: every hash is 32 bytes")
        name = vkey.split("+", 1)[0]
        if origin != name:
            raise ApiError(422, f"checkpoint: its origin {origin!r} is not the key's name {name!r}")
        device = name
        root_b64 = base64.b64encode(root).decode()
        if behaviour["answer"] == "another_checkpoint":
            return envelope({"device": device, "checkpoint": note, "key": vkey, "size": 999_999,
                             "root": base64.b64encode(b"\x42" * 32).decode(), "acknowledged_at": now()})
        with store.write() as c:
            row = held(c, device)
            if row is not None:
                if row["key"] != vkey:
                    raise ApiError(409, f"this server holds checkpoints of {device} signed by another key; "
                                        "a device's key cannot be replaced through the witness")
                old_size, old_root = row["size"], base64.b64decode(row["root"])
                if size < old_size:
                    raise ApiError(409, f"the log of {device} was truncated: this server acknowledged "
                                        f"{old_size} records, the checkpoint has {size}")
                if not verify_consistency(old_size, size, old_root, root, hashes):
                    raise ApiError(409, f"the checkpoint of {size} records does not extend the one of {old_size} "
                                        f"records this server acknowledged for {device}: the log was rewritten "
                                        "(or the consistency proof is not from that checkpoint)")
            acknowledged = now()
            c.execute(
                "INSERT INTO witness_checkpoints (device, key, size, root, note, acknowledged_at) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(device) DO UPDATE SET key = excluded.key, "
                "size = excluded.size, root = excluded.root, note = excluded.note, "
                "acknowledged_at = excluded.acknowledged_at",
                (device, vkey, size, root_b64, note, acknowledged))
            return envelope(row_json(held(c, device)))

    @app.get(f"{api}/ledger/checkpoints/latest")
    def witness_latest() -> Response:
        authenticated()
        device = request.args.get("device", "")
        if not device:
            raise ApiError(400, "device: the query parameter is required (jqc/<device id>)")
        with store.read() as c:
            row = held(c, device)
        return envelope(row_json(row) if row is not None else None)
