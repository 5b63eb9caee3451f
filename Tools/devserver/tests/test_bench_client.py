"""Tools/sync-bench-client, the baseline of `ledger-bench sync`, against a live server."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from devserver_harness import REPO, DevServer

CLIENT = REPO / "Tools" / "sync-bench-client"


def write_plan(directory: Path, items: int) -> Path:
    lines = []
    for n in range(items):
        photo = directory / f"photo-{n}.jpg"
        photo.write_bytes(b"\xff\xd8\xff\xe0bench photo " + str(n).encode() + uuid.uuid4().bytes)
        lines.append(json.dumps({
            "photos": [{"file": str(photo), "filename": photo.name, "media_type": "image/jpeg",
                        "entity_type": "inspection", "field_id": "10", "key": str(uuid.uuid4())}],
            "photo_fields": {"10": 0},
            "inspection": {"key": str(uuid.uuid4()), "body": {
                "client_id": str(uuid.uuid4()), "template_id": 11, "facility_id": 101, "area_id": None,
                "form_data": {"2": 4, "10": ""}, "overall_score": 80.0,
                "started_at": f"2024-05-01T09:{n:02d}:00.000Z", "completed_at": f"2024-05-01T09:{n:02d}:30.000Z"}},
            "issues": [{"key": str(uuid.uuid4()), "body": {
                "client_id": str(uuid.uuid4()), "inspection_id": 0, "facility_id": 101, "severity": "low",
                "description": f"bench issue {n}"}}],
        }))
    plan = directory / "plan.jsonl"
    plan.write_text("\n".join(lines) + "\n")
    return plan


@pytest.mark.parametrize("concurrency", [1, 4])
def test_bench_client_sends_every_item_in_order(start_server, tmp_path: Path, concurrency: int) -> None:
    server: DevServer = start_server("--admin", "--latency-ms", "150")
    plan = write_plan(tmp_path, 6)
    done = subprocess.run([sys.executable, str(CLIENT), "--concurrency", str(concurrency), server.api, str(plan)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["requests"] == 6 * 3 + 2 and result["concurrency"] == concurrency
    records = server.admin_get("records")
    assert len(records["inspections"]) == 6 and len(records["issues"]) == 6 and len(records["files"]) == 6
    # each inspection points at its own photo, each issue at its inspection
    assert sorted(i["form_data"]["10"].removeprefix("/uploads/") for i in records["inspections"]) == records["files"]
    by_id = {i["id"]: i for i in records["inspections"]}
    for issue in records["issues"]:
        n = int(issue["description"].rsplit(" ", 1)[1])
        assert by_id[issue["inspection_id"]]["started_at"] == f"2024-05-01T09:{n:02d}:00.000Z"
    in_flight = server.stats()["max_in_flight"]
    assert in_flight == 1 if concurrency == 1 else in_flight >= 2
