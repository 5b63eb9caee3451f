"""Proof bundles through the three verifiers: Tools/verify-ledger --bundle
(Python), Tools/verify-bundle-go (Go's sumdb/tlog and sumdb/note) and
`jqc verify --bundle` must give the same exit status and print the same lines
for every bundle, good, tampered or crafted (Schemas/ledger-format.md § Proof
bundles).

The bundles come from the built `jqc` ($JQC_BIN, default .build/debug/jqc,
as `swift build` makes it; Tools/test names the one it built); the crafted ones are edited here, and
re-signed with the ledger's own device key where a case needs a valid
signature over a wrong statement.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any, Callable

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

REPO = Path(__file__).resolve().parents[2]
PYTHON_VERIFIER = REPO / "Tools" / "verify-ledger"
TIMEOUT = 120  # seconds; only a hang gets near it


def jqc_binary() -> Path:
    configured = os.environ.get("JQC_BIN")
    path = Path(configured) if configured else REPO / ".build" / "debug" / "jqc"
    if not path.is_absolute():
        path = REPO / path
    if not (path.is_file() and os.access(path, os.X_OK)):
        pytest.fail(f"the bundle tests run the built jqc, and there is none at {path}: build it first "
                    "(`swift build`; Tools/test builds one before pytest) or point JQC_BIN at one", pytrace=False)
    return path


@pytest.fixture(scope="session")
def go_verifier(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("go") / "verify-bundle-go"
    built = subprocess.run(["bash", str(REPO / "Tools" / "verify-bundle-go" / "build"), str(out)],
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, f"building verify-bundle-go failed:\n{built.stderr}"
    return out


def png(path: Path, seed: int) -> None:
    raw = b"".join(b"\x00" + bytes([seed, 2 * seed % 251, 3 * seed % 251]) * 8 for _ in range(8))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = chunk(b"IHDR", struct.pack(">IIBBBBB", 8, 8, 8, 2, 0, 0, 0))
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + header + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


class NoteSigner:
    """An Ed25519 signed-note key (the device's, read from device.key, or a new one)."""

    def __init__(self, name: str, seed: bytes) -> None:
        self.name = name
        self.private = Ed25519PrivateKey.from_private_bytes(seed)
        public = self.private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        self.key_id = hashlib.sha256(name.encode() + b"\n\x01" + public).digest()[:4]
        encoded = base64.b64encode(b"\x01" + public).decode()
        self.verifier_key = f"{name}+{self.key_id.hex()}+{encoded}"

    @classmethod
    def from_file(cls, path: Path) -> "NoteSigner":
        _, _, name, _, blob = path.read_text().strip().split("+", 4)
        return cls(name, base64.b64decode(blob)[1:])

    def checkpoint(self, origin: str, size: int, root: bytes) -> str:
        text = f"{origin}\n{size}\n{base64.b64encode(root).decode()}\n"
        signature = base64.b64encode(self.key_id + self.private.sign(text.encode())).decode()
        return f"{text}\n\u2014 {self.name} {signature}\n"


def checkpoint_parts(note: str) -> tuple[str, int, bytes]:
    origin, size, root = note.split("\n")[:3]
    return origin, int(size), base64.b64decode(root)


class Ledger:
    """One ledger: an inspection with answers and a photo, another one
    interleaved, a checkpoint taken midway, and records added after it."""

    def __init__(self, home: Path) -> None:
        self.jqc = jqc_binary()
        self.home = home
        self.env = {**os.environ, "JQC_HOME": str(home / "ledger"), "NO_COLOR": "1", "JQC_AS_TEST": "1"}
        self.ok("init")
        self.ok("pull", "--from", str(REPO / "Tools" / "fixtures" / "reference.json"))
        self.id = self.start()
        other = self.start()
        png(home / "leak.png", 10)
        self.ok("--as", "Dana", "set", self.id, "Floors", "4")
        self.ok("--as", "Dana", "set", other, "Floors", "2")
        self.ok("--as", "Dana", "photo", self.id, "Photo of problem area", str(home / "leak.png"))
        self.trusted = self.ok("checkpoint")
        self.ok("--as", "Dana", "set", self.id, "Odor", "acceptable")
        self.ok("--as", "Dana", "set", other, "Odor", "acceptable")
        self.bundle_text = self.ok("prove", self.id)
        self.bundle = json.loads(self.bundle_text)
        self.trusted_path = self.write("trusted.checkpoint", self.trusted)
        self.consistent = json.loads(self.ok("prove", "--checkpoint", str(self.trusted_path), self.id))
        self.device_key = NoteSigner.from_file(home / "ledger" / "device.key")

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(self.jqc), *args], capture_output=True, text=True, env=self.env, timeout=TIMEOUT)

    def ok(self, *args: str) -> str:
        done = self.run(*args)
        assert done.returncode == 0, f"jqc {' '.join(args)} exited {done.returncode}:\n{done.stdout}{done.stderr}"
        return done.stdout

    def start(self) -> str:
        started = json.loads(self.ok("--as", "Dana", "--json", "start", "--template", "Restroom QC", "--facility",
                                     "Riverside Medical Center", "--area", "1001"))
        return started["id"]

    def write(self, name: str, content: str | bytes) -> Path:
        path = self.home / name
        path.write_bytes(content.encode() if isinstance(content, str) else content)
        return path


@pytest.fixture(scope="module")
def ledger(tmp_path_factory: pytest.TempPathFactory) -> Ledger:
    return Ledger(tmp_path_factory.mktemp("bundles"))


def both(ledger: Ledger, go: Path, bundle: Path, *options: str) -> tuple[int, str]:
    """Runs the three verifiers (both tools, and `jqc verify --bundle`); they
    must agree on the exit status and every line."""
    python = subprocess.run([sys.executable, str(PYTHON_VERIFIER), "--bundle", str(bundle), *options],
                            capture_output=True, text=True, timeout=TIMEOUT)
    golang = subprocess.run([str(go), *options, str(bundle)], capture_output=True, text=True, timeout=TIMEOUT)
    jqc = ledger.run("verify", "--bundle", str(bundle), *options)
    assert "Traceback" not in python.stderr, python.stderr
    assert "panic" not in golang.stderr, golang.stderr
    assert (python.returncode, python.stdout) == (golang.returncode, golang.stdout), (
        f"Python and Go differ on {bundle.name}:\nPython {python.returncode}: {python.stdout}{python.stderr}\n"
        f"Go {golang.returncode}: {golang.stdout}{golang.stderr}")
    assert (python.returncode, python.stdout) == (jqc.returncode, jqc.stdout), (
        f"Python and jqc differ on {bundle.name}:\nPython {python.returncode}: {python.stdout}{python.stderr}\n"
        f"jqc {jqc.returncode}: {jqc.stdout}{jqc.stderr}")
    return python.returncode, python.stdout


# Each case: (name, how to make the bundle file's bytes from the ledger,
# extra options (a callable of the ledger), expected status, expected first line
# (a callable of the ledger, the bundle's values filled in)).

def dumps(bundle: dict[str, Any]) -> bytes:
    return json.dumps(bundle).encode()


def edited(change: Callable[[dict[str, Any], Ledger], None], source: str = "bundle") -> Callable[[Ledger], bytes]:
    def make(ledger: Ledger) -> bytes:
        bundle = json.loads(json.dumps(getattr(ledger, source)))
        change(bundle, ledger)
        return dumps(bundle)
    return make


def appended(member: str) -> Callable[[Ledger], bytes]:
    """The bundle's text with one more member written before its closing brace."""
    def make(ledger: Ledger) -> bytes:
        text = json.dumps(ledger.bundle)
        return (text[:-1] + ", " + member + "}").encode()
    return make


def tree(b: dict[str, Any]) -> tuple[str, int, bytes]:
    return checkpoint_parts(b["checkpoint"])


def summary(ledger: Ledger, pinning: str = "not pinned: the bundle's own key", extends: str = "") -> str:
    b = ledger.bundle
    k = len(b["records"])
    origin, size, _ = tree(b)
    key_id = b["public_key"].split("+")[1]
    return (f"verified: inspection {ledger.id}, versions 1 to {k} ({k} records, 1 photo), in the tree of {size} "
            f"records signed by {origin} (key id {key_id}, {pinning}){extends}")


def described(vkey: str) -> str:
    name, key_id, _ = vkey.split("+", 2)
    return f"{name} (key id {key_id})"


def set_records(records: Callable[[list[Any]], list[Any]]) -> Callable[[dict[str, Any], Ledger], None]:
    def change(b: dict[str, Any], _: Ledger) -> None:
        b["records"] = records(b["records"])
    return change


def photo_record(b: dict[str, Any]) -> dict[str, Any]:
    return next(e for e in b["records"] if e["type"] == "photo.captured")


def set_at(path: list[Any], value: Any) -> Callable[[dict[str, Any], Ledger], None]:
    def change(b: dict[str, Any], _: Ledger) -> None:
        target: Any = b
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = value
    return change


def resigned(origin: Callable[[Ledger], str]) -> Callable[[dict[str, Any], Ledger], None]:
    def change(b: dict[str, Any], ledger: Ledger) -> None:
        _, size, root = tree(b)
        b["checkpoint"] = ledger.device_key.checkpoint(origin(ledger), size, root)
    return change


def trusted_file(make: Callable[[Ledger], str]) -> Callable[[Ledger], list[str]]:
    def options(ledger: Ledger) -> list[str]:
        return ["--checkpoint", str(ledger.write("crafted.checkpoint", make(ledger)))]
    return options


def flipped_hash(text: str) -> str:
    raw = bytearray(base64.b64decode(text))
    raw[0] ^= 1
    return base64.b64encode(bytes(raw)).decode()


def bad_signature(note: str) -> str:
    """The note with the last byte of its signature changed (the key id kept)."""
    text, line = note.rstrip("\n").rsplit("\n", 1)
    dash, name, blob = line.split(" ")
    raw = bytearray(base64.b64decode(blob))
    raw[-1] ^= 1
    return f"{text}\n{dash} {name} {base64.b64encode(bytes(raw)).decode()}\n"


def other_key(ledger: Ledger) -> NoteSigner:
    return NoteSigner(tree(ledger.bundle)[0], bytes(range(32)))


def plain(ledger: Ledger) -> bytes:
    return ledger.bundle_text.encode()


def trusted(ledger: Ledger) -> list[str]:
    return ["--checkpoint", str(ledger.trusted_path)]


def trusted_size(ledger: Ledger) -> int:
    return checkpoint_parts(ledger.trusted)[1]


def position(b: dict[str, Any], i: int) -> int:
    return b["records"][i]["position"]


NUMBER = "a whole number from 0 to 9223372036854775807"

def head_refused(ledger: Ledger, dropped: int) -> str:
    """The verdict on a /2 bundle whose last `dropped` records were left out."""
    k = len(ledger.bundle["records"])
    return (f"NOT VERIFIED: the inspection's head at this size is version {k}, not version {k - dropped}, "
            f"the bundle's last: version {k - dropped + 1} exists at this size")


def photo_index(records: list[Any]) -> int:
    """The index of the last photo.captured entry."""
    return max(i for i, entry in enumerate(records) if entry["type"] == "photo.captured")


def as_format_1(b: dict[str, Any], _: Ledger) -> None:
    b["format"] = "jqc-proof-bundle/1"
    del b["head"]


COMPLETE = "complete: version {k} is the inspection's last in the tree of {size} records (its head in the map of stream heads)"
NOT_PROVEN = "not proven: that the inspection had no version after the last one shown"

CASES: list[tuple[str, Callable[[Ledger], bytes], Callable[[Ledger], list[str]], int, Callable[[Ledger], str]]] = [
    ("good", plain, lambda l: [], 0, summary),
    ("the last record dropped (map of stream heads)", edited(set_records(lambda r: r[:-1])), lambda l: [], 1,
     lambda l: head_refused(l, 1)),
    ("the last photo capture dropped (and the records after it)",
     edited(lambda b, l: (set_records(lambda r: r[:photo_index(r)])(b, l), b.update(photos=[]))), lambda l: [], 1,
     lambda l: head_refused(l, len(l.bundle["records"]) - photo_index(l.bundle["records"]))),
    ("a /1 bundle: not provable complete", edited(as_format_1), lambda l: [], 0, summary),
    ("a /2 bundle whose head claims another version", edited(lambda b, l: b["head"].update(stream_version=99)),
     lambda l: [], 1,
     lambda l: "NOT VERIFIED: head is not in the checkpoint's map of stream heads (jqc-heads): it proves no head"),
    ("good, the key pinned", plain, lambda l: ["--key", l.bundle["public_key"]], 0,
     lambda l: summary(l, "pinned")),
    ("another key pinned", plain, lambda l: ["--key", other_key(l).verifier_key], 1,
     lambda l: f"NOT VERIFIED: the bundle is signed by {described(l.bundle['public_key'])}, "
               f"not by the pinned key {described(other_key(l).verifier_key)}"),
    ("a malformed pinned key", plain, lambda l: ["--key", "jqc/x+0000+AAAA"], 2,
     lambda l: "UNREADABLE: --key is not an Ed25519 verifier key (<name>+<key id>+<base64 key>)"),
    ("no records", edited(set_records(lambda r: [])), lambda l: [], 1,
     lambda l: "NOT VERIFIED: the bundle holds no records of the inspection: it proves nothing"),
    ("the first record missing", edited(set_records(lambda r: r[1:])), lambda l: [], 1,
     lambda l: f"NOT VERIFIED: records[0] (record {position(l.bundle, 1)}) is version 2 of the inspection, "
               "not its first: the bundle must start at version 1"),
    ("a record left out", edited(set_records(lambda r: r[:1] + r[2:])), lambda l: [], 1,
     lambda l: f"NOT VERIFIED: records[1] (record {position(l.bundle, 2)}) is version 3 of the inspection, "
               "expected 2: a record was left out, added or moved"),
    ("two records swapped", edited(set_records(lambda r: [r[0], r[2], r[1]] + r[3:])), lambda l: [], 1,
     lambda l: f"NOT VERIFIED: records[1] (record {position(l.bundle, 2)}) is version 3 of the inspection, "
               "expected 2: a record was left out, added or moved"),
    ("photos short", edited(set_at(["photos"], [])), lambda l: [], 1,
     lambda l: f"NOT VERIFIED: the photo captured by record {l.bundle['photos'][0]['position']} "
               f"(photo {l.bundle['photos'][0]['photo_id']}, sha256 {l.bundle['photos'][0]['sha256']}) "
               "is missing from photos"),
    ("photos extra", edited(lambda b, l: b["photos"].append({**b["photos"][0], "sha256": "ab" * 32})),
     lambda l: [], 1,
     lambda l: f"NOT VERIFIED: photos[1] (photo {l.bundle['photos'][0]['photo_id']}, sha256 {'ab' * 32}, "
               f"record {l.bundle['photos'][0]['position']}) is not a photo the records capture"),
    ("a photo listed twice", edited(lambda b, l: b["photos"].append(b["photos"][0])), lambda l: [], 1,
     lambda l: "NOT VERIFIED: photos[1] is out of the records' order or appears twice"),
    ("a photo at another record", edited(lambda b, l: b["photos"][0].update(position=1)), lambda l: [], 1,
     lambda l: f"NOT VERIFIED: photos[0] (photo {l.bundle['photos'][0]['photo_id']}, "
               f"sha256 {l.bundle['photos'][0]['sha256']}, record 1) is not a photo the records capture"),
    ("a duplicate member", appended('"records": []'), lambda l: [], 2,
     lambda l: 'UNREADABLE: member "records" appears twice in the bundle'),
    ("a case-variant member", appended('"Records": []'), lambda l: [], 2,
     lambda l: 'UNREADABLE: member "Records" differs from "records" only in case in the bundle'),
    ("an unknown member", appended('"signed_by": "me"'), lambda l: [], 2,
     lambda l: 'UNREADABLE: unknown member "signed_by" in the bundle'),
    ("an unknown member in an entry", edited(set_at(["records", 2, "note"], "x")), lambda l: [], 2,
     lambda l: 'UNREADABLE: unknown member "note" in records[2]'),
    ("a case-variant member in a photo", edited(set_at(["photos", 0, "SHA256"], "x")), lambda l: [], 2,
     lambda l: 'UNREADABLE: member "SHA256" differs from "sha256" only in case in photos[0]'),
    ("a member missing", edited(lambda b, l: b.pop("checkpoint")), lambda l: [], 2,
     lambda l: 'UNREADABLE: member "checkpoint" is missing from the bundle'),
    ("a position as text", edited(set_at(["records", 0, "position"], "5")), lambda l: [], 2,
     lambda l: f"UNREADABLE: records[0].position must be {NUMBER}"),
    ("a position with a fraction", edited(set_at(["records", 0, "position"], 5.0)), lambda l: [], 2,
     lambda l: f"UNREADABLE: records[0].position must be {NUMBER}"),
    ("a negative position", edited(set_at(["key_record", "position"], -1)), lambda l: [], 2,
     lambda l: f"UNREADABLE: key_record.position must be {NUMBER}"),
    ("records an object", edited(set_at(["records"], {})), lambda l: [], 2,
     lambda l: "UNREADABLE: records must be an array"),
    ("an inclusion hash a number", edited(set_at(["records", 1, "inclusion", 0], 7)), lambda l: [], 2,
     lambda l: "UNREADABLE: records[1].inclusion[0] must be a string"),
    ("a checkpoint that is null", edited(set_at(["checkpoint"], None)), lambda l: [], 2,
     lambda l: "UNREADABLE: checkpoint must be a string"),
    ("another format", edited(set_at(["format"], "jqc-proof-bundle/3")), lambda l: [], 2,
     lambda l: 'UNREADABLE: the bundle\'s format is "jqc-proof-bundle/3", not jqc-proof-bundle/1 or jqc-proof-bundle/2'),
    ("malformed JSON", lambda l: l.bundle_text.encode()[:-20], lambda l: [], 2,
     lambda l: "UNREADABLE: the file is not well-formed JSON"),
    ("a trailing comma", lambda l: l.bundle_text.strip().encode()[:-1] + b",}", lambda l: [], 2,
     lambda l: "UNREADABLE: the file is not well-formed JSON"),
    ("two bundles in one file", lambda l: (l.bundle_text.strip() * 2).encode(), lambda l: [], 2,
     lambda l: "UNREADABLE: the file is not well-formed JSON"),
    ("NaN", appended('"x": NaN'), lambda l: [], 2, lambda l: "UNREADABLE: the file is not well-formed JSON"),
    ("not UTF-8", lambda l: b'{"format": "\xff"}', lambda l: [], 2,
     lambda l: "UNREADABLE: the file is not UTF-8 text"),
    ("an array", lambda l: b"[]", lambda l: [], 2, lambda l: "UNREADABLE: the bundle is not a JSON object"),
    ("an empty file", lambda l: b"", lambda l: [], 2, lambda l: "UNREADABLE: the file is not well-formed JSON"),
    ("nested too deep", lambda l: b"[" * 5000 + b"]" * 5000, lambda l: [], 2,
     lambda l: "UNREADABLE: the bundle nests deeper than 64 levels"),
    ("an unprintable member name", appended('"\\u0007\\ud800\\u00e9": 1'), lambda l: [], 2,
     lambda l: 'UNREADABLE: unknown member "\\u{7}\\u{fffd}\\u{e9}" in the bundle'),
    ("an entry's stream version not its record's", edited(set_at(["records", 1, "stream_version"], 7)),
     lambda l: [], 1, lambda l: "NOT VERIFIED: records[1] says stream version 7, its record says 2"),
    ("an entry's type not its record's", edited(set_at(["records", 0, "type"], "inspection.submitted")),
     lambda l: [], 1,
     lambda l: f"NOT VERIFIED: records[0] says type \"inspection.submitted\", its record says "
               f"\"{l.bundle['records'][0]['type']}\""),
    ("the key record's type not its record's", edited(set_at(["key_record", "type"], "x")), lambda l: [], 1,
     lambda l: 'NOT VERIFIED: key_record says type "x", its record says "device.key_published"'),
    ("an entry at another position", edited(lambda b, l: b["records"][1].update(position=b["records"][2]["position"])),
     lambda l: [], 1,
     lambda l: f"NOT VERIFIED: records[1] (record {position(l.bundle, 2)}) is not in the signed tree at that position"),
    ("a position past the tree", edited(set_at(["records", 0, "position"], 10**6)), lambda l: [], 1,
     lambda l: f"NOT VERIFIED: records[0].position 1000000 is outside the signed tree of {tree(l.bundle)[1]} records"),
    ("a record changed", edited(lambda b, l: b["records"][1].update(record=flipped_hash(b["records"][1]["record"]))),
     lambda l: [], 1,
     lambda l: f"NOT VERIFIED: records[1] (record {position(l.bundle, 1)}) is not in the signed tree at that position"),
    ("a record that is not base64", edited(set_at(["records", 0, "record"], "not base64!")), lambda l: [], 1,
     lambda l: "NOT VERIFIED: records[0].record is not base64"),
    ("an inclusion hash of 31 bytes", edited(set_at(["records", 0, "inclusion", 0], base64.b64encode(b"1" * 31).decode())),
     lambda l: [], 1, lambda l: "NOT VERIFIED: records[0].inclusion[0] is not a base64 hash of 32 bytes"),
    ("an inspection id in capitals", edited(lambda b, l: b.update(inspection=b["inspection"].upper())), lambda l: [], 1,
     lambda l: f"NOT VERIFIED: inspection \"{l.id.upper()}\" is not a lower-case UUID"),
    ("another inspection's id", edited(set_at(["inspection"], "00000000-0000-4000-8000-000000000000")), lambda l: [],
     1, lambda l: f"NOT VERIFIED: records[0] (record {position(l.bundle, 0)}) belongs to another stream"),
    ("the origin line not the key's name", edited(resigned(lambda l: "jqc/another-log")), lambda l: [], 1,
     lambda l: f"NOT VERIFIED: the checkpoint's origin line \"jqc/another-log\" is not the key's name "
               f"{tree(l.bundle)[0]}"),
    ("the checkpoint signed by another key",
     edited(lambda b, l: b.update(checkpoint=other_key(l).checkpoint(*tree(b)))), lambda l: [], 1,
     lambda l: f"NOT VERIFIED: the checkpoint is not signed by {described(l.bundle['public_key'])}"),
    ("a signature that does not verify",
     edited(lambda b, l: b.update(checkpoint=bad_signature(b["checkpoint"]))),
     lambda l: [], 1,
     lambda l: f"NOT VERIFIED: the checkpoint carries a signature by {described(l.bundle['public_key'])} "
               "that does not verify"),
    ("a checkpoint that is not a note", edited(set_at(["checkpoint"], "hello")), lambda l: [], 1,
     lambda l: "NOT VERIFIED: the checkpoint is not a signed note (C2SP signed-note)"),
    ("another public key", edited(lambda b, l: b.update(public_key=other_key(l).verifier_key)), lambda l: [], 1,
     lambda l: f"NOT VERIFIED: the checkpoint is not signed by {described(other_key(l).verifier_key)}"),
    ("a public key with a wrong key id",
     edited(lambda b, l: b.update(public_key=b["public_key"].split("+")[0] + "+00000000+"
                                  + b["public_key"].split("+", 2)[2])), lambda l: [], 1,
     lambda l: "NOT VERIFIED: public_key has a key id that does not match the key"),
    ("consistent with the trusted checkpoint", edited(lambda b, l: None, "consistent"), trusted, 0,
     lambda l: summary(l, extends=f", extending the trusted checkpoint of {trusted_size(l)} records")),
    ("consistent, the key pinned", edited(lambda b, l: None, "consistent"),
     lambda l: trusted(l) + ["--key", l.bundle["public_key"]], 0,
     lambda l: summary(l, "pinned", f", extending the trusted checkpoint of {trusted_size(l)} records")),
    ("no consistency proof for the trusted checkpoint", plain, trusted, 1,
     lambda l: f"NOT VERIFIED: the bundle carries no consistency proof from the trusted checkpoint's "
               f"{trusted_size(l)} records (jqc prove --checkpoint TRUSTED adds it)"),
    ("a consistency proof changed",
     edited(lambda b, l: b["consistency"]["proof"].__setitem__(0, flipped_hash(b["consistency"]["proof"][0])),
            "consistent"), trusted, 1,
     lambda l: f"NOT VERIFIED: the bundle's tree of {tree(l.bundle)[1]} records does not extend the trusted "
               f"checkpoint of {trusted_size(l)} records: a record at or before position {trusted_size(l)} "
               "was changed, removed or reordered"),
    ("a trusted checkpoint of another history", edited(lambda b, l: None, "consistent"),
     trusted_file(lambda l: l.device_key.checkpoint(tree(l.bundle)[0], trusted_size(l), b"\x07" * 32)), 1,
     lambda l: f"NOT VERIFIED: the bundle's tree of {tree(l.bundle)[1]} records does not extend the trusted "
               f"checkpoint of {trusted_size(l)} records: a record at or before position {trusted_size(l)} "
               "was changed, removed or reordered"),
    ("a consistency proof from another size",
     edited(lambda b, l: b["consistency"].update(from_size=3), "consistent"), trusted, 1,
     lambda l: f"NOT VERIFIED: the bundle's consistency proof starts at 3 records, the trusted checkpoint has "
               f"{trusted_size(l)}"),
    ("a trusted checkpoint larger than the bundle's", plain,
     trusted_file(lambda l: l.device_key.checkpoint(tree(l.bundle)[0], tree(l.bundle)[1] + 5, b"\x07" * 32)), 1,
     lambda l: f"NOT VERIFIED: the trusted checkpoint has {tree(l.bundle)[1] + 5} records, the bundle's only "
               f"{tree(l.bundle)[1]}: the log was truncated, or the bundle is older"),
    ("the trusted checkpoint is the bundle's own", plain, trusted_file(lambda l: l.bundle["checkpoint"]), 0,
     lambda l: summary(l, extends=f", extending the trusted checkpoint of {tree(l.bundle)[1]} records")),
    ("a trusted checkpoint of the same size, another root", plain,
     trusted_file(lambda l: l.device_key.checkpoint(tree(l.bundle)[0], tree(l.bundle)[1], b"\x07" * 32)), 1,
     lambda l: f"NOT VERIFIED: the trusted checkpoint and the bundle's both have {tree(l.bundle)[1]} records "
               "but different roots: the log was rewritten"),
    ("a trusted checkpoint of another origin", edited(lambda b, l: None, "consistent"),
     trusted_file(lambda l: l.device_key.checkpoint("jqc/elsewhere", *checkpoint_parts(l.trusted)[1:])), 1,
     lambda l: f"NOT VERIFIED: the trusted checkpoint's origin line \"jqc/elsewhere\" is not the key's name "
               f"{tree(l.bundle)[0]}"),
    ("a trusted checkpoint by another key", edited(lambda b, l: None, "consistent"),
     trusted_file(lambda l: other_key(l).checkpoint(*checkpoint_parts(l.trusted))), 1,
     lambda l: f"NOT VERIFIED: the trusted checkpoint is not signed by {described(l.bundle['public_key'])}"),
]


@pytest.mark.parametrize("name,make,options,status,verdict", CASES, ids=[case[0] for case in CASES])
def test_both_verifiers_give_the_same_verdict(ledger: Ledger, go_verifier: Path, name: str,
                                              make: Callable[[Ledger], bytes], options: Callable[[Ledger], list[str]],
                                              status: int, verdict: Callable[[Ledger], str]) -> None:
    path = ledger.write("case.json", make(ledger))
    code, out = both(ledger, go_verifier, path, *options(ledger))
    lines = out.splitlines()
    assert (code, lines[0]) == (status, verdict(ledger)), out
    if status == 0:
        bundle = json.loads(path.read_bytes())
        complete = COMPLETE.format(k=len(bundle["records"]), size=tree(bundle)[1])
        assert lines[1:] == [complete if "head" in bundle else NOT_PROVEN]
    else:
        assert len(lines) == 1, out


def shown_path(path: Path) -> str:
    """A path as the three verifiers print input: its first 64 characters,
    then "..." (a pytest-xdist worker's temporary directory is longer)."""
    text = str(path)
    return text if len(text) <= 64 else text[:64] + "..."


def test_a_missing_file_is_unreadable(ledger: Ledger, go_verifier: Path) -> None:
    missing = ledger.home / "no-such-bundle.json"
    assert both(ledger, go_verifier, missing) == (2, f"UNREADABLE: cannot read {shown_path(missing)}\n")
    code, out = both(ledger, go_verifier, ledger.write("b.json", ledger.bundle_text),
                     "--checkpoint", str(ledger.home / "no-such-checkpoint"))
    assert (code, out) == (
        2, f"UNREADABLE: cannot read the trusted checkpoint {shown_path(ledger.home / 'no-such-checkpoint')}\n")


def test_prove_carries_the_consistency_proof_from_the_trusted_checkpoint(ledger: Ledger) -> None:
    consistency = ledger.consistent["consistency"]
    assert consistency["from_size"] == trusted_size(ledger)
    assert consistency["proof"], "a proof from a smaller tree is not empty"
    assert "consistency" not in ledger.bundle
    # A checkpoint of another history gets no bundle that claims to extend it.
    forged = ledger.write("forged.checkpoint",
                          ledger.device_key.checkpoint(tree(ledger.bundle)[0], trusted_size(ledger), b"\x07" * 32))
    refused = ledger.run("prove", "--checkpoint", str(forged), ledger.id)
    assert refused.returncode == 1 and refused.stdout == "", refused.stdout + refused.stderr
    assert "does not extend the checkpoint" in refused.stderr, refused.stderr


def test_jqc_refuses_a_checkpoint_whose_origin_is_not_the_keys_name(ledger: Ledger) -> None:
    _, size, root = checkpoint_parts(ledger.trusted)
    assert ledger.run("checkpoint", "--verify", str(ledger.trusted_path)).returncode == 0
    other_origin = ledger.write("origin.checkpoint", ledger.device_key.checkpoint("jqc/elsewhere", size, root))
    for command in (["checkpoint", "--verify"], ["verify", "--checkpoint"]):
        refused = ledger.run(*command, str(other_origin))
        assert refused.returncode == 1, refused.stdout + refused.stderr
        assert 'origin line "jqc/elsewhere" is not the key\'s name' in refused.stderr, refused.stderr


# -- Bundles built here from records of our own (a tree and a key of our own),
# to reach the record checks behind the inclusion proof.

def merkle_node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def split_point(n: int) -> int:
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def tree_hash(leaves: list[bytes]) -> bytes:
    if len(leaves) == 1:
        return leaves[0]
    k = split_point(len(leaves))
    return merkle_node(tree_hash(leaves[:k]), tree_hash(leaves[k:]))


def inclusion_path(m: int, leaves: list[bytes]) -> list[bytes]:
    """RFC 9162 PATH(m, D[n])."""
    if len(leaves) == 1:
        return []
    k = split_point(len(leaves))
    if m < k:
        return inclusion_path(m, leaves[:k]) + [tree_hash(leaves[k:])]
    return inclusion_path(m - k, leaves[k:]) + [tree_hash(leaves[:k])]


def leaf_hash(record: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + record).digest()


class CraftedLog:
    """A device key, its key record at position 1, and an inspection of four
    records (the third captures a photo), as CBOR a test may change."""

    def __init__(self, seed: int) -> None:
        import cbor2
        import random
        import uuid

        self.cbor2 = cbor2
        self.random = random.Random(seed)
        self.device = uuid.UUID(int=self.random.getrandbits(128), version=4).bytes
        self.inspection = uuid.UUID(int=self.random.getrandbits(128), version=4)
        self.key = NoteSigner(f"jqc/{uuid.UUID(bytes=self.device)}", self.random.randbytes(32))
        self.photo = {"photo_id": str(uuid.UUID(int=self.random.getrandbits(128), version=4)), "sha256": "ab" * 32,
                      "size": 5, "media_type": "image/png", "kind": "photo", "field_id": None, "issue_id": None}
        self.maps = [self.record_map(1, self.device, 1, "device.key_published",
                                     {"algorithm": "ed25519", "key": self.key.verifier_key})]
        for version in range(1, 5):
            photo = version == 3
            self.maps.append(self.record_map(len(self.maps) + 1, self.inspection.bytes, version,
                                             "photo.captured" if photo else "inspection.answer_set",
                                             self.photo if photo else {"value": "4", "score": 0.5}))
        self.records = self.encode()

    def record_map(self, position: int, stream: bytes, version: int, kind: str, payload: dict[str, Any]) -> dict:
        return {0: 2, 1: position, 2: self.random.randbytes(16), 3: stream, 4: version, 5: kind, 6: 1, 7: "local:dana",
                8: "Dana", 9: self.device, 10: 1_700_000_000_000_000, 11: payload, 12: False}

    def encode(self) -> list[bytes]:
        """The records, each format-2 record of version 2 or more linked to the one before it."""
        out: list[bytes] = []
        for i, record in enumerate(self.maps):
            record = dict(record)
            if i > 1:
                record[13] = leaf_hash(out[-1])
            out.append(self.cbor2.dumps(record, canonical=True))
        return out

    def bundle(self) -> dict[str, Any]:
        leaves = [leaf_hash(r) for r in self.records]

        def entry(i: int) -> dict[str, Any]:
            try:
                decoded = self.cbor2.loads(self.records[i])
                version, kind = decoded[4], decoded[5]
            except Exception:  # a record changed into something else: the entry keeps the intended values
                version, kind = self.maps[i][4], self.maps[i][5]
            if not isinstance(version, int) or not 0 <= version < 2**63:
                version = self.maps[i][4]
            return {"position": i + 1, "stream_version": version, "type": kind if isinstance(kind, str) else "",
                    "record": base64.b64encode(self.records[i]).decode(),
                    "inclusion": [base64.b64encode(h).decode() for h in inclusion_path(i, leaves)]}

        return {"format": "jqc-proof-bundle/1", "inspection": str(self.inspection),
                "checkpoint": self.key.checkpoint(self.key.name, len(self.records), tree_hash(leaves)),
                "public_key": self.key.verifier_key, "key_record": entry(0),
                "records": [entry(i) for i in range(1, len(self.records))],
                "photos": [{"photo_id": self.photo["photo_id"], "sha256": self.photo["sha256"], "position": 4}]}


def test_a_crafted_log_verifies_and_its_records_are_read_strictly(ledger: Ledger, go_verifier: Path) -> None:
    log = CraftedLog(1)
    code, out = both(ledger, go_verifier, ledger.write("crafted.json", dumps(log.bundle())))
    assert code == 0 and out.startswith(f"verified: inspection {log.inspection}, versions 1 to 4 (4 records, "
                                        "1 photo), in the tree of 5 records"), out

    def verdict(change: Callable[[CraftedLog], None]) -> tuple[int, str]:
        crafted = CraftedLog(1)
        change(crafted)
        return both(ledger, go_verifier, ledger.write("crafted.json", dumps(crafted.bundle())))

    def remap(i: int, **keys: Any) -> Callable[[CraftedLog], None]:
        def change(crafted: CraftedLog) -> None:
            crafted.maps[i] = {**crafted.maps[i], **{int(k[1:]): v for k, v in keys.items()}}
            crafted.records = crafted.encode()
        return change

    def raw(i: int, record: Callable[[bytes], bytes]) -> Callable[[CraftedLog], None]:
        def change(crafted: CraftedLog) -> None:
            crafted.records[i] = record(crafted.records[i])
        return change

    def relinked(crafted: CraftedLog) -> None:
        # records[0] changed after records[1] was linked to it (and the tree made anew).
        crafted.records[1] = crafted.cbor2.dumps({**crafted.maps[1], 8: "Mallory"}, canonical=True)

    not_a_record = "records[0].record is not a ledger record (Schemas/ledger-format.md § A record)"
    cases: list[tuple[Callable[[CraftedLog], None], str]] = [
        (remap(1, k1=9), "records[0] says position 2, its record says 9"),
        (remap(0, k5="device.other"), "key_record is a device.other record, not device.key_published"),
        (remap(2, k3=bytes(16)), "records[1] (record 3) belongs to another stream"),
        (remap(3, k11={"photo_id": 7}), "records[2] (record 4) is a photo.captured record without a photo_id "
                                        "and a sha256"),
        (remap(1, k0=3), not_a_record),
        (remap(2, k0=1), "records[1].record is not a ledger record (Schemas/ledger-format.md § A record)"),
        (relinked, "records[1] (record 3) does not link to the record before it in the bundle"),
        (remap(1, k10="yesterday"), not_a_record),
        (raw(1, lambda r: r + b"\x00"), not_a_record),
        (raw(1, lambda r: b"\xbf" + r[1:] + b"\xff"), not_a_record),  # indefinite-length map
        (raw(1, lambda r: b"\xd8\x18" + r), not_a_record),  # a tag
        (raw(1, lambda r: b"\xb8\x0d" + r[1:]), not_a_record),  # a map head not in its shortest form
    ]
    for change, expected in cases:
        code, out = verdict(change)
        assert (code, out) == (1, f"NOT VERIFIED: {expected}\n")


def mutations(seed: int, count: int, bundle: dict[str, Any]) -> list[bytes]:
    """Seeded random edits of a bundle: bytes of its text, or one of its values."""
    import copy
    import random

    rng = random.Random(seed)
    values: list[Any] = [None, True, 0, 1, -1, 2**63, 5.0, "", "A+/=", "jqc-proof-bundle/1", bundle["inspection"],
                         "\u00e9", [], {}, {"position": 1}, {"Position": 1}]

    def paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        out = [path]
        if isinstance(value, dict):
            for k in value:
                out += paths(value[k], path + (k,))
        elif isinstance(value, list):
            for i, item in enumerate(value):
                out += paths(item, path + (i,))
        return out

    out = []
    for _ in range(count):
        if rng.random() < 0.3:
            text = bytearray(json.dumps(bundle).encode())
            for _ in range(rng.randint(1, 3)):
                text[rng.randrange(len(text))] = rng.choice([rng.randrange(256), ord('"'), ord(","), ord("}")])
            out.append(bytes(text))
            continue
        edited = copy.deepcopy(bundle)
        path = rng.choice(paths(edited)[1:])
        target: Any = edited
        for step in path[:-1]:
            target = target[step]
        value = target[path[-1]]
        if isinstance(value, str) and value and rng.random() < 0.5:
            i = rng.randrange(len(value))
            target[path[-1]] = value[:i] + rng.choice("A+/=\n xé0") + value[i + 1:]
        elif isinstance(target, dict) and rng.random() < 0.2:
            del target[path[-1]]
        else:
            target[path[-1]] = rng.choice(values)
        out.append(json.dumps(edited).encode())
    return out


def test_randomly_edited_bundles_get_the_same_verdict_from_both(ledger: Ledger, go_verifier: Path) -> None:
    for i, data in enumerate(mutations(2126, 120, ledger.consistent)):
        path = ledger.write("mutated.json", data)
        code, out = both(ledger, go_verifier, path, "--checkpoint", str(ledger.trusted_path))
        assert code in (0, 1, 2) and out.count("\n") in (1, 2), f"mutation {i}: {out}"


def test_randomly_changed_records_get_the_same_verdict_from_both(ledger: Ledger, go_verifier: Path) -> None:
    import random

    rng = random.Random(2127)
    for n in range(100):
        log = CraftedLog(n)
        i = rng.randrange(len(log.records))
        record = bytearray(log.records[i])
        for _ in range(rng.randint(1, 2)):
            j = rng.randrange(len(record))
            choice = rng.random()
            if choice < 0.5:
                record[j] ^= 1 << rng.randrange(8)
            elif choice < 0.8:
                record[j] = rng.choice([0x9F, 0xBF, 0xFF, 0xF7, 0xF8, 0xC0, 0xD8, 0x18, 0x19, 0xFA, 0xF9, 0x7F, 0x60])
            else:
                del record[j]
        log.records[i] = bytes(record)
        code, out = both(ledger, go_verifier, ledger.write("changed.json", dumps(log.bundle())))
        assert code in (0, 1), f"record {i} changed, case {n}: {out}"


def test_jqcs_bundles_match_the_bundle_schema(ledger: Ledger) -> None:
    for name, bundle in (("plain", ledger.bundle), ("consistent", ledger.consistent)):
        path = ledger.write(f"{name}.json", json.dumps(bundle))
        checked = subprocess.run([sys.executable, str(REPO / "Tools" / "validate-json"), "prove", str(path)],
                                 capture_output=True, text=True, timeout=TIMEOUT)
        assert checked.returncode == 0, f"{name}: {checked.stdout}{checked.stderr}"
