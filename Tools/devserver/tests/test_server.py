"""Behaviour of the development server, through HTTP, against a real subprocess."""

from __future__ import annotations

import concurrent.futures
import hashlib
import http.client
import json
import re
import time
import uuid
from typing import Any

import pytest
import requests

from devserver_harness import AUDITOR, DevServer, envelope_data, envelope_error, load_fixture

JPEG = b"\xff\xd8\xff\xe0" + b"devserver test photo " * 20
PNG = b"\x89PNG\r\n\x1a\n" + b"another photo " * 10
UPLOAD_PATH = re.compile(r"^/uploads/[0-9a-f]{64}\.(jpg|png|gif|webp|heic|bin)$")
RESPONSE_TS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def write_headers(token: str, key: str | None) -> dict[str, str]:
    headers = auth(token)
    if key is not None:
        headers["Idempotency-Key"] = key
    return headers


def new_key() -> str:
    return str(uuid.uuid4())


def inspection_body(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "client_id": str(uuid.uuid4()),
        "template_id": 11,
        "facility_id": 101,
        "area_id": 1001,
        "form_data": {"2": 4, "3": 5, "5": "pass", "7": True, "8": "Good", "9": "all fine", "10": ""},
        "overall_score": 92.0,
        "started_at": "2024-05-01T09:00:00.000Z",
        "completed_at": "2024-05-01T09:30:00.000Z",
        "parent_inspection_id": None,
        "follow_up_required": False,
    }
    body.update(overrides)
    return body


def post_inspection(server: DevServer, token: str, body: dict[str, Any], key: str | None = None) -> requests.Response:
    return requests.post(
        f"{server.api}/inspections", json=body, headers=write_headers(token, new_key() if key is None else key), timeout=10
    )


def post_issue(server: DevServer, token: str, body: dict[str, Any], key: str | None = None) -> requests.Response:
    return requests.post(f"{server.api}/issues", json=body, headers=write_headers(token, new_key() if key is None else key), timeout=10)


def upload(server: DevServer, token: str, data: bytes, key: str | None, entity_type: str = "inspection",
           field_id: str | None = "10", filename: str = "photo.jpg") -> requests.Response:
    fields: dict[str, Any] = {"entity_type": entity_type}
    if field_id is not None:
        fields["field_id"] = field_id
    return requests.post(
        f"{server.api}/photos/upload",
        headers=write_headers(token, key),
        data=fields,
        files={"file": (filename, data, "image/jpeg")},
        timeout=10,
    )


@pytest.fixture
def server(shared_server: DevServer) -> DevServer:
    shared_server.admin("reset-faults")
    return shared_server


@pytest.fixture
def token(server: DevServer) -> str:
    return server.login()["access_token"]


# -- startup -----------------------------------------------------------------


def test_prints_listening_line_and_binds_loopback(server: DevServer) -> None:
    assert f"listening on http://127.0.0.1:{server.port}" in server.stdout()
    assert server.port_file.read_text().strip() == str(server.port)


def test_keep_alive_reuses_one_connection(server: DevServer, token: str) -> None:
    before = server.stats()["connections"]
    with requests.Session() as session:
        for _ in range(5):
            r = session.get(f"{server.api}/facilities", headers=auth(token), timeout=10)
            assert r.status_code == 200
            assert r.headers.get("Connection", "").lower() != "close"
            assert int(r.headers["Content-Length"]) == len(r.content)
    after = server.stats()["connections"]
    # one connection for the session (plus the one the stats call itself used)
    assert after - before == 2


# -- auth ------------------------------------------------------------------


def test_login_me_refresh_rotation_and_logout(server: DevServer) -> None:
    r = requests.post(f"{server.api}/auth/login", json={"username": "inspector", "password": "inspector-pass"})
    assert r.status_code == 200
    data = envelope_data(r)
    assert data["user"] == {"id": data["user"]["id"], "username": "inspector", "role": "inspector",
                            "display_name": "Dana Inspector"}
    assert data["token_type"] == "Bearer" and data["expires_in"] == 900
    assert re.fullmatch(r"[0-9a-f]{64}", data["refresh_token"])
    assert data["access_token"].count(".") == 2

    me = requests.get(f"{server.api}/auth/me", headers=auth(data["access_token"]))
    assert me.status_code == 200 and envelope_data(me) == data["user"]

    r = requests.get(f"{server.api}/auth/me")
    assert r.status_code == 401 and "Bearer" in r.headers["WWW-Authenticate"]
    envelope_error(r)
    r = requests.get(f"{server.api}/auth/me", headers=auth(data["access_token"] + "x"))
    assert r.status_code == 401 and "invalid" in envelope_error(r)

    r = requests.post(f"{server.api}/auth/login", json={"username": "inspector", "password": "wrong"})
    assert r.status_code == 401 and "invalid username or password" in envelope_error(r)
    r = requests.post(f"{server.api}/auth/login", json={"username": "inspector"})
    assert r.status_code == 422 and envelope_error(r).startswith("password")
    r = requests.post(f"{server.api}/auth/login", data="{not json", headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and "JSON" in envelope_error(r)

    auditor = server.login(AUDITOR)
    assert auditor["user"]["role"] == "auditor"

    # rotation: each refresh token works exactly once
    first = data["refresh_token"]
    r = requests.post(f"{server.api}/auth/refresh", json={"refresh_token": first})
    assert r.status_code == 200
    second = envelope_data(r)
    assert set(second) == {"access_token", "refresh_token", "token_type", "expires_in"}
    assert second["refresh_token"] != first and second["access_token"] != data["access_token"]
    assert requests.get(f"{server.api}/auth/me", headers=auth(second["access_token"])).status_code == 200
    # (a reuse within the grace period is answered with the same pair: test_refresh_grace_*)
    r = requests.post(f"{server.api}/auth/refresh", json={"refresh_token": "0" * 64})
    assert r.status_code == 401
    r = requests.post(f"{server.api}/auth/refresh", json={})
    assert r.status_code == 422 and envelope_error(r).startswith("refresh_token")

    # logout revokes the current refresh token; it is then refused
    r = requests.post(f"{server.api}/auth/logout", json={"refresh_token": second["refresh_token"]})
    assert r.status_code == 200 and r.json() == {"ok": True, "data": None, "error": None}
    r = requests.post(f"{server.api}/auth/refresh", json={"refresh_token": second["refresh_token"]})
    assert r.status_code == 401 and "revoked" in envelope_error(r)
    # best effort: an empty body or an unknown token is fine
    assert requests.post(f"{server.api}/auth/logout").status_code == 200
    assert requests.post(f"{server.api}/auth/logout", json={"refresh_token": "nope"}).status_code == 200


def test_refresh_grace_replays_the_same_pair(server: DevServer) -> None:
    login = server.login()
    first = requests.post(f"{server.api}/auth/refresh", json={"refresh_token": login["refresh_token"]})
    assert first.status_code == 200
    # the answer was lost (say): the same old token again gets the same new pair, byte for byte
    again = requests.post(f"{server.api}/auth/refresh", json={"refresh_token": login["refresh_token"]})
    assert again.status_code == 200 and again.content == first.content
    assert again.headers["Idempotent-Replayed"] == "true" and "Idempotent-Replayed" not in first.headers
    pair = envelope_data(again)
    assert requests.get(f"{server.api}/auth/me", headers=auth(pair["access_token"])).status_code == 200
    # the new refresh token rotates as usual
    third = requests.post(f"{server.api}/auth/refresh", json={"refresh_token": pair["refresh_token"]})
    assert third.status_code == 200 and envelope_data(third)["refresh_token"] != pair["refresh_token"]
    # once that session is logged out, the old token's replay is refused too
    latest = envelope_data(third)["refresh_token"]
    assert requests.post(f"{server.api}/auth/logout", json={"refresh_token": latest},
                         headers=auth(envelope_data(third)["access_token"])).status_code == 200
    r = requests.post(f"{server.api}/auth/refresh", json={"refresh_token": pair["refresh_token"]})
    assert r.status_code == 401 and "revoked" in envelope_error(r)


def test_refresh_grace_ends(start_server) -> None:
    server = start_server("--refresh-grace", "0.5")
    login = server.login()
    assert requests.post(f"{server.api}/auth/refresh", json={"refresh_token": login["refresh_token"]}).status_code == 200
    time.sleep(1.0)
    r = requests.post(f"{server.api}/auth/refresh", json={"refresh_token": login["refresh_token"]})
    assert r.status_code == 401 and "already used" in envelope_error(r) and "0.5 s" in envelope_error(r)


def test_no_refresh_grace(start_server) -> None:
    server = start_server("--refresh-grace", "0")
    login = server.login()
    assert requests.post(f"{server.api}/auth/refresh", json={"refresh_token": login["refresh_token"]}).status_code == 200
    r = requests.post(f"{server.api}/auth/refresh", json={"refresh_token": login["refresh_token"]})
    assert r.status_code == 401 and "already used" in envelope_error(r)


def test_lost_refresh_answer_is_recovered_by_the_grace(server: DevServer) -> None:
    login = server.login()
    server.admin("faults", {"drop_refresh_rate": 1.0})
    with pytest.raises(requests.exceptions.ConnectionError):
        requests.post(f"{server.api}/auth/refresh", json={"refresh_token": login["refresh_token"]})
    assert server.stats()["requests"]["POST /api/v1/auth/refresh"].get("dropped", 0) >= 1
    server.admin("reset-faults")
    # the rotation was committed, the client never heard: the retry gets that pair
    r = requests.post(f"{server.api}/auth/refresh", json={"refresh_token": login["refresh_token"]})
    assert r.status_code == 200 and r.headers["Idempotent-Replayed"] == "true"
    assert requests.get(f"{server.api}/auth/me", headers=auth(envelope_data(r)["access_token"])).status_code == 200


def test_expire_tokens_now_then_refresh(server: DevServer) -> None:
    login = server.login()
    assert requests.get(f"{server.api}/auth/me", headers=auth(login["access_token"])).status_code == 200
    server.admin("faults", {"expire_tokens_now": True})
    r = requests.get(f"{server.api}/auth/me", headers=auth(login["access_token"]))
    assert r.status_code == 401 and "expired" in envelope_error(r)
    r = requests.post(f"{server.api}/auth/refresh", json={"refresh_token": login["refresh_token"]})
    assert r.status_code == 200
    fresh = envelope_data(r)["access_token"]
    assert requests.get(f"{server.api}/auth/me", headers=auth(fresh)).status_code == 200


def test_refuse_refresh(server: DevServer) -> None:
    login = server.login()
    server.admin("faults", {"refuse_refresh": True})
    r = requests.post(f"{server.api}/auth/refresh", json={"refresh_token": login["refresh_token"]})
    assert r.status_code == 401 and "refused" in envelope_error(r)
    # the access token itself still works
    assert requests.get(f"{server.api}/auth/me", headers=auth(login["access_token"])).status_code == 200
    server.admin("reset-faults")
    # a refused refresh did not use the token up
    r = requests.post(f"{server.api}/auth/refresh", json={"refresh_token": login["refresh_token"]})
    assert r.status_code == 200


def test_access_token_lifetime(start_server) -> None:
    server = start_server("--access-ttl", "1")
    login = server.login()
    assert login["expires_in"] == 1
    assert requests.get(f"{server.api}/auth/me", headers=auth(login["access_token"])).status_code == 200
    time.sleep(2.1)
    r = requests.get(f"{server.api}/auth/me", headers=auth(login["access_token"]))
    assert r.status_code == 401 and "expired" in envelope_error(r)
    r = requests.post(f"{server.api}/auth/refresh", json={"refresh_token": login["refresh_token"]})
    assert r.status_code == 200
    assert requests.get(f"{server.api}/auth/me", headers=auth(envelope_data(r)["access_token"])).status_code == 200


# -- reference data ------------------------------------------------------------


def test_reference_data_from_fixtures(server: DevServer, token: str) -> None:
    fixture_facilities = load_fixture("facilities.json")
    fixture_templates = load_fixture("templates.json")

    facilities = envelope_data(requests.get(f"{server.api}/facilities", headers=auth(token)))
    assert [f["id"] for f in facilities] == [101, 102]
    assert facilities[0]["name"] == fixture_facilities[0]["name"]
    assert facilities[0]["project_name"] == "Healthcare East"
    assert [a["id"] for a in facilities[0]["areas"]] == [1001, 1002]

    areas = envelope_data(requests.get(f"{server.api}/facilities/101/areas", headers=auth(token)))
    assert areas == fixture_facilities[0]["areas"]
    for missing in ("999", "abc", "0"):
        r = requests.get(f"{server.api}/facilities/{missing}/areas", headers=auth(token))
        assert r.status_code == 404
        envelope_error(r)

    templates = envelope_data(requests.get(f"{server.api}/templates", headers=auth(token)))
    # "22" in the fixture is normalised to the integer 22
    assert [t["id"] for t in templates] == [11, 22]
    assert all(isinstance(t["id"], int) for t in templates)
    t22 = envelope_data(requests.get(f"{server.api}/templates/22", headers=auth(token)))
    assert t22["id"] == 22 and t22["name"] == "Office Area QC" and t22["version"] == 1
    assert t22["form_schema"] == fixture_templates[1]["form_schema"]
    t11 = envelope_data(requests.get(f"{server.api}/templates/11", headers=auth(token)))
    assert t11["form_schema"]["fields"][1] == {"id": 2, "type": "rating", "label": "Floors", "col": 1, "row": 2,
                                               "colSpan": 4, "rowSpan": 1, "required": True}
    r = requests.get(f"{server.api}/templates/12345", headers=auth(token))
    assert r.status_code == 404 and "12345" in envelope_error(r)
    assert requests.get(f"{server.api}/templates").status_code == 401
    r = requests.get(f"{server.api}/nope", headers=auth(token))
    assert r.status_code == 404 and envelope_error(r) == "not found"


# -- uploads and idempotency -----------------------------------------------------


def test_upload_replay_returns_identical_response(server: DevServer, token: str) -> None:
    photo = JPEG + uuid.uuid4().bytes
    key = new_key()
    first = upload(server, token, photo, key)
    assert first.status_code == 201, first.text
    path = envelope_data(first)["path"]
    assert UPLOAD_PATH.match(path)
    assert path == f"/uploads/{hashlib.sha256(photo).hexdigest()}.jpg"
    assert "Idempotent-Replayed" not in first.headers

    replay = upload(server, token, photo, key)
    assert replay.status_code == first.status_code
    assert replay.content == first.content
    assert replay.headers["Idempotent-Replayed"] == "true"

    # the file is served back, with auth
    r = requests.get(f"{server.base}{path}", headers=auth(token))
    assert r.status_code == 200 and r.content == photo and r.headers["Content-Type"] == "image/jpeg"
    assert requests.get(f"{server.base}{path}").status_code == 401
    assert requests.get(f"{server.base}/uploads/{'0' * 64}.jpg", headers=auth(token)).status_code == 404

    # same key, different bytes: refused
    r = upload(server, token, photo + b"!", key)
    assert r.status_code == 422 and "Idempotency-Key" in envelope_error(r)
    # same key, same bytes, different field: refused too
    r = upload(server, token, photo, key, field_id="11")
    assert r.status_code == 422
    # no key: refused
    r = upload(server, token, photo, None)
    assert r.status_code == 400 and "Idempotency-Key" in envelope_error(r)
    # a new key for the same bytes: a new upload, the same content-addressed path
    again = upload(server, token, photo, new_key(), filename="other-name.jpeg")
    assert again.status_code == 201 and envelope_data(again)["path"] == path


def test_upload_validation(server: DevServer, token: str) -> None:
    r = upload(server, token, JPEG, new_key(), entity_type="report")
    assert r.status_code == 422 and envelope_error(r).startswith("entity_type")
    r = upload(server, token, b"", new_key())
    assert r.status_code == 422 and envelope_error(r).startswith("file")
    r = requests.post(f"{server.api}/photos/upload", headers=write_headers(token, new_key()),
                      data={"entity_type": "issue"}, files={"other": ("a.jpg", JPEG)})
    assert r.status_code == 422 and envelope_error(r).startswith("other")
    r = requests.post(f"{server.api}/photos/upload", headers=write_headers(token, new_key()),
                      files={"entity_type": (None, "issue")})
    assert r.status_code == 422 and envelope_error(r).startswith("file")
    r = requests.post(f"{server.api}/photos/upload", headers=write_headers(token, new_key()), json={"file": "x"})
    assert r.status_code == 400 and "multipart" in envelope_error(r)
    # PNG bytes are stored as .png whatever the file name says; issue photos need no field id
    r = upload(server, token, PNG + uuid.uuid4().bytes, new_key(), entity_type="issue", field_id=None,
               filename="x.jpg")
    assert r.status_code == 201 and envelope_data(r)["path"].endswith(".png")


def test_upload_too_large(start_server) -> None:
    server = start_server("--max-upload-bytes", "2000")
    token = server.login()["access_token"]
    r = upload(server, token, JPEG * 20, new_key())
    assert r.status_code == 413 and "too large" in envelope_error(r)
    r = upload(server, token, JPEG, new_key())
    assert r.status_code == 201


def test_inspection_replay_same_key_same_body(server: DevServer, token: str) -> None:
    before = server.stats()["inspections"]
    body = inspection_body()
    key = new_key()
    first = post_inspection(server, token, body, key)
    assert first.status_code == 201, first.text
    new_id = envelope_data(first)["id"]
    assert isinstance(new_id, int)

    replay = post_inspection(server, token, body, key)
    assert (replay.status_code, replay.content) == (first.status_code, first.content)
    # the same JSON value with another key order and spacing is the same request
    raw = json.dumps(dict(reversed(list(body.items()))), indent=2)
    replay2 = requests.post(f"{server.api}/inspections", data=raw,
                            headers={**write_headers(token, key), "Content-Type": "application/json"})
    assert (replay2.status_code, replay2.content) == (first.status_code, first.content)

    # same key, different body: refused, nothing recorded
    r = post_inspection(server, token, {**body, "overall_score": 50}, key)
    assert r.status_code == 422 and "Idempotency-Key" in envelope_error(r)
    # the same key on another endpoint is another request too
    r = post_issue(server, token, {"client_id": str(uuid.uuid4()), "inspection_id": new_id, "facility_id": 101,
                                   "severity": "low", "description": "x"}, key)
    assert r.status_code == 422 and "Idempotency-Key" in envelope_error(r)

    # a new key with the same client_id: the existing record, 200, no duplicate
    other = post_inspection(server, token, body, new_key())
    assert other.status_code == 200 and envelope_data(other) == {"id": new_id}
    # client_id compares case-insensitively (it is a UUID)
    upper = post_inspection(server, token, {**body, "client_id": body["client_id"].upper()}, new_key())
    assert upper.status_code == 200 and envelope_data(upper) == {"id": new_id}
    # another user may not claim it
    auditor = server.login(AUDITOR)["access_token"]
    r = post_inspection(server, auditor, body, new_key())
    assert r.status_code == 409 and envelope_error(r).startswith("client_id")

    assert server.stats()["inspections"] == before + 1


def test_writes_without_idempotency_key_are_refused(server: DevServer, token: str) -> None:
    before = server.stats()
    r = post_inspection(server, token, inspection_body(), key="")
    assert r.status_code == 400 and "Idempotency-Key" in envelope_error(r)
    r = requests.post(f"{server.api}/inspections", json=inspection_body(), headers=auth(token))
    assert r.status_code == 400 and "Idempotency-Key" in envelope_error(r)
    r = requests.post(f"{server.api}/issues", json={}, headers=auth(token))
    assert r.status_code == 400 and "Idempotency-Key" in envelope_error(r)
    r = requests.post(f"{server.api}/inspections", json=inspection_body(),
                      headers={**auth(token), "Idempotency-Key": "has space"})
    assert r.status_code == 400
    after = server.stats()
    assert (after["inspections"], after["issues"]) == (before["inspections"], before["issues"])


INVALID_INSPECTIONS = [
    ({"client_id": "not-a-uuid"}, "client_id"),
    ({"template_id": 999}, "template_id"),
    ({"template_id": "eleven"}, "template_id"),
    ({"facility_id": 999}, "facility_id"),
    ({"area_id": 1003}, "area_id"),  # an area of facility 102
    ({"area_id": 424242}, "area_id"),
    ({"form_data": []}, "form_data"),
    ({"form_data": {"99": "x"}}, "form_data.99"),
    ({"form_data": {"2": 7}}, "form_data.2"),
    ({"form_data": {"7": "yes"}}, "form_data.7"),
    ({"form_data": {"8": "Splendid"}}, "form_data.8"),
    ({"form_data": {"1": "x"}}, "form_data.1"),  # a section field
    ({"form_data": {"10": "local://photo.jpg"}}, "form_data.10"),
    ({"form_data": {"10": "/uploads/" + "a" * 64 + ".jpg"}}, "form_data.10"),  # never uploaded
    ({"overall_score": 101}, "overall_score"),
    ({"overall_score": "90"}, "overall_score"),
    ({"started_at": None}, "started_at"),
    ({"completed_at": "yesterday"}, "completed_at"),
    ({"completed_at": "2024-05-01T08:00:00Z"}, "completed_at"),  # before started_at
    ({"parent_inspection_id": 987654}, "parent_inspection_id"),
    ({"follow_up_required": "yes"}, "follow_up_required"),
    ({"templateId": 11}, "templateId"),
]


@pytest.mark.parametrize("change,field", INVALID_INSPECTIONS, ids=[f for _, f in INVALID_INSPECTIONS])
def test_invalid_inspection_is_422_naming_the_field(server: DevServer, token: str, change: dict[str, Any],
                                                    field: str) -> None:
    body = inspection_body(**change)
    if change.get("started_at", 0) is None:
        del body["started_at"]
    r = post_inspection(server, token, body)
    assert r.status_code == 422, r.text
    error = envelope_error(r)
    assert error.startswith(field + ":") or error.startswith(field + "["), error


def test_inspection_accepts_string_ids_nulls_and_template_22(server: DevServer, token: str) -> None:
    photo = envelope_data(upload(server, token, JPEG + uuid.uuid4().bytes, new_key(), field_id="14"))["path"]
    body = {
        "client_id": str(uuid.uuid4()).upper(),
        "template_id": "22",
        "facility_id": "102",
        "area_id": "1003",
        "form_data": {
            "2": "Pat", "3": "pat@example.com", "4": "2024-04-30", "5": 12.5, "6": "Day",
            "7": ["Desks", "Lobby"], "8": 3, "9": 0, "10": "", "11": "Pass",
            "12": [["Soap", "4", "no"], ["Towels", "1", "yes"]], "13": None, "14": photo,
        },
        "overall_score": 65,
        "started_at": "2024-05-02T10:00:00+02:00",
        "completed_at": "2024-05-02T08:45:30.123456789Z",
    }
    r = post_inspection(server, token, body)
    assert r.status_code == 201, r.text
    bad = dict(body, client_id=str(uuid.uuid4()), form_data={"12": [["only one cell"]]})
    r = post_inspection(server, token, bad)
    assert r.status_code == 422 and envelope_error(r).startswith("form_data.12[0]")


def test_reinspection_clears_parent_follow_up(server: DevServer, token: str) -> None:
    parent = post_inspection(server, token, inspection_body(follow_up_required=True,
                                                            completed_at="2030-01-01T00:00:00.000Z"))
    parent_id = envelope_data(parent)["id"]
    wrong = post_inspection(server, token, inspection_body(template_id=22, form_data={},
                                                           parent_inspection_id=parent_id))
    assert wrong.status_code == 422 and envelope_error(wrong).startswith("parent_inspection_id")
    child = post_inspection(server, token, inspection_body(parent_inspection_id=str(parent_id),
                                                           completed_at="2030-01-02T00:00:00.000Z"))
    assert child.status_code == 201
    history = envelope_data(requests.get(f"{server.api}/inspections", params={"limit": 100}, headers=auth(token)))
    by_id = {i["id"]: i for i in history["inspections"]}
    assert by_id[parent_id]["follow_up_required"] is False
    assert by_id[envelope_data(child)["id"]]["parent_inspection_id"] == parent_id


def test_issue_requires_existing_inspection(server: DevServer, token: str) -> None:
    before = server.stats()["issues"]
    issue = {"client_id": str(uuid.uuid4()), "inspection_id": 987654, "facility_id": 101,
             "severity": "high", "description": "Leaking tap", "photo_path": None}
    r = post_issue(server, token, issue)
    assert r.status_code == 422 and envelope_error(r).startswith("inspection_id")

    inspection_id = envelope_data(post_inspection(server, token, inspection_body()))["id"]
    issue["inspection_id"] = inspection_id
    for change, field in [({"severity": "urgent"}, "severity"), ({"description": "   "}, "description"),
                          ({"facility_id": 102}, "facility_id"), ({"photo_path": "local://x.jpg"}, "photo_path"),
                          ({"client_id": 5}, "client_id"), ({"extra": 1}, "extra")]:
        r = post_issue(server, token, {**issue, **change})
        assert r.status_code == 422 and envelope_error(r).startswith(field), (change, r.text)

    key = new_key()
    created = post_issue(server, token, issue, key)
    assert created.status_code == 201
    replay = post_issue(server, token, issue, key)
    assert (replay.status_code, replay.content) == (created.status_code, created.content)
    same_client_id = post_issue(server, token, {**issue, "photo_path": ""}, new_key())
    assert same_client_id.status_code == 200 and envelope_data(same_client_id) == envelope_data(created)

    photo = envelope_data(upload(server, token, JPEG + uuid.uuid4().bytes, new_key(), entity_type="issue",
                                 field_id=None))["path"]
    with_photo = post_issue(server, token, {**issue, "client_id": str(uuid.uuid4()), "photo_path": photo,
                                            "inspection_id": str(inspection_id)})
    assert with_photo.status_code == 201
    assert server.stats()["issues"] == before + 2


# -- faults ------------------------------------------------------------------


def test_drop_after_commit_then_retry_makes_exactly_one_record(server: DevServer, token: str) -> None:
    before = server.stats()
    server.admin("faults", {"drop_after_commit_rate": 1.0})
    body = inspection_body()
    raw = json.dumps(body)
    key = new_key()

    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.request("POST", "/api/v1/inspections", body=raw,
                 headers={**write_headers(token, key), "Content-Type": "application/json"})
    with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
        conn.getresponse()
    conn.close()

    middle = server.stats()
    assert middle["inspections"] == before["inspections"] + 1  # committed although the client heard nothing
    assert middle["requests"]["POST /api/v1/inspections"].get("dropped", 0) >= 1

    # the client retries with the same key: the first response, no second record (replays are never dropped)
    retry = requests.post(f"{server.api}/inspections", data=raw,
                          headers={**write_headers(token, key), "Content-Type": "application/json"})
    assert retry.status_code == 201 and retry.headers["Idempotent-Replayed"] == "true"
    inspection_id = envelope_data(retry)["id"]
    # a retry under a new key (say, the key was lost too) still finds the record by client_id
    server.admin("reset-faults")
    again = post_inspection(server, token, body)
    assert again.status_code == 200 and envelope_data(again)["id"] == inspection_id
    assert server.stats()["inspections"] == before["inspections"] + 1


def test_drop_after_commit_on_upload(server: DevServer, token: str) -> None:
    server.admin("faults", {"drop_after_commit_rate": 1.0})
    key = new_key()
    photo = JPEG + uuid.uuid4().bytes
    with pytest.raises(requests.exceptions.ConnectionError):
        upload(server, token, photo, key)
    retry = upload(server, token, photo, key)
    assert retry.status_code == 201
    assert envelope_data(retry)["path"].startswith("/uploads/" + hashlib.sha256(photo).hexdigest())


def test_runtime_fault_rate_and_paths(server: DevServer, token: str) -> None:
    server.admin("faults", {"fault_rate": 1.0, "fault_paths": ["/api/v1/templates"]})
    r = requests.get(f"{server.api}/templates", headers=auth(token))
    assert r.status_code == 500 and "injected" in envelope_error(r)
    assert requests.get(f"{server.api}/facilities", headers=auth(token)).status_code == 200
    server.admin("faults", {"fault_status": 429})
    r = requests.get(f"{server.api}/templates/11", headers=auth(token))
    assert r.status_code == 429 and r.headers["Retry-After"] == "1"
    envelope_error(r)
    # an injected fault happens before anything: a write is not recorded
    before = server.stats()["inspections"]
    server.admin("faults", {"fault_rate": 1.0, "fault_status": 500, "fault_paths": None})
    r = post_inspection(server, token, inspection_body())
    assert r.status_code == 500
    stats = server.stats()
    assert stats["inspections"] == before
    assert stats["requests"]["POST /api/v1/inspections"]["500"] >= 1
    server.admin("reset-faults")
    assert requests.get(f"{server.api}/templates", headers=auth(token)).status_code == 200


def test_latency(server: DevServer, token: str) -> None:
    server.admin("faults", {"latency_ms": 300})
    started = time.monotonic()
    assert requests.get(f"{server.api}/facilities", headers=auth(token)).status_code == 200
    assert time.monotonic() - started >= 0.3


def test_admin_faults_validation(server: DevServer) -> None:
    r = requests.post(f"{server.base}/__admin/faults", json={"fault_rate": 2})
    assert r.status_code == 422 and envelope_error(r).startswith("fault_rate")
    r = requests.post(f"{server.base}/__admin/faults", json={"nonsense": True})
    assert r.status_code == 422


def test_fault_rate_from_command_line(start_server) -> None:
    server = start_server("--fault-rate", "1", "--seed", "3", "--admin")
    for method, path in [("POST", "/auth/login"), ("GET", "/templates"), ("GET", "/auth/me")]:
        r = requests.request(method, f"{server.api}{path}", json={"username": "inspector", "password": "x"})
        assert r.status_code == 500 and r.json() == {"ok": False, "data": None,
                                                     "error": "internal server error (injected fault)"}
    # admin endpoints are never faulted; turning the faults off works at run time
    server.admin("faults", {"fault_rate": 0})
    assert server.login()["user"]["username"] == "inspector"


def test_fault_sequence_is_deterministic_with_a_seed(start_server) -> None:
    def statuses(server: DevServer) -> list[int]:
        with requests.Session() as s:
            return [s.get(f"{server.api}/templates").status_code for _ in range(24)]

    a = statuses(start_server("--fault-rate", "0.5", "--seed", "42"))
    b = statuses(start_server("--fault-rate", "0.5", "--seed", "42"))
    assert a == b
    assert set(a) == {401, 500}  # some faulted, some reached the auth check


def test_admin_endpoints_need_the_admin_flag(start_server) -> None:
    server = start_server()
    assert requests.get(f"{server.base}/__admin/stats").status_code == 404
    assert requests.post(f"{server.base}/__admin/faults", json={"fault_rate": 1}).status_code == 404


# -- history -------------------------------------------------------------------


def test_history_listing_limit_offset_total(start_server) -> None:
    server = start_server("--admin")
    token = server.login()["access_token"]
    empty = envelope_data(requests.get(f"{server.api}/inspections?status=completed", headers=auth(token)))
    assert empty == {"inspections": [], "total": 0}

    ids = []
    for day in (3, 1, 5, 2, 4):
        body = inspection_body(started_at=f"2024-06-0{day}T08:00:00Z", completed_at=f"2024-06-0{day}T09:00:00.5+00:00")
        ids.append((day, envelope_data(post_inspection(server, token, body))["id"]))
    newest_first = [i for _, i in sorted(ids, reverse=True)]

    def page(limit: int, offset: int) -> dict[str, Any]:
        r = requests.get(f"{server.api}/inspections", headers=auth(token),
                         params={"status": "completed", "limit": limit, "offset": offset})
        assert r.status_code == 200
        return envelope_data(r)

    p0, p1, p2 = page(2, 0), page(2, 2), page(2, 4)
    assert [p["total"] for p in (p0, p1, p2)] == [5, 5, 5]
    assert [i["id"] for p in (p0, p1, p2) for i in p["inspections"]] == newest_first
    assert len(p2["inspections"]) == 1
    assert page(30, 10)["inspections"] == []

    item = p0["inspections"][0]
    assert item["completed_at"] == "2024-06-05T09:00:00.500Z" and RESPONSE_TS.match(item["created_at"])
    assert item["started_at"] == "2024-06-05T08:00:00.000Z"
    assert (item["template_name"], item["facility_name"], item["area_name"]) == \
        ("Restroom QC", "Riverside Medical Center", "Lobby restrooms")
    assert item["inspector_name"] == "Dana Inspector" and item["status"] == "completed"
    assert item["form_data"] == inspection_body()["form_data"] and item["overall_score"] == 92.0

    default = envelope_data(requests.get(f"{server.api}/inspections", headers=auth(token)))
    assert default["total"] == 5 and len(default["inspections"]) == 5
    for params, field in [({"limit": 0}, "limit"), ({"limit": 101}, "limit"), ({"offset": -1}, "offset"),
                          ({"limit": "ten"}, "limit"), ({"status": "draft"}, "status")]:
        r = requests.get(f"{server.api}/inspections", params=params, headers=auth(token))
        assert r.status_code == 422 and envelope_error(r).startswith(field)
    assert requests.get(f"{server.api}/inspections").status_code == 401


# -- persistence, scores, logs ---------------------------------------------------


def test_idempotency_keys_survive_a_restart(start_server, tmp_path) -> None:
    db = tmp_path / "persist" / "db.sqlite3"
    first_server = start_server("--db", str(db), name="first")
    token = first_server.login()["access_token"]
    key, body = new_key(), inspection_body()
    first = post_inspection(first_server, token, body, key)
    assert first.status_code == 201
    assert first_server.stop() == 0 or first_server.proc.returncode is not None

    second_server = start_server("--db", str(db), "--admin", name="second")
    # the signing secret lives in the database, so the token is still good
    replay = post_inspection(second_server, token, body, key)
    assert (replay.status_code, replay.content) == (first.status_code, first.content)
    assert second_server.stats()["inspections"] == 1
    assert (db.parent / "db.sqlite3.uploads").is_dir()


def test_verify_score(start_server) -> None:
    server = start_server("--verify-score")
    token = server.login()["access_token"]
    # ratings 4/5 and 5/5, pass, true, Good -> (0.8 + 1 + 1 + 1 + 1) / 5 = 96%
    r = post_inspection(server, token, inspection_body(overall_score=92.0))
    assert r.status_code == 422 and "expected 96.0" in envelope_error(r)
    assert post_inspection(server, token, inspection_body(overall_score=96.0)).status_code == 201
    assert post_inspection(server, token, inspection_body(form_data={"9": "x"}, overall_score=None)).status_code == 201


def test_logs_never_contain_tokens_or_passwords(start_server) -> None:
    server = start_server()
    login = server.login()
    refreshed = envelope_data(requests.post(f"{server.api}/auth/refresh",
                                            json={"refresh_token": login["refresh_token"]}))
    requests.get(f"{server.api}/auth/me", headers=auth(refreshed["access_token"]))
    requests.get(f"{server.api}/auth/me", headers=auth("garbage.token.value"))
    requests.post(f"{server.api}/auth/logout", json={"refresh_token": refreshed["refresh_token"]})
    requests.post(f"{server.api}/auth/login", json={"username": "inspector", "password": "s3cret-typo"})
    server.stop()
    logs = server.stderr() + server.stdout()
    assert "POST /api/v1/auth/refresh 200" in logs  # requests are logged ...
    for secret in (login["access_token"], login["refresh_token"], refreshed["access_token"],
                   refreshed["refresh_token"], "inspector-pass", "s3cret-typo", "garbage.token.value", "Bearer"):
        assert secret not in logs  # ... but never a secret


def test_exit_after_stops_the_server(start_server) -> None:
    server = start_server("--exit-after", "0.5")  # the later flag wins over the default 120
    assert server.proc.wait(timeout=10) == 0
    assert "stopping" in server.stderr()


def test_serves_requests_concurrently(server: DevServer, token: str) -> None:
    """Eight requests held by injected latency are in the app at the same
    time: the server does not take them one at a time."""
    server.admin("faults", {"latency_ms": 400})

    def fetch(_: int) -> int:
        with requests.Session() as session:
            return session.get(f"{server.api}/templates", headers=auth(token), timeout=30).status_code

    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        assert list(pool.map(fetch, range(8))) == [200] * 8
    assert server.stats()["max_in_flight"] >= 8


# -- the reference profile and the photo outage ------------------------------


def test_reference_profile_behaves_like_the_reference_backend(start_server) -> None:
    server = start_server("--profile", "reference", "--admin")
    r = requests.post(f"{server.api}/auth/login", json={"username": "inspector", "password": "inspector-pass"})
    login = envelope_data(r)
    assert set(login) == {"access_token", "refresh_token", "token_type", "expires_in"}  # no "user"
    token = login["access_token"]
    assert envelope_data(requests.get(f"{server.api}/auth/me", headers=auth(token)))["username"] == "inspector"

    facilities = envelope_data(requests.get(f"{server.api}/facilities", headers=auth(token)))
    assert facilities and all("areas" not in f for f in facilities)
    areas = envelope_data(requests.get(f"{server.api}/facilities/101/areas", headers=auth(token)))
    assert [a["id"] for a in areas] == [1001, 1002]
    templates = envelope_data(requests.get(f"{server.api}/templates", headers=auth(token)))
    assert templates and all("version" not in t for t in templates)
    assert "version" not in envelope_data(requests.get(f"{server.api}/templates/11", headers=auth(token)))

    # no idempotency: no key needed, a key and a client_id change nothing, every request is a record
    body = inspection_body()
    without_client_id = {k: v for k, v in body.items() if k != "client_id"}
    first = requests.post(f"{server.api}/inspections", json=without_client_id, headers=auth(token))
    assert first.status_code == 201, first.text
    key = new_key()
    second = post_inspection(server, token, body, key)
    third = post_inspection(server, token, body, key)
    assert second.status_code == 201 and third.status_code == 201
    assert "Idempotent-Replayed" not in third.headers
    ids = {envelope_data(r)["id"] for r in (first, second, third)}
    assert len(ids) == 3 and server.stats()["inspections"] == 3
    history = envelope_data(requests.get(f"{server.api}/inspections", headers=auth(token)))
    assert history["total"] == 3
    assert all("client_id" not in i and "template_version" not in i for i in history["inspections"])
    # the reference app's summary: no start time; completion, score, follow-up and parent link shown
    assert all("started_at" not in i for i in history["inspections"])
    assert all({"completed_at", "overall_score", "follow_up_required", "parent_inspection_id", "area_id"} <= set(i)
               for i in history["inspections"])
    issue = {"inspection_id": min(ids), "facility_id": 101, "severity": "low", "description": "Dusty vents"}
    assert requests.post(f"{server.api}/issues", json=issue, headers=auth(token)).status_code == 201
    # the shapes are still the document's: an unknown field or a bad value is refused
    r = requests.post(f"{server.api}/issues", json={**issue, "severity": "urgent"}, headers=auth(token))
    assert r.status_code == 422 and envelope_error(r).startswith("severity")

    # logout needs the access token here
    r = requests.post(f"{server.api}/auth/logout", json={"refresh_token": login["refresh_token"]})
    assert r.status_code == 401
    r = requests.post(f"{server.api}/auth/logout", json={"refresh_token": login["refresh_token"]},
                      headers=auth(token))
    assert r.status_code == 200
    r = requests.post(f"{server.api}/auth/refresh", json={"refresh_token": login["refresh_token"]})
    assert r.status_code == 401 and "revoked" in envelope_error(r)


def test_photo_outage_from_the_start_and_at_run_time(start_server) -> None:
    server = start_server("--photo-outage-seconds", "600", "--admin")
    token = server.login()["access_token"]
    r = upload(server, token, JPEG + uuid.uuid4().bytes, new_key())
    assert r.status_code == 500 and "outage" in envelope_error(r)
    # only uploads are out
    assert requests.get(f"{server.api}/templates", headers=auth(token)).status_code == 200
    assert server.stats()["faults"]["photo_outage_remaining"] > 500
    server.admin("faults", {"photo_outage_seconds": 0})
    assert upload(server, token, JPEG + uuid.uuid4().bytes, new_key()).status_code == 201
    server.admin("faults", {"photo_outage_seconds": 600})
    assert upload(server, token, JPEG + uuid.uuid4().bytes, new_key()).status_code == 500
    server.admin("reset-faults")
    assert upload(server, token, JPEG + uuid.uuid4().bytes, new_key()).status_code == 201
    records = server.admin_get("records")
    assert len(records["photos"]) == 2 and len(records["files"]) == 2


def test_expire_tokens_every(start_server) -> None:
    server = start_server("--expire-tokens-every", "0.3")
    login = server.login()
    deadline = time.monotonic() + 20
    while requests.get(f"{server.api}/auth/me", headers=auth(login["access_token"])).status_code == 200:
        assert time.monotonic() < deadline, "the access token never expired"
        time.sleep(0.1)
    r = requests.get(f"{server.api}/auth/me", headers=auth(login["access_token"]))
    assert r.status_code == 401 and "expired" in envelope_error(r)
    fresh = envelope_data(requests.post(f"{server.api}/auth/refresh", json={"refresh_token": login["refresh_token"]}))
    assert fresh["access_token"] != login["access_token"]
