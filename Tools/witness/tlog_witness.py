"""A transparency-log witness written from the C2SP specifications only
(c2sp.org/tlog-witness, tlog-cosignature, signed-note, tlog-checkpoint), not
from this project's code: it is what `jqc` is tested against, and what the
development server runs at `/witness`.

For each log it knows (its origin line and the log's Ed25519 verifier key,
enrolled by the witness's operator) it keeps the latest checkpoint it
cosigned. `add_checkpoint` answers a `POST <prefix>/add-checkpoint` body:

    old <size>\\n
    <base64 consistency proof hash>\\n ... (at most 63)
    \\n
    <the signed checkpoint note>

with 200 and a cosignature/v1 line, or 400 (malformed), 403 (no signature
verifies against the log's key), 404 (unknown origin), 409 (the old size is
not the size it cosigned, or the same size with another root; body: its size
and a newline, `Content-Type: text/x.tlog.size`) or 422 (the consistency
proof does not verify). The check and the update of its state are one
atomic step (one lock, the state file replaced by rename)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import struct
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

NOTE_ED25519 = 0x01  # signed-note: an Ed25519 note signature (the log's key)
COSIGNATURE_ED25519 = 0x04  # tlog-cosignature: an Ed25519 cosignature/v1
MAX_PROOF_LINES = 63
SIZE_MEDIA_TYPE = "text/x.tlog.size"


class Refused(Exception):
    """A request the witness answers with `status` (never cosigned)."""

    def __init__(self, status: int, message: str, body: str | None = None, media_type: str = "text/plain") -> None:
        super().__init__(message)
        self.status = status
        self.body = body if body is not None else message + "\n"
        self.media_type = media_type


def key_id(name: str, kind: int, public: bytes) -> bytes:
    """signed-note: SHA-256(name || 0x0A || signature type || public key)[:4]."""
    return hashlib.sha256(name.encode() + b"\n" + bytes([kind]) + public).digest()[:4]


def vkey(name: str, kind: int, public: bytes) -> str:
    """signed-note verifier key: name+hex(key id)+base64(type || public key)."""
    return f"{name}+{key_id(name, kind, public).hex()}+{base64.b64encode(bytes([kind]) + public).decode()}"


def parse_vkey(text: str, kind: int) -> tuple[str, bytes, bytes]:
    """(name, key id, public key) of a verifier key of signature type `kind`; ValueError otherwise."""
    name, sep, rest = text.strip().partition("+")
    hex_id, sep2, blob = rest.partition("+")
    if not sep or not sep2 or not name or len(hex_id) != 8:
        raise ValueError("a verifier key is name+<8 hex digits>+<base64>")
    try:
        raw = base64.b64decode(blob, validate=True)
    except ValueError:
        raise ValueError("the verifier key's base64 is malformed") from None
    if len(raw) != 33 or raw[0] != kind:
        raise ValueError(f"the verifier key is not of signature type 0x{kind:02x} with 32 key bytes")
    if key_id(name, kind, raw[1:]).hex() != hex_id.lower():
        raise ValueError("the verifier key's key id does not match its name and key")
    return name, bytes.fromhex(hex_id), raw[1:]


@dataclass
class Checkpoint:
    body: str  # the note text: origin, size, root and any extension lines, each ending in a newline
    origin: str
    size: int
    root: bytes
    signatures: list[tuple[str, bytes]]


def parse_note(note: str) -> Checkpoint:
    """A signed checkpoint note (signed-note + tlog-checkpoint); ValueError when malformed."""
    if any(ord(c) < 0x20 and c != "\n" for c in note):
        raise ValueError("the note holds a control character")
    split = note.rfind("\n\n")
    if split < 0:
        raise ValueError("the note has no blank line before its signatures")
    body, signature_text = note[: split + 1], note[split + 2:]
    if not signature_text.endswith("\n") or not signature_text.strip():
        raise ValueError("the note has no signature lines")
    signatures = []
    for line in signature_text[:-1].split("\n"):
        if not line.startswith("\u2014 "):
            raise ValueError("a signature line does not start with an em dash and a space")
        name, sep, blob = line[2:].partition(" ")
        if not sep or not name or " " in blob:
            raise ValueError("a signature line is not '— <name> <base64>'")
        try:
            raw = base64.b64decode(blob, validate=True)
        except ValueError:
            raise ValueError("a signature's base64 is malformed") from None
        if len(raw) < 5:
            raise ValueError("a signature is shorter than a key id")
        signatures.append((name, raw))
    lines = body[:-1].split("\n")
    if len(lines) < 3 or not lines[0]:
        raise ValueError("a checkpoint has an origin, a size and a root hash line")
    size_line = lines[1]
    if not size_line.isdigit() or (size_line != "0" and size_line.startswith("0")):
        raise ValueError("the size line is not a decimal without leading zeroes")
    try:
        root = base64.b64decode(lines[2], validate=True)
    except ValueError:
        raise ValueError("the root hash line is not base64") from None
    if len(root) != 32:
        raise ValueError("the root hash is not 32 bytes")
    return Checkpoint(body, lines[0], int(size_line), root, signatures)


def parse_request(data: bytes) -> tuple[int, list[bytes], str]:
    """(old size, proof hashes, checkpoint note) of an add-checkpoint body; Refused(400) when malformed."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused(400, "the body is not UTF-8") from None
    head, sep, note = text.partition("\n\n")
    if not sep:
        raise Refused(400, "no empty line after the old size and the proof")
    lines = head.split("\n")
    first = lines[0]
    number = first[4:]
    if not first.startswith("old ") or not number.isdigit() or (number != "0" and number.startswith("0")):
        raise Refused(400, "the first line is not 'old <size>'")
    if len(lines) - 1 > MAX_PROOF_LINES:
        raise Refused(400, f"more than {MAX_PROOF_LINES} consistency proof lines")
    proof = []
    for line in lines[1:]:
        try:
            digest = base64.b64decode(line, validate=True)
        except ValueError:
            raise Refused(400, "a consistency proof line is not base64") from None
        if len(digest) != 32:
            raise Refused(400, "a consistency proof line is not a 32-byte hash")
        proof.append(digest)
    return int(number), proof, note


def _parent(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def consistent(old: int, new: int, old_root: bytes, new_root: bytes, proof: list[bytes]) -> bool:
    """RFC 9162 section 2.1.4.2: does `proof` show the tree of `old` leaves is a prefix of that of `new`?"""
    if old == 0:
        return not proof
    if old == new:
        return not proof and old_root == new_root
    if old > new or not proof:
        return False
    hashes = list(proof)
    if old & (old - 1) == 0:  # old is a power of two: its root is the first node
        hashes = [old_root] + hashes
    f_n, s_n = old - 1, new - 1
    while f_n & 1:
        f_n >>= 1
        s_n >>= 1
    f_r = s_r = hashes[0]
    for c in hashes[1:]:
        if s_n == 0:
            return False
        if f_n & 1 or f_n == s_n:
            f_r, s_r = _parent(c, f_r), _parent(c, s_r)
            if not f_n & 1:
                while f_n and not f_n & 1:
                    f_n >>= 1
                    s_n >>= 1
        else:
            s_r = _parent(s_r, c)
        f_n >>= 1
        s_n >>= 1
    return s_n == 0 and f_r == old_root and s_r == new_root


class Witness:
    """One witness: its name, its Ed25519 key (`witness.key`, 0600) and its
    state (`state.json`: each known log's key and latest cosigned size and
    root) in `directory`."""

    def __init__(self, directory: Path, name: str, clock: Callable[[], float] = time.time,
                 tamper: bool = False) -> None:
        self.directory = directory
        self.name = name
        self.clock = clock
        # For tests of clients only: every cosignature has one bit flipped.
        self.tamper = tamper
        self.lock = threading.Lock()
        directory.mkdir(parents=True, exist_ok=True)
        key_path = directory / "witness.key"
        if key_path.exists():
            self.key = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(key_path.read_text().strip()))
        else:
            self.key = Ed25519PrivateKey.generate()
            fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(self.key.private_bytes_raw().hex() + "\n")
        self.public = self.key.public_key().public_bytes_raw()
        self.state_path = directory / "state.json"
        self.logs: dict[str, dict] = json.loads(self.state_path.read_text()) if self.state_path.exists() else {}

    @property
    def vkey(self) -> str:
        """The witness's cosignature verifier key (signature type 0x04)."""
        return vkey(self.name, COSIGNATURE_ED25519, self.public)

    def _save(self) -> None:
        temporary = self.state_path.with_suffix(".tmp")
        temporary.write_text(json.dumps(self.logs, indent=1, sort_keys=True))
        with open(temporary, "rb") as f:
            os.fsync(f.fileno())
        os.replace(temporary, self.state_path)

    def enrol(self, origin: str, log_vkey: str) -> None:
        """The operator's act: trust `log_vkey` (a note key, type 0x01) for the log `origin`."""
        parse_vkey(log_vkey, NOTE_ED25519)
        with self.lock:
            held = self.logs.get(origin, {"size": 0, "root": None})
            self.logs[origin] = {**held, "key": log_vkey.strip()}
            self._save()

    def cosign(self, body: str) -> str:
        """A cosignature/v1 line over the checkpoint body, timestamped now."""
        timestamp = int(self.clock())
        message = f"cosignature/v1\ntime {timestamp}\n".encode() + body.encode()
        signature = bytearray(self.key.sign(message))
        if self.tamper:
            signature[0] ^= 1
        blob = key_id(self.name, COSIGNATURE_ED25519, self.public) + struct.pack(">Q", timestamp) + bytes(signature)
        return f"\u2014 {self.name} {base64.b64encode(blob).decode()}\n"

    def add_checkpoint(self, data: bytes) -> tuple[int, str, str]:
        """(status, media type, body) of an add-checkpoint request."""
        try:
            return 200, "text/plain; charset=utf-8", self._add(data)
        except Refused as refused:
            return refused.status, refused.media_type, refused.body

    def _add(self, data: bytes) -> str:
        old, proof, note = parse_request(data)
        try:
            checkpoint = parse_note(note)
        except ValueError as why:
            raise Refused(400, f"not a signed checkpoint: {why}") from None
        with self.lock:
            log = self.logs.get(checkpoint.origin)
            if log is None:
                raise Refused(404, f"unknown log {checkpoint.origin}")
            name, wanted_id, public = parse_vkey(log["key"], NOTE_ED25519)
            verified = False
            for signer, raw in checkpoint.signatures:
                if signer != name or raw[:4] != wanted_id or len(raw) != 68:
                    continue  # signatures by unknown keys are ignored
                try:
                    Ed25519PublicKey.from_public_bytes(public).verify(raw[4:], checkpoint.body.encode())
                    verified = True
                except InvalidSignature:
                    pass
            if not verified:
                raise Refused(403, f"no signature by the key of {checkpoint.origin} verifies")
            if old > checkpoint.size:
                raise Refused(400, "the old size is larger than the checkpoint's")
            held_size, held_root = log["size"], log["root"]
            conflict = Refused(409, "conflict", f"{held_size}\n", SIZE_MEDIA_TYPE)
            if old != held_size:
                raise conflict
            held = base64.b64decode(held_root) if held_root else b""
            if old == checkpoint.size and old > 0 and held != checkpoint.root:
                raise conflict
            if not consistent(old, checkpoint.size, held, checkpoint.root, proof):
                raise Refused(422, "the consistency proof does not verify")
            log["size"], log["root"] = checkpoint.size, base64.b64encode(checkpoint.root).decode()
            self._save()
        return self.cosign(checkpoint.body)
