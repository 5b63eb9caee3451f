"""Cosigned proof bundles (`jqc prove ID --cosigned`) through the three
verifiers: Tools/verify-ledger --bundle, Tools/verify-bundle-go and `jqc verify
--bundle` take `--witness-key VKEY` (repeatable) and `--witness-quorum N`,
check every cosignature/v1 line by a given key over the bundle checkpoint's
body (lines by other keys ignored), and must give the same exit status and
lines on every case (Schemas/ledger-format.md § Proof bundles, Cosignatures).

The bundle comes from the built `jqc` against the spec-only witness of
Tools/witness (its own process, over HTTP); the other witnesses of a case are
that witness's code run here, cosigning the bundle's checkpoint body."""

from __future__ import annotations

import base64
import datetime
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "witness"))
import tlog_witness as tw  # noqa: E402
from test_proof_bundles import (  # noqa: E402,F401  (go_verifier is a fixture)
    REPO, Ledger, NoteSigner, both, go_verifier)

WITNESS_SERVER = REPO / "Tools" / "witness" / "serve.py"


class CosignedLedger(Ledger):
    """The bundle tests' ledger, its checkpoint cosigned by a Tools/witness
    process, and a bundle proven against it."""

    def __init__(self, home: Path) -> None:
        super().__init__(home)
        device = NoteSigner.from_file(home / "ledger" / "device.key")
        self.server = subprocess.Popen(
            [sys.executable, str(WITNESS_SERVER), "--state", str(home / "witness-a"), "--name", "witness.example/a",
             "--enrol", device.name, device.verifier_key],
            stdout=subprocess.PIPE, text=True)
        started = json.loads(self.server.stdout.readline())
        self.url, self.witness_key = started["url"], started["vkey"]
        self.ok("witness", "add", self.url, "--key", self.witness_key)
        self.ok("witness", "sync")
        self.cosigned_text = self.ok("prove", "--cosigned", self.id)
        self.cosigned = json.loads(self.cosigned_text)
        # Witnesses b and c: the same spec-only code, their keys held here.
        self.others = [tw.Witness(home / f"witness-{n}", f"witness.example/{n}", clock=lambda: 1_800_000_000)
                       for n in "bc"]

    def stop(self) -> None:
        self.server.terminate()
        self.server.wait(timeout=30)


@pytest.fixture(scope="module")
def cosigned(tmp_path_factory: pytest.TempPathFactory):
    ledger = CosignedLedger(tmp_path_factory.mktemp("cosigned"))
    yield ledger
    ledger.stop()


def body(note: str) -> str:
    return note[: note.rfind("\n\n") + 1]


def time_of(line: str) -> str:
    raw = base64.b64decode(line.rstrip("\n").split(" ")[2])
    t = int.from_bytes(raw[4:12], "big")
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def witness_line(note: str) -> str:
    """The cosignature line of witness a (the Tools/witness process) in the note."""
    return next(line + "\n" for line in note.split("\n") if line.startswith("\u2014 witness.example/a "))


def with_lines(*extra: Callable[[CosignedLedger, str], str]) -> Callable[[CosignedLedger], dict[str, Any]]:
    """The cosigned bundle with more signature lines after its own."""
    def make(ledger: CosignedLedger) -> dict[str, Any]:
        bundle = json.loads(ledger.cosigned_text)
        note = bundle["checkpoint"]
        bundle["checkpoint"] = note + "".join(line(ledger, note) for line in extra)
        return bundle
    return make


def by(index: int) -> Callable[[CosignedLedger, str], str]:
    return lambda ledger, note: ledger.others[index].cosign(body(note))


def truncated(line: str, size: int) -> str:
    dash, name, blob = line.rstrip("\n").split(" ")
    return f"{dash} {name} {base64.b64encode(base64.b64decode(blob)[:size]).decode()}\n"


def flipped(line: str) -> str:
    dash, name, blob = line.rstrip("\n").split(" ")
    raw = bytearray(base64.b64decode(blob))
    raw[-1] ^= 1
    return f"{dash} {name} {base64.b64encode(bytes(raw)).decode()}\n"


def without_witness_a(ledger: CosignedLedger) -> dict[str, Any]:
    bundle = json.loads(ledger.cosigned_text)
    bundle["checkpoint"] = bundle["checkpoint"].replace(witness_line(bundle["checkpoint"]), "")
    return bundle


def a_flipped(ledger: CosignedLedger) -> dict[str, Any]:
    bundle = json.loads(ledger.cosigned_text)
    line = witness_line(bundle["checkpoint"])
    bundle["checkpoint"] = bundle["checkpoint"].replace(line, flipped(line))
    return bundle


def keys(*names: str) -> Callable[[CosignedLedger], list[str]]:
    def options(ledger: CosignedLedger) -> list[str]:
        vkeys = {"a": ledger.witness_key, "b": ledger.others[0].vkey, "c": ledger.others[1].vkey}
        return [option for name in names for option in ("--witness-key", vkeys[name])]
    return options


def described(vkey: str) -> str:
    name, key_id, _ = vkey.split("+", 2)
    return f"{name} (key id {key_id})"


def a_at(ledger: CosignedLedger) -> str:
    return f"witness.example/a at {time_of(witness_line(ledger.cosigned['checkpoint']))}"


B_AT = "witness.example/b at 2027-01-15T08:00:00Z"

# (name, bundle, options, status, lines after the verdict or the whole first line)
CASES: list[tuple[str, Callable[[CosignedLedger], dict[str, Any]], Callable[[CosignedLedger], list[str]], int,
                  Callable[[CosignedLedger], str]]] = [
    ("cosigned by the one witness given", with_lines(), keys("a"), 0,
     lambda l: f"cosigned by {a_at(l)} (1 of 1 witness given, quorum 1 met)"),
    ("no witness given: cosignatures not checked", with_lines(), keys(), 0, lambda l: ""),
    ("2 of 3 given, quorum 2", with_lines(by(0)), lambda l: keys("a", "b", "c")(l) + ["--witness-quorum", "2"], 0,
     lambda l: f"cosigned by {a_at(l)}, {B_AT} (2 of 3 witnesses given, quorum 2 met)"),
    ("2 of 3 given, quorum all", with_lines(by(0)), keys("a", "b", "c"), 1,
     lambda l: f"NOT VERIFIED: the checkpoint is cosigned by {a_at(l)}, {B_AT} only "
               "(2 of 3 witnesses given, quorum 3 not met)"),
    ("a line by a witness not given is ignored", with_lines(by(1)), keys("a"), 0,
     lambda l: f"cosigned by {a_at(l)} (1 of 1 witness given, quorum 1 met)"),
    ("a bad cosignature", a_flipped, keys("a"), 1,
     lambda l: f"NOT VERIFIED: the checkpoint carries a cosignature by {described(l.witness_key)} "
               "that does not verify"),
    ("a bad cosignature of a witness beyond the quorum", with_lines(lambda l, n: flipped(by(0)(l, n))),
     lambda l: keys("a", "b")(l) + ["--witness-quorum", "1"], 1,
     lambda l: f"NOT VERIFIED: the checkpoint carries a cosignature by {described(l.others[0].vkey)} "
               "that does not verify"),
    ("a cosignature of another checkpoint",
     with_lines(lambda l, n: l.others[0].cosign(body(n).replace("\n", "\nx\n", 1))), keys("a", "b"), 1,
     lambda l: f"NOT VERIFIED: the checkpoint carries a cosignature by {described(l.others[0].vkey)} "
               "that does not verify"),
    ("a cosignature line of the wrong length",
     with_lines(lambda l, n: truncated(by(0)(l, n), 73)), keys("b"), 1,
     lambda l: f"NOT VERIFIED: the checkpoint carries a cosignature by {described(l.others[0].vkey)} "
               "that is not a cosignature/v1 (73 bytes, not 76)"),
    ("no cosignature", without_witness_a, keys("a"), 1,
     lambda l: "NOT VERIFIED: the checkpoint carries no cosignature by the 1 witness given (quorum 1 not met)"),
    ("a plain bundle, witnesses given", lambda l: json.loads(l.bundle_text), keys("a", "b"), 1,
     lambda l: "NOT VERIFIED: the checkpoint carries no cosignature by the 2 witnesses given (quorum 2 not met)"),
    ("a device key as a witness key", with_lines(), lambda l: ["--witness-key", l.bundle["public_key"]], 2,
     lambda l: f"UNREADABLE: --witness-key {l.bundle['public_key'][:64]}... is not an Ed25519 cosigner key "
               "(<name>+<key id>+<base64 of 0x04 and 32 key bytes>)"),
    ("one witness given twice", with_lines(), keys("a", "a"), 2,
     lambda l: "UNREADABLE: --witness-key names the witness witness.example/a twice"),
    ("a quorum larger than the witnesses", with_lines(), lambda l: keys("a")(l) + ["--witness-quorum", "2"], 2,
     lambda l: "UNREADABLE: --witness-quorum must be a whole number from 1 to 1 (the --witness-key given)"),
    ("a quorum of 0", with_lines(), lambda l: keys("a", "b")(l) + ["--witness-quorum", "0"], 2,
     lambda l: "UNREADABLE: --witness-quorum must be a whole number from 1 to 2 (the --witness-key given)"),
    ("a quorum without witnesses", with_lines(), lambda l: ["--witness-quorum", "1"], 2,
     lambda l: "UNREADABLE: --witness-quorum needs --witness-key (the witnesses whose cosignatures count)"),
]


@pytest.mark.parametrize("name,make,options,status,line", CASES, ids=[case[0] for case in CASES])
def test_the_three_verifiers_agree_on_cosignatures(cosigned: CosignedLedger, go_verifier: Path, name: str,
                                                   make, options, status: int, line) -> None:
    path = cosigned.write("cosigned.json", json.dumps(make(cosigned)))
    got_status, output = both(cosigned, go_verifier, path, *options(cosigned))
    lines = output.splitlines()
    assert got_status == status, output
    if status == 0:
        # The lines without witnesses given, the cosignature's line after the verdict.
        plain_status, plain = both(cosigned, go_verifier, path)
        assert plain_status == 0, plain
        expected = plain.splitlines()
        assert expected[0].startswith(f"verified: inspection {cosigned.id}, versions 1 to "), plain
        if line(cosigned):
            expected.insert(1, line(cosigned))
        assert lines == expected, output
    else:
        assert lines == [line(cosigned)], output


def test_prove_cosigned_is_the_cosigned_checkpoint_and_refused_past_it(cosigned: CosignedLedger) -> None:
    stored = (cosigned.home / "ledger" / "cosigned-checkpoint").read_text()
    assert cosigned.cosigned["checkpoint"] == stored
    assert witness_line(stored) in stored
    assert cosigned.cosigned["records"][-1]["position"] <= int(stored.split("\n")[1])
    cosigned.ok("--as", "Dana", "set", cosigned.id, "Floors", "5")
    refused = cosigned.run("prove", "--cosigned", cosigned.id)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert refused.stdout == ""
    assert "1 record after the latest cosigned checkpoint" in refused.stderr, refused.stderr
    assert "'jqc witness sync'" in refused.stderr, refused.stderr
    cosigned.ok("witness", "sync")
    again = json.loads(cosigned.ok("prove", "--cosigned", cosigned.id))
    assert len(again["records"]) == len(cosigned.cosigned["records"]) + 1
    assert again["checkpoint"] == (cosigned.home / "ledger" / "cosigned-checkpoint").read_text()


def test_prove_cosigned_without_a_witness_names_witness_sync(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path)
    refused = ledger.run("prove", "--cosigned", ledger.id)
    assert refused.returncode != 0 and refused.stdout == ""
    assert "no witness has cosigned a checkpoint of this log" in refused.stderr, refused.stderr
    assert "'jqc witness sync'" in refused.stderr, refused.stderr
