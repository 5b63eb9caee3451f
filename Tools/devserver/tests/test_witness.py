"""The witness extension: POST /ledger/checkpoints and GET /ledger/checkpoints/latest."""

from __future__ import annotations

import base64
import hashlib
import sys
from pathlib import Path
from typing import Any

import requests
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from devserver_harness import DevServer, envelope_data, envelope_error

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from witness import verify_consistency  # noqa: E402

DEVICE = "jqc/6f1c1c1e-0000-4000-8000-000000000001"


def leaf(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def mth(leaves: list[bytes]) -> bytes:
    """RFC 9162 section 2.1.1."""
    if len(leaves) == 1:
        return leaves[0]
    k = 1
    while k * 2 < len(leaves):
        k *= 2
    return node(mth(leaves[:k]), mth(leaves[k:]))


def subproof(m: int, leaves: list[bytes], complete: bool) -> list[bytes]:
    """RFC 9162 section 2.1.4.1, SUBPROOF."""
    n = len(leaves)
    if m == n:
        return [] if complete else [mth(leaves)]
    k = 1
    while k * 2 < n:
        k *= 2
    if m <= k:
        return subproof(m, leaves[:k], complete) + [mth(leaves[k:])]
    return subproof(m - k, leaves[k:], False) + [mth(leaves[:k])]


class Device:
    """A device's key and log, as the Swift code keeps them (records are opaque bytes here)."""

    def __init__(self, name: str = DEVICE) -> None:
        self.name = name
        self.private = Ed25519PrivateKey.generate()
        public = self.private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        blob = b"\x01" + public
        key_id = hashlib.sha256(name.encode() + b"\n" + blob).digest()[:4]
        self.vkey = f"{name}+{key_id.hex()}+{base64.b64encode(blob).decode()}"
        self.key_id = key_id
        self.records: list[bytes] = []

    def note(self, size: int, signer: Ed25519PrivateKey | None = None) -> str:
        root = mth([leaf(r) for r in self.records[:size]])
        text = f"{self.name}\n{size}\n{base64.b64encode(root).decode()}\n"
        signature = (signer or self.private).sign(text.encode())
        return text + "\n" + f"\u2014 {self.name} {base64.b64encode(self.key_id + signature).decode()}\n"

    def proof(self, old: int, new: int) -> list[str]:
        if old == 0 or old >= new:
            return []
        return [base64.b64encode(h).decode() for h in subproof(old, [leaf(r) for r in self.records[:new]], True)]

    def send(self, server: DevServer, token: str, old: int, new: int, **changes: Any) -> requests.Response:
        body = {"checkpoint": self.note(new), "key": self.vkey, "consistency": self.proof(old, new), **changes}
        return requests.post(f"{server.api}/ledger/checkpoints", json=body,
                             headers={"Authorization": f"Bearer {token}"}, timeout=10)


def latest(server: DevServer, token: str, device: str = DEVICE) -> Any:
    r = requests.get(f"{server.api}/ledger/checkpoints/latest", params={"device": device},
                     headers={"Authorization": f"Bearer {token}"}, timeout=10)
    assert r.status_code == 200, r.text
    return envelope_data(r)


def test_the_consistency_check_agrees_with_rfc_9162_proofs() -> None:
    leaves = [leaf(bytes([i])) for i in range(13)]
    for m in range(1, 14):
        for n in range(m, 14):
            proof = subproof(m, leaves[:n], True) if m < n else []
            assert verify_consistency(m, n, mth(leaves[:m]), mth(leaves[:n]), proof), (m, n)
            if proof:
                bad = [bytes(32)] + proof[1:]
                assert not verify_consistency(m, n, mth(leaves[:m]), mth(leaves[:n]), bad), (m, n)


def test_an_extension_is_accepted_and_a_rewrite_refused(start_server: Any) -> None:
    server = start_server()
    token = server.login()["access_token"]
    assert latest(server, token) is None
    device = Device()
    device.records = [f"record {i}".encode() for i in range(5)]
    first = device.send(server, token, 0, 5)
    assert first.status_code == 200, first.text
    assert envelope_data(first)["size"] == 5
    device.records += [f"record {i}".encode() for i in range(5, 12)]
    second = device.send(server, token, 5, 12)
    assert second.status_code == 200, second.text
    held = latest(server, token)
    assert held["size"] == 12 and held["key"] == device.vkey and held["checkpoint"] == device.note(12)

    # A forger rewrites record 3 and everything after it, consistently in itself.
    device.records[3] = b"forged"
    device.records.append(b"record 12")
    rewritten = device.send(server, token, 12, 13)
    assert rewritten.status_code == 409, rewritten.text
    assert "does not extend the one of 12 records" in envelope_error(rewritten)
    truncated = device.send(server, token, 12, 10)
    assert truncated.status_code == 409 and "truncated" in envelope_error(truncated)
    assert latest(server, token)["size"] == 12


def test_a_bad_signature_or_another_key_is_refused(start_server: Any) -> None:
    server = start_server()
    token = server.login()["access_token"]
    device = Device()
    device.records = [b"a", b"b", b"c"]
    forged = device.note(3, signer=Ed25519PrivateKey.generate())
    r = requests.post(f"{server.api}/ledger/checkpoints",
                      json={"checkpoint": forged, "key": device.vkey, "consistency": []},
                      headers={"Authorization": f"Bearer {token}"}, timeout=10)
    assert r.status_code == 422, r.text
    assert "does not verify" in envelope_error(r)
    assert latest(server, token) is None

    assert device.send(server, token, 0, 3).status_code == 200
    impostor = Device()
    impostor.records = list(device.records) + [b"d"]
    r = impostor.send(server, token, 3, 4)
    assert r.status_code == 409 and "another key" in envelope_error(r)


def test_the_reference_profile_has_no_witness(start_server: Any) -> None:
    server = start_server("--profile", "reference")
    token = server.login()["access_token"]
    device = Device()
    device.records = [b"a"]
    assert device.send(server, token, 0, 1).status_code == 404
