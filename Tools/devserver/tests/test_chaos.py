"""The chaos test of issue 9: the built `jqc` syncs through faults and ends,
without any person's step, with every inspection, issue and photo on the
server exactly once and every photo attached, against both server profiles.

It builds nothing: it runs the `jqc` at $JQC_BIN (default `.build/debug/jqc`
under the repository root, as `swift build` makes it; `Tools/test` builds one
before running pytest and names it). A
missing binary is a failure, not a skip.

One run per profile (`contract`: the whole of Schemas/openapi.yaml;
`reference`: without its extensions, so no idempotency and no client_id):

1. a fresh ledger, `jqc init`, `jqc login`, `jqc pull`; inspections recorded,
   each with a photo in its image field and an issue with a photo of its own;
2. chaos, for a bounded time and number of runs: 30% of API requests answered
   500, 30% of committed writes and of token refreshes losing their answer,
   a photo-upload outage, every access token expired now and then, `jqc sync`
   killed with SIGKILL at random moments (and `jqc verify` after each kill),
   and more inspections recorded while a sync is running;
3. the faults off, `jqc sync` again until the outbox is empty (bounded);
4. the server's records compared with the ledger's: each inspection and issue
   exactly once, with the server id the ledger adopted; each photo uploaded
   once (uploads are stored by content) and attached where it belongs (the
   inspection's image field, the issue's photo_path); no uploaded file that
   nothing points to. On the reference profile an issue may be there more
   than once only if jqc flagged it as possibly sent twice (that server
   lists no issues, so a lost answer after its commit cannot be checked; see
   `compare`), and every issue is there at least once.

Every failed assertion of step 4 is collected and reported together, with
the seed. Time: about a minute per profile; JQC_SYNC_BACKOFF_SCALE shrinks
the client's backoff (the client honours it in tests) so the outage of a few
tens of seconds stands for one of several minutes.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import signal
import struct
import subprocess
import time
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from devserver_harness import REPO, DevServer

SEED = int(os.environ.get("JQC_CHAOS_SEED", "20261201"))
BACKOFF_SCALE = "0.02"  # 2 s becomes 40 ms, the 5 min cap 6 s
RECORDED_BEFORE = 5  # inspections recorded before the chaos
RECORDED_DURING = 2  # and while syncs run under it
CHAOS_SECONDS = 35.0
CHAOS_MAX_RUNS = 40
OUTAGE_SECONDS = 20.0
CLEAN_SECONDS = 40.0
CLEAN_MAX_RUNS = 20
SYNC_RUN_LIMIT = 12.0  # a sync still running after this is killed too


def jqc_binary() -> Path:
    configured = os.environ.get("JQC_BIN")
    path = Path(configured) if configured else Path(".build/debug/jqc")
    if not path.is_absolute():
        path = REPO / path
    if not (path.is_file() and os.access(path, os.X_OK)):
        pytest.fail(
            f"the chaos test runs the built jqc, and there is none at {path}: build it first "
            "(`swift build`, which Tools/test does before pytest) or point JQC_BIN at a jqc binary",
            pytrace=False,
        )
    return path


def png(path: Path, seed: int) -> None:
    """A small PNG whose bytes differ for every seed."""
    rgb = bytes([seed % 251, (seed * 7) % 251, (seed * 13) % 251])
    raw = b"".join(b"\x00" + rgb * 8 for _ in range(8))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = chunk(b"IHDR", struct.pack(">IIBBBBB", 8, 8, 8, 2, 0, 0, 0))
    text = chunk(b"tEXt", b"Comment\x00chaos photo " + str(seed).encode())
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + header + text + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


class Device:
    """One ledger on one device, driven through the jqc binary."""

    def __init__(self, binary: Path, home: Path, files: Path) -> None:
        self.binary = binary
        self.home = home
        self.files = files
        files.mkdir(parents=True, exist_ok=True)
        self.env = {
            **os.environ,
            "JQC_HOME": str(home),
            "NO_COLOR": "1",
            "JQC_SYNC_BACKOFF_SCALE": BACKOFF_SCALE,
        }
        self.recorded = 0

    def run(self, *args: str, stdin: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(self.binary), *args], input=stdin, capture_output=True, text=True,
                              env=self.env, timeout=timeout)

    def ok(self, *args: str, stdin: str | None = None) -> str:
        done = self.run(*args, stdin=stdin)
        assert done.returncode == 0, f"jqc {' '.join(args)} exited {done.returncode}:\n{done.stdout}{done.stderr}"
        return done.stdout

    def json(self, *args: str) -> Any:
        return json.loads(self.ok("--json", *args))

    def sync(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen([str(self.binary), "sync", *args], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, text=True, env=self.env)

    def record(self) -> str:
        """One submitted inspection: answers, a photo in its image field, an
        issue with a photo of its own."""
        n = self.recorded
        self.recorded += 1
        started = self.json("start", "--template", "Restroom QC", "--facility", "Riverside Medical Center")
        inspection = started["id"]
        self.ok("set", inspection, "Floors", str(1 + n % 5))
        self.ok("set", inspection, "Toilets and urinals", "4")
        self.ok("set", inspection, "Soap dispensers stocked", "pass" if n % 2 else "fail")
        photo, issue_photo = self.files / f"field-{n}.png", self.files / f"issue-{n}.png"
        png(photo, 2 * n + 1)
        png(issue_photo, 2 * n + 2)
        self.ok("photo", inspection, "Photo of problem area", str(photo))
        self.ok("flag", inspection, "--severity", "high", "--description", f"Leaking tap in stall {n}",
                "--photo", str(issue_photo))
        self.ok("submit", inspection)
        return inspection


def kill(process: subprocess.Popen[str]) -> bool:
    """SIGKILL, if it is still running; whether it was."""
    if process.poll() is not None:
        return False
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=10)
    return True


def instant(text: str) -> dt.datetime:
    """An RFC 3339 timestamp as a UTC instant."""
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(dt.timezone.utc)


def same_instant(a: dt.datetime, b: dt.datetime) -> bool:
    """Equal to the millisecond the server keeps (a client may round, not cut)."""
    return abs((a - b).total_seconds()) <= 0.001


def compare(device: Device, records: dict[str, Any], profile: str) -> list[str]:
    """What is wrong on the server, compared with the ledger; empty if nothing.

    Inspections and photos: exactly once on both profiles. Issues: exactly
    once on the contract profile. The reference profile lists no issues and
    honours no Idempotency-Key, so an issue whose answer was lost after the
    server committed it cannot be known to be there: jqc sends it again and
    flags it (`possibly_sent_twice` in `jqc show --json`). There every issue
    must be on the server at least once, and one that is there more than
    once must be one jqc flagged; its photo is then attached once per copy.
    """
    problems: list[str] = []
    local = [i for i in device.json("inspections") if i["status"] == "completed"]
    shown = {i["id"]: device.json("show", i["id"]) for i in local}
    server_inspections = records["inspections"]
    server_issues = records["issues"]
    files = set(records["files"])
    references: dict[str, list[str]] = {}

    if len(server_inspections) != len(local):
        problems.append(f"the server has {len(server_inspections)} inspections, the ledger {len(local)}")
    by_server_id = {}
    for item in local:
        show = shown[item["id"]]
        started, completed = instant(show["started_at"]), instant(show["completed_at"])
        matches = [s for s in server_inspections
                   if str(s["template_id"]) == str(item["template_id"])
                   and str(s["facility_id"]) == str(item["facility_id"])
                   and ("started_at" not in s or same_instant(instant(s["started_at"]), started))
                   and same_instant(instant(s["completed_at"]), completed)]
        name = f"inspection {item['id'][:8]}"
        for record in matches:
            by_server_id[record["id"]] = item["id"]
        if len(matches) != 1:
            problems.append(f"{name} is on the server {len(matches)} times (ids {[m['id'] for m in matches]})")
        elif str(show["sync"].get("server_id")) != str(matches[0]["id"]):
            problems.append(f"{name}: the ledger adopted server id {show['sync'].get('server_id')}, "
                            f"the server's record is {matches[0]['id']}")
        if show["sync"]["state"] != "synced":
            problems.append(f"{name}: the ledger says {show['sync']['state']!r}, not synced")
        for record in matches:
            where = name if len(matches) == 1 else f"{name} (server id {record['id']})"
            for photo in show["photos"]:
                if photo.get("issue_id"):
                    continue
                value = record["form_data"].get(str(photo["field_id"]))
                expected = f"/uploads/{photo['sha256']}."
                if not (isinstance(value, str) and value.startswith(expected)):
                    problems.append(f"{where}: field {photo['field_id']} holds {value!r} on the server, "
                                    f"not its photo {photo['sha256'][:12]}")
                elif value.removeprefix("/uploads/") not in files:
                    problems.append(f"{where}: field {photo['field_id']} points at {value}, which was never uploaded")
                else:
                    references.setdefault(value, []).append(f"{where} field {photo['field_id']}")

    local_issues = [(inspection_id, issue) for inspection_id, show in shown.items() for issue in show["issues"]]
    # copies allowed on the server, by issue id: more than one only for a flagged issue on the reference profile
    copies: dict[str, int] = {}
    # how many holders each flagged issue's photo may have (one per copy)
    allowed_holders: dict[str, int] = {}
    matched = 0
    for inspection_id, issue in local_issues:
        name = f"issue {issue['id'][:8]} of inspection {inspection_id[:8]}"
        server_parent = [sid for sid, lid in by_server_id.items() if lid == inspection_id]
        matches = [s for s in server_issues
                   if s["description"] == issue["description"] and s["inspection_id"] in server_parent]
        matched += len(matches)
        flagged = issue.get("possibly_sent_twice") is True
        may_repeat = profile == "reference" and flagged
        copies[issue["id"]] = len(matches)
        if not matches or (len(matches) > 1 and not may_repeat):
            unflagged = "" if not matches or profile != "reference" else \
                ", and jqc did not flag it as possibly sent twice"
            problems.append(f"{name} is on the server {len(matches)} times (ids {[m['id'] for m in matches]})"
                            + unflagged)
        elif str(issue.get("server_id")) not in [str(m["id"]) for m in matches]:
            problems.append(f"{name}: the ledger adopted server id {issue.get('server_id')}, "
                            f"the server's records are {[m['id'] for m in matches]}")
        if len(matches) > 1 and may_repeat:
            for photo in shown[inspection_id]["photos"]:
                if photo.get("issue_id") == issue["id"] and photo.get("server_path"):
                    allowed_holders[photo["server_path"]] = len(matches)
        photos = [p for p in shown[inspection_id]["photos"] if p.get("issue_id") == issue["id"]]
        for record in matches:
            where = name if len(matches) == 1 else f"{name} (server id {record['id']})"
            for photo in photos:
                expected = f"/uploads/{photo['sha256']}."
                path = record["photo_path"]
                if not (isinstance(path, str) and path.startswith(expected)):
                    problems.append(f"{where}: photo_path is {path!r} on the server, "
                                    f"not its photo {photo['sha256'][:12]}")
                elif path.removeprefix("/uploads/") not in files:
                    problems.append(f"{where}: photo_path {path} was never uploaded")
                else:
                    references.setdefault(path, []).append(where)
        if not photos:
            problems.append(f"{name}: the ledger lost its photo")
    if matched != len(server_issues):
        problems.append(f"the server has {len(server_issues)} issues, {matched} of them the ledger's "
                        f"({len(local_issues)} issues in the ledger)")
    if profile == "contract" and len(server_issues) != len(local_issues):
        problems.append(f"the server has {len(server_issues)} issues, the ledger {len(local_issues)}")

    for path, holders in sorted(references.items()):
        if len(holders) != allowed_holders.get(path, 1):
            problems.append(f"{path} is attached {len(holders)} times: {holders}")
    dangling = sorted(f for f in files if f"/uploads/{f}" not in references)
    if dangling:
        problems.append(f"{len(dangling)} uploaded file(s) that nothing on the server points to: {dangling}")
    return problems


@pytest.mark.parametrize("profile", ["contract", "reference"])
def test_sync_survives_chaos_exactly_once_with_every_photo(profile: str, tmp_path: Path) -> None:
    binary = jqc_binary()
    rng = random.Random(f"{SEED}-{profile}")
    server = DevServer(tmp_path / "server", ["--admin", "--profile", profile, "--seed", str(SEED), "--quiet",
                                             "--exit-after", "240"])
    runs: list[subprocess.Popen[str]] = []
    try:
        device = Device(binary, tmp_path / "ledger", tmp_path / "files")
        device.ok("init", "--server", server.api)
        device.ok("login", "--username", "inspector", "--password-stdin", stdin="inspector-pass\n")
        device.ok("pull")
        for _ in range(RECORDED_BEFORE):
            device.record()

        # -- chaos -----------------------------------------------------------
        server.admin("faults", {"fault_rate": 0.3, "drop_after_commit_rate": 0.3, "drop_refresh_rate": 0.3,
                                "photo_outage_seconds": OUTAGE_SECONDS})
        kills = 0
        deadline = time.monotonic() + CHAOS_SECONDS
        for run in range(CHAOS_MAX_RUNS):
            if time.monotonic() > deadline:
                break
            if run % 3 == 2:
                server.admin("faults", {"expire_tokens_now": True})
            # Mostly an unattended `sync --watch`, killed at a random moment;
            # sometimes a plain `sync`, left to finish (or killed at the limit).
            watch = rng.random() < 0.7
            process = device.sync("--watch", "--interval", "1") if watch else device.sync()
            runs.append(process)
            if run in (1, 4):
                # recording while a sync runs (the sync may be killed meanwhile too)
                for _ in range(RECORDED_DURING // 2):
                    device.record()
            if watch:
                time.sleep(rng.uniform(0.1, 2.5))
            else:
                try:
                    process.wait(timeout=SYNC_RUN_LIMIT)
                except subprocess.TimeoutExpired:
                    pass
            if kill(process):
                kills += 1
                verified = device.run("verify")
                assert verified.returncode == 0, f"jqc verify after kill {kills}:\n{verified.stdout}{verified.stderr}"
        assert kills >= 3, f"only {kills} syncs were killed: the chaos did not happen (seed {SEED})"

        # -- the faults end; syncing until the outbox is empty ----------------
        server.admin("reset-faults")
        outbox: list[Any] = device.json("outbox")
        deadline = time.monotonic() + CLEAN_SECONDS
        last = ""
        for clean_run in range(CLEAN_MAX_RUNS):
            if not outbox or time.monotonic() > deadline:
                break
            if clean_run:
                time.sleep(1.0)  # what a stalled item waits for (the scaled backoff) comes due
            done = device.run("sync", timeout=CLEAN_SECONDS)
            last = done.stdout + done.stderr
            outbox = device.json("outbox")
        records = server.admin_get("records")
        problems = compare(device, records, profile)
        if outbox:
            kinds = Counter(f"{o['kind']} {o['state']}: {o['last_error']}" for o in outbox)
            problems.insert(0, f"the outbox still holds {len(outbox)} item(s) after the faults ended and up to "
                               f"{CLEAN_MAX_RUNS} syncs: {dict(kinds)}\n  the last sync said: {last.strip()}")
        assert not problems, (
            f"profile {profile}, seed {SEED}, {kills} kills, {device.recorded} inspections recorded:\n- "
            + "\n- ".join(problems)
        )
    finally:
        for process in runs:
            kill(process)
        server.stop()
