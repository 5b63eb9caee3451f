"""`Tools/verify-ledger --handover` against `jqc receive`: for every case of
the handover refusal tests that a file can be built for here (a genuine file,
a second one, the same file, one byte changed in each part, JSON that is no
handover file, a member in another case, the receiver's own file (check 6), a forged key
under a known device id, `--key` that does not match, a backup used as a
second device: a fork), the tool is given what the receiver holds (the files
it took: `--held`; its device id: `--receiver`) and must accept exactly what
`jqc receive` accepts, refusing with the same class of first line.

The files come from the built `jqc` ($JQC_BIN, default .build/debug/jqc).
"""
import base64
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TOOL = REPO / "Tools" / "verify-ledger"
REFERENCE = REPO / "Tools" / "fixtures" / "reference.json"
CLASSES = ("UNREADABLE", "NOT VERIFIED", "NOT RECEIVED")


def jqc_binary():
    path = Path(os.environ.get("JQC_BIN") or REPO / ".build" / "debug" / "jqc")
    if not path.exists():
        pytest.fail(f"these tests run the built jqc, and there is none at {path}: build it first")
    return path


class Ledger:
    def __init__(self, path):
        self.path = path

    def __call__(self, *args, check=True, actor="Dana"):
        result = subprocess.run([str(jqc_binary()), "--ledger", str(self.path), "--as", actor, *args],
                                capture_output=True, text=True, env={**os.environ, "JQC_AS_TEST": "1"})
        if check and result.returncode != 0:
            raise AssertionError(f"jqc {' '.join(args)}: {result.stdout}{result.stderr}")
        return result

    @property
    def device(self):
        return json.loads((self.path / "config.json").read_text())["device_id"].lower()

    def share(self, inspection, out):
        self("handover", inspection, "--share", "-o", str(out))
        return out


def ledger(tmp, name, device=None):
    jqc = Ledger(tmp / name)
    jqc("init")
    if device:
        # Another ledger under a known device's id (its own, new key).
        config = json.loads((jqc.path / "config.json").read_text())
        config["device_id"] = device.upper()
        (jqc.path / "config.json").write_text(json.dumps(config))
        (jqc.path / "device.key").unlink()
    jqc("pull", "--from", str(REFERENCE))
    return jqc


def start(jqc):
    inspection = json.loads(jqc("--json", "start", "-t", "Restroom QC", "-f", "101").stdout)["id"]
    jqc("set", inspection, "Floors", "4")
    return inspection


def tool(file, *args):
    return subprocess.run([sys.executable, str(TOOL), "--handover", str(file), *args], capture_output=True, text=True)


def verdict_class(text):
    first = text.strip().splitlines()[0] if text.strip() else ""
    first = first[len("jqc: "):] if first.startswith("jqc: ") else first
    return next((c for c in CLASSES if first.startswith(c + ":")), first)


def agree(receiver, file, held=(), key=None):
    """Runs the tool with what `receiver` holds, then `jqc receive`: both accept, or both refuse alike."""
    args = [a for h in held for a in ("--held", str(h))] + ["--receiver", receiver.device]
    receive = ["receive", str(file)]
    if key:
        args += ["--key", key]
        receive += ["--key", key]
    checked = tool(file, *args)
    received = receiver(*receive, check=False, actor="Cy")
    assert checked.returncode in (0, 1), checked.stderr
    assert (checked.returncode == 0) == (received.returncode == 0), \
        f"tool: {checked.stdout}{checked.stderr}\njqc: {received.stdout}{received.stderr}"
    # Every refusal has its class on both sides (the receiver's own file too: NOT RECEIVED).
    if received.returncode:
        assert verdict_class(received.stderr) in CLASSES, received.stderr
        assert verdict_class(checked.stdout) == verdict_class(received.stderr), \
            f"tool: {checked.stdout}\njqc: {received.stderr}"
    return checked, received


@pytest.fixture(scope="module")
def sender(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("handover-verifier")
    x = ledger(tmp, "x")
    inspection = start(x)
    photo = tmp / "stall.png"
    # The smallest PNG the photo store takes: its signature and an IHDR chunk are enough for the sniffing.
    photo.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(17))
    x("photo", inspection, "Photo of problem area", str(photo))
    return tmp, x, inspection, x.share(inspection, tmp / "x1.json")


def flip(text, index):
    raw = bytearray(base64.b64decode(text))
    raw[min(index, len(raw) - 1)] ^= 1
    return base64.b64encode(bytes(raw)).decode()


DAMAGES = {
    "first record": lambda f: f["bundle"]["records"][0].update(record=flip(f["bundle"]["records"][0]["record"], 60)),
    "last record": lambda f: f["bundle"]["records"][-1].update(record=flip(f["bundle"]["records"][-1]["record"], 60)),
    "inclusion": lambda f: f["bundle"]["records"][1]["inclusion"].__setitem__(
        0, flip(f["bundle"]["records"][1]["inclusion"][0], 3)),
    "photo": lambda f: f["photo_files"][0].update(data=flip(f["photo_files"][0]["data"], 30)),
    "signature": lambda f: f["bundle"].update(checkpoint=f["bundle"]["checkpoint"][:-6]
                                              + ("B" if f["bundle"]["checkpoint"][-6] == "A" else "A")
                                              + f["bundle"]["checkpoint"][-5:]),
    "template record": lambda f: f["template_record"].update(record=flip(f["template_record"]["record"], 60)),
    "key record": lambda f: f["bundle"]["key_record"].update(record=flip(f["bundle"]["key_record"]["record"], 60)),
    "photo list": lambda f: f["bundle"].update(photos=[]),
    "mode": lambda f: f.update(mode="handover"),
    "unknown member": lambda f: f.update(extra=1),
}


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_a_changed_file_is_refused_by_both(sender, tmp_path, damage):
    _, _, _, original = sender
    file = json.loads(original.read_text())
    DAMAGES[damage](file)
    path = tmp_path / "damaged.json"
    path.write_text(json.dumps(file))
    checked, _ = agree(ledger(tmp_path, "c"), path)
    assert checked.returncode == 1


@pytest.mark.parametrize("text", ['{"format":"jqc-handover/1"}', "[]", "not json", '{"format": 3}',
                                  '{"format":"jqc-handover/9"}'])
def test_json_that_is_no_handover_file_is_unreadable_to_both(tmp_path, text):
    path = tmp_path / "bad.json"
    path.write_text(text)
    checked, _ = agree(ledger(tmp_path, "c"), path)
    assert checked.stdout.startswith("UNREADABLE: ")


def test_a_member_in_another_case_and_a_directory_are_refused_by_both(sender, tmp_path):
    _, _, _, original = sender
    path = tmp_path / "case.json"
    path.write_text(original.read_text().replace('"photo_files"', '"Photo_files"'))
    c = ledger(tmp_path, "c")
    assert "Photo_files" in agree(c, path)[0].stdout
    assert agree(c, tmp_path)[0].returncode == 1


def test_the_genuine_file_again_and_the_senders_own_are_judged_alike(sender, tmp_path):
    _, x, inspection, original = sender
    c = ledger(tmp_path, "c")
    assert agree(c, original)[0].returncode == 0
    assert agree(c, original, held=[original])[0].returncode == 0
    checked, received = agree(x, original)
    # Check 6: the sender's own file, received by the sender, is NOT RECEIVED to both, saying why.
    assert checked.stdout.startswith("NOT RECEIVED: ") and "own device id" in checked.stdout
    assert verdict_class(received.stderr) == "NOT RECEIVED" and "own device id" in received.stderr


def test_a_forged_key_under_a_known_device_and_a_key_not_given_are_refused_by_both(sender, tmp_path):
    _, x, _, original = sender
    c = ledger(tmp_path, "c")
    agree(c, original)
    forger = ledger(tmp_path, "forger", device=x.device)
    forged = forger.share(start(forger), tmp_path / "forged.json")
    checked, received = agree(c, forged, held=[original])
    assert checked.returncode == 1 and "pinned key" in checked.stdout and "pinned key" in received.stderr
    other = ledger(tmp_path, "other")
    other("checkpoint")
    given = json.loads(other("--json", "key").stdout)["in_force"]
    assert agree(ledger(tmp_path, "d"), original, key=given)[0].returncode == 1
    assert agree(ledger(tmp_path, "e"), original, key=json.loads(x("--json", "key").stdout)["in_force"])[
        0].returncode == 0


def test_a_backup_used_as_a_second_device_is_a_fork_to_both(sender, tmp_path):
    _, x, _, _ = sender
    copy = Ledger(tmp_path / "x")
    shutil.copytree(x.path, copy.path)
    inspection = start(copy)
    c = ledger(tmp_path, "c")
    first = copy.share(inspection, tmp_path / "first.json")
    agree(c, first)
    backup = Ledger(tmp_path / "backup")
    copy("backup", str(backup.path))
    copy("set", inspection, "Floors", "3")
    backup("set", inspection, "Floors", "1")
    genuine = copy.share(inspection, tmp_path / "genuine.json")
    forked = backup.share(inspection, tmp_path / "forked.json")
    assert agree(c, genuine, held=[first])[0].returncode == 0
    checked, received = agree(c, forked, held=[first, genuine])
    assert "two histories" in checked.stdout and "two histories" in received.stderr


def handover_module():
    """The tool's module with the verify-ledger script as its `base`, for checks on one record."""
    import importlib.machinery
    import importlib.util
    loader = importlib.machinery.SourceFileLoader("verify_ledger", str(TOOL))
    base = importlib.util.module_from_spec(importlib.util.spec_from_loader("verify_ledger", loader))
    loader.exec_module(base)
    spec = importlib.util.spec_from_file_location("handover", REPO / "Tools" / "verify_ledger_handover.py")
    handover = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(handover)
    return base, handover


@pytest.mark.parametrize("change, problem", [
    (lambda r: None, None),
    (lambda r: r[11].pop("value"), 'the key "value" is missing'),
    (lambda r: r.__setitem__(11, ["not", "a", "map"]), "not a map with text keys"),
    (lambda r: r.__setitem__(6, 9), "no event type inspection.field_set of schema version 9"),
    (lambda r: r.__setitem__(5, "inspection.unheard_of"), "no event type inspection.unheard_of"),
    (lambda r: r.__setitem__(5, "../envelope"), "no event type ../envelope"),
])
def test_check_5_reads_each_record_as_an_event_of_its_type(sender, change, problem):
    """Check 5 as jqc's decoders make it: a record of the genuine file reads; one whose payload lacks a key
    its type requires, is no map, or whose type or version jqc does not know, does not."""
    _, _, _, original = sender
    base, handover = handover_module()
    file = json.loads(original.read_text())
    raw = base64.b64decode(next(e["record"] for e in file["bundle"]["records"]
                                if e["type"] == "inspection.field_set"))
    record = base.decode_record(raw)
    change(record)
    found = handover.payload_problem(record)
    assert (found is None) if problem is None else (found is not None and problem in found), found
