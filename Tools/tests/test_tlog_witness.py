"""The C2SP tlog-witness of Tools/witness answers each case of the spec
with its status code, and its cosignatures verify as tlog-cosignature says."""

from __future__ import annotations

import base64
import hashlib
import struct
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "witness"))
import tlog_witness as tw  # noqa: E402

ORIGIN = "jqc/test-log"


def leaf(i: int) -> bytes:
    return hashlib.sha256(b"\x00" + f"record {i}".encode()).digest()


def root(leaves: list[bytes]) -> bytes:
    if len(leaves) == 1:
        return leaves[0]
    k = 1
    while k * 2 < len(leaves):
        k *= 2
    return hashlib.sha256(b"\x01" + root(leaves[:k]) + root(leaves[k:])).digest()


def subproof(m: int, leaves: list[bytes], whole: bool) -> list[bytes]:
    """RFC 9162 2.1.4.1 SUBPROOF."""
    n = len(leaves)
    if m == n:
        return [] if whole else [root(leaves)]
    k = 1
    while k * 2 < n:
        k *= 2
    if m <= k:
        return subproof(m, leaves[:k], whole) + [root(leaves[k:])]
    return subproof(m - k, leaves[k:], False) + [root(leaves[:k])]


def proof(m: int, n: int) -> list[bytes]:
    return [] if m == 0 else subproof(m, [leaf(i) for i in range(n)], True)


class Log:
    def __init__(self, origin: str = ORIGIN) -> None:
        self.origin = origin
        self.key = Ed25519PrivateKey.generate()
        self.public = self.key.public_key().public_bytes_raw()
        self.vkey = tw.vkey(origin, tw.NOTE_ED25519, self.public)

    def note(self, size: int, root_hash: bytes | None = None, key: Ed25519PrivateKey | None = None) -> str:
        body = f"{self.origin}\n{size}\n{base64.b64encode(root_hash or root([leaf(i) for i in range(size)])).decode()}\n"
        signature = (key or self.key).sign(body.encode())
        blob = tw.key_id(self.origin, tw.NOTE_ED25519, self.public) + signature
        return body + "\n" + f"\u2014 {self.origin} {base64.b64encode(blob).decode()}\n"


def request(old: int, hashes: list[bytes], note: str) -> bytes:
    return ("".join([f"old {old}\n"] + [base64.b64encode(h).decode() + "\n" for h in hashes]) + "\n" + note).encode()


@pytest.fixture
def witness(tmp_path: Path) -> tw.Witness:
    return tw.Witness(tmp_path / "w", "witness.example/test", clock=lambda: 1_700_000_000)


@pytest.fixture
def log(witness: tw.Witness) -> Log:
    made = Log()
    witness.enrol(made.origin, made.vkey)
    return made


def verify_cosignature(witness: tw.Witness, line: str, note: str) -> int:
    """The timestamp of a cosignature/v1 line that verifies over the note's body (else an AssertionError)."""
    assert line.startswith("\u2014 witness.example/test ") and line.endswith("\n")
    blob = base64.b64decode(line.split(" ")[2])
    assert blob[:4] == hashlib.sha256(b"witness.example/test\n\x04" + witness.public).digest()[:4]
    (timestamp,) = struct.unpack(">Q", blob[4:12])
    body = note[: note.index("\n\n") + 1]
    message = f"cosignature/v1\ntime {timestamp}\n".encode() + body.encode()
    witness.key.public_key().verify(blob[12:], message)
    return timestamp


def test_the_first_and_a_consistent_second_checkpoint_are_cosigned(witness: tw.Witness, log: Log) -> None:
    first = log.note(5)
    status, _, body = witness.add_checkpoint(request(0, [], first))
    assert status == 200, body
    assert verify_cosignature(witness, body, first) == 1_700_000_000
    second = log.note(13)
    status, _, body = witness.add_checkpoint(request(5, proof(5, 13), second))
    assert status == 200, body
    verify_cosignature(witness, body, second)
    assert witness.logs[ORIGIN]["size"] == 13
    # The state outlives the process.
    assert tw.Witness(witness.directory, witness.name).logs[ORIGIN]["size"] == 13


@pytest.mark.parametrize("old, size, expected", [(4, 13, "5\n"), (0, 13, "5\n"), (5, 5, None)])
def test_a_wrong_old_size_or_another_root_at_the_same_size_is_409_naming_the_size(
    witness: tw.Witness, log: Log, old: int, size: int, expected: str | None
) -> None:
    assert witness.add_checkpoint(request(0, [], log.note(5)))[0] == 200
    note = log.note(size) if expected else log.note(5, hashlib.sha256(b"other").digest())
    status, media_type, body = witness.add_checkpoint(request(old, proof(old, size) if old != 5 else [], note))
    assert (status, media_type, body) == (409, "text/x.tlog.size", "5\n")


def test_each_refusal_has_the_specs_status(witness: tw.Witness, log: Log) -> None:
    assert witness.add_checkpoint(request(0, [], log.note(5)))[0] == 200
    stranger = Log("jqc/unknown")
    cases = [
        (request(0, [], stranger.note(3)), 404),
        (request(5, proof(5, 8), log.note(8, key=Ed25519PrivateKey.generate())), 403),
        (request(5, proof(4, 8), log.note(8)), 422),
        (request(5, [], log.note(8)), 422),
        (request(9, [], log.note(8)), 400),
        (b"old 5\n", 400),
        (b"old 05\n\n" + log.note(8).encode(), 400),
        (request(5, [b"\x00" * 31], log.note(8)), 400),
        (request(5, [b"\x00" * 32] * 64, log.note(8)), 400),
        (request(5, proof(5, 8), "not a note"), 400),
    ]
    for body, status in cases:
        assert witness.add_checkpoint(body)[0] == status, body
    assert witness.logs[ORIGIN]["size"] == 5


def test_signatures_by_unknown_keys_are_ignored(witness: tw.Witness, log: Log) -> None:
    note = log.note(3)
    other = Ed25519PrivateKey.generate()
    stray = base64.b64encode(b"\x01\x02\x03\x04" + other.sign(b"x")).decode()
    status, _, body = witness.add_checkpoint(request(0, [], note + f"\u2014 someone.else {stray}\n"))
    assert status == 200, body


def test_a_tampering_witness_returns_a_cosignature_that_does_not_verify(tmp_path: Path) -> None:
    witness = tw.Witness(tmp_path / "t", "witness.example/test", tamper=True)
    made = Log()
    witness.enrol(made.origin, made.vkey)
    note = made.note(2)
    status, _, body = witness.add_checkpoint(request(0, [], note))
    assert status == 200
    with pytest.raises(Exception):
        verify_cosignature(witness, body, note)


def test_a_verifier_key_is_checked_against_its_key_id(witness: tw.Witness) -> None:
    name, _, public = tw.parse_vkey(witness.vkey, tw.COSIGNATURE_ED25519)
    assert (name, public) == ("witness.example/test", witness.public)
    parts = witness.vkey.split("+", 2)  # the base64 may hold "+" too
    with pytest.raises(ValueError, match="key id"):
        tw.parse_vkey("+".join([parts[0], "00000000", parts[2]]), tw.COSIGNATURE_ED25519)
    with pytest.raises(ValueError, match="signature type"):
        tw.parse_vkey(witness.vkey, tw.NOTE_ED25519)
