"""Contract test: the running development server against Schemas/openapi.yaml.

Schemathesis generates requests from the document for every operation under
/api/v1 and checks each response: status code documented, Content-Type
documented, documented headers present and well-formed, body valid against the
response schema (the envelope included), no 5xx, and authentication enforced
where the document requires it.  The number of examples is bounded so the
module runs in a few seconds.
"""

from __future__ import annotations

import copy
import json
import re
import sys
import uuid
from typing import Any, Iterator

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import FailureGroup
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    ignored_auth,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from devserver_harness import OPENAPI, DevServer

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    ignored_auth,
]


@pytest.fixture(scope="module")
def contract_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    server = DevServer(tmp_path_factory.mktemp("contract"), ["--seed", "1", "--admin", "--max-upload-bytes", "65536"])
    yield server
    server.stop()


@pytest.fixture(scope="module")
def access_token(contract_server: DevServer) -> str:
    return contract_server.login()["access_token"]


def _load_schema(server: DevServer, mode: Any, phases: list[str]) -> Any:
    schema = schemathesis.openapi.from_path(OPENAPI)
    schema.config.update(base_url=server.api)
    schema.config.generation.update(deterministic=True, modes=[mode])
    schema.config.phases.update(phases=phases)
    # /uploads/{filename} lives outside /api/v1 and needs a file uploaded
    # first; test_server.py covers it.
    return schema.exclude(path="/uploads/{filename}")


@pytest.fixture
def api_schema(contract_server: DevServer) -> Any:
    """Valid requests: the document's examples, boundary values, then random ones."""
    return _load_schema(contract_server, schemathesis.GenerationMode.POSITIVE, ["examples", "coverage", "fuzzing"])


@pytest.fixture
def api_schema_negative(contract_server: DevServer) -> Any:
    """Invalid requests (wrong types, missing fields, bad headers), random only:
    the coverage phase in negative mode is unbounded by max_examples."""
    return _load_schema(contract_server, schemathesis.GenerationMode.NEGATIVE, ["fuzzing"])


SETTINGS = settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
schema = schemathesis.pytest.from_fixture("api_schema")
negative_schema = schemathesis.pytest.from_fixture("api_schema_negative")


def _check_envelope(response: Any) -> None:
    # Beyond the document: every answer (except to HEAD) is the envelope.
    if response.request.method == "HEAD":
        return
    body = response.json()
    assert set(body) == {"ok", "data", "error"}
    assert body["ok"] is (200 <= response.status_code < 300)


@schema.parametrize()
@SETTINGS
def test_server_conforms_to_openapi(case: Any, access_token: str) -> None:
    response = case.call_and_validate(headers={"Authorization": f"Bearer {access_token}"}, checks=CHECKS,
                                      timeout=10)
    _check_envelope(response)


# RFC 9110's grammar for a header field: a token for the name; visible
# characters, obs-text, spaces and tabs for the value.
HTTP_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
HTTP_FIELD_VALUE = re.compile(r"^[\t \x21-\x7e\x80-\xff]*$")


def malformed_headers(case: Any) -> list[str]:
    """The generated headers that are not HTTP at all (a control character in
    a value, a separator in a name)."""
    bad = []
    for name, value in (case.headers or {}).items():
        raw = str(value).encode("utf-8", "surrogatepass").decode("latin-1")
        if not HTTP_TOKEN.match(str(name)) or not HTTP_FIELD_VALUE.match(raw):
            bad.append(str(name))
    return bad


@negative_schema.parametrize()
@SETTINGS
def test_server_refuses_invalid_requests_as_documented(case: Any, access_token: str) -> None:
    response = case.call(headers={"Authorization": f"Bearer {access_token}"}, timeout=10)
    content_type = {k.lower(): v for k, v in response.headers.items()}.get("content-type", [""])
    content_type = str(content_type[0] if isinstance(content_type, list) else content_type)
    if response.status_code == 400 and content_type.startswith("text/plain"):
        # Not a request of the API but a malformed HTTP message: the HTTP
        # server (waitress) refuses it before the app, as the document's
        # conventions say, with a plain-text 400. Only such a message may.
        assert malformed_headers(case), response.text
        return
    case.validate_response(response, checks=CHECKS)
    _check_envelope(response)
    assert response.status_code < 500


def test_document_lists_every_contract_operation() -> None:
    raw = schemathesis.openapi.from_path(OPENAPI).raw_schema
    operations = {(method.upper(), path) for path, item in raw["paths"].items() for method in item
                  if method in ("get", "post", "put", "patch", "delete")}
    assert operations >= {
        ("POST", "/auth/login"), ("POST", "/auth/refresh"), ("GET", "/auth/me"), ("POST", "/auth/logout"),
        ("GET", "/facilities"), ("GET", "/facilities/{id}/areas"), ("GET", "/templates"),
        ("GET", "/templates/{id}"), ("POST", "/photos/upload"), ("POST", "/inspections"),
        ("POST", "/issues"), ("GET", "/inspections"),
    }
    assert not any(path.startswith("/__admin") for _, path in operations)


def _operation(path: str, method: str) -> Any:
    loaded = schemathesis.openapi.from_path(OPENAPI)
    return loaded[path][method]


@pytest.mark.parametrize(
    "path,mutate",
    [
        ("/facilities", lambda body: body["data"][0].pop("address")),
        ("/facilities", lambda body: body["data"][0].update(id="101")),
        ("/facilities", lambda body: body.update(error="")),
        ("/templates", lambda body: body["data"][0]["form_schema"]["fields"][0].update(colspan=12)),
        ("/templates", lambda body: body["data"][1].update(id="22")),
        ("/auth/me", lambda body: body["data"].update(role="superuser")),
    ],
    ids=["missing-key", "string-id", "error-not-null", "unknown-field-key", "template-id-string", "bad-role"],
)
def test_the_check_catches_a_deviation(contract_server: DevServer, access_token: str, path: str, mutate: Any) -> None:
    """The checks above are not vacuous: a real response passes, the same
    response with one deviation from the document fails."""
    operation = _operation(path, "GET")
    case = operation.Case()  # none of these paths has parameters
    response = requests.get(f"{contract_server.api}{path}", headers={"Authorization": f"Bearer {access_token}"},
                            timeout=10)
    assert response.status_code == 200
    case.validate_response(response, checks=[response_schema_conformance])  # passes as served

    body = copy.deepcopy(response.json())
    mutate(body)
    broken = copy.copy(response)  # same status, headers and request; another body
    broken._content = json.dumps(body).encode()
    with pytest.raises(FailureGroup) as failed:
        case.validate_response(broken, checks=[response_schema_conformance])
    assert "JsonSchemaError" in [type(e).__name__ for e in failed.value.exceptions]


def test_undocumented_status_fails_the_check(contract_server: DevServer, access_token: str) -> None:
    operation = _operation("/templates", "GET")
    case = operation.Case()
    response = requests.get(f"{contract_server.api}/templates", headers={"Authorization": f"Bearer {access_token}"},
                            timeout=10)
    response.status_code = 404  # GET /templates documents no 404
    with pytest.raises(FailureGroup) as failed:
        case.validate_response(response, checks=[status_code_conformance])
    assert [type(e).__name__ for e in failed.value.exceptions] == ["UndefinedStatusCode"]


def test_generated_requests_reached_every_operation(contract_server: DevServer) -> None:
    """Runs after the generated test (file order): each operation really got requests."""
    requests_seen = contract_server.stats()["requests"]
    for label in ("POST /api/v1/auth/login", "POST /api/v1/auth/refresh", "GET /api/v1/auth/me",
                  "POST /api/v1/auth/logout", "GET /api/v1/facilities", "GET /api/v1/facilities/{facility_id}/areas",
                  "GET /api/v1/templates", "GET /api/v1/templates/{template_id}", "POST /api/v1/photos/upload",
                  "POST /api/v1/inspections", "POST /api/v1/issues", "GET /api/v1/inspections"):
        assert sum(requests_seen.get(label, {}).values()) >= 3, (label, requests_seen.get(label))
    # and the examples in the document reached the success paths of the reference data
    assert requests_seen["GET /api/v1/templates/{template_id}"].get("200", 0) >= 1
    assert requests_seen["GET /api/v1/facilities/{facility_id}/areas"].get("200", 0) >= 1


CONFORMANCE = [status_code_conformance, content_type_conformance, response_headers_conformance,
               response_schema_conformance]


def conforms(path: str, method: str, response: requests.Response, status: int) -> Any:
    assert response.status_code == status, response.text
    path_parameters = None
    if "{id}" in path:
        path_parameters = {"id": int(response.url.rstrip("/").split("/")[-2 if path.endswith("/areas") else -1])}
    case = _operation(path, method).Case(path_parameters=path_parameters)
    case.validate_response(response, checks=CONFORMANCE)
    return response.json()["data"]


def test_every_documented_status_conforms(contract_server: DevServer) -> None:
    """Walk the success paths and each documented refusal, validating every
    response against its operation in the document."""
    api = contract_server.api
    contract_server.admin("reset-faults")
    login = conforms("/auth/login", "POST", requests.post(
        f"{api}/auth/login", json={"username": "inspector", "password": "inspector-pass"}), 200)
    conforms("/auth/login", "POST", requests.post(f"{api}/auth/login", json={"username": "x", "password": "y"}), 401)
    conforms("/auth/login", "POST", requests.post(f"{api}/auth/login", json={"username": "x"}), 422)
    conforms("/auth/login", "POST", requests.post(f"{api}/auth/login", data=b"{",
                                                  headers={"Content-Type": "application/json"}), 400)
    pair = conforms("/auth/refresh", "POST", requests.post(
        f"{api}/auth/refresh", json={"refresh_token": login["refresh_token"]}), 200)
    replayed = conforms("/auth/refresh", "POST", requests.post(
        f"{api}/auth/refresh", json={"refresh_token": login["refresh_token"]}), 200)
    assert replayed == pair  # a reuse within the grace period: the same pair
    conforms("/auth/refresh", "POST", requests.post(f"{api}/auth/refresh", json={"refresh_token": "0" * 64}), 401)
    h = {"Authorization": f"Bearer {pair['access_token']}"}
    conforms("/auth/me", "GET", requests.get(f"{api}/auth/me", headers=h), 200)
    conforms("/auth/me", "GET", requests.get(f"{api}/auth/me"), 401)
    conforms("/facilities", "GET", requests.get(f"{api}/facilities", headers=h), 200)
    conforms("/facilities/{id}/areas", "GET", requests.get(f"{api}/facilities/102/areas", headers=h), 200)
    conforms("/facilities/{id}/areas", "GET", requests.get(f"{api}/facilities/7/areas", headers=h), 404)
    conforms("/templates", "GET", requests.get(f"{api}/templates", headers=h), 200)
    conforms("/templates/{id}", "GET", requests.get(f"{api}/templates/22", headers=h), 200)
    conforms("/templates/{id}", "GET", requests.get(f"{api}/templates/7", headers=h), 404)

    def key() -> dict[str, str]:
        return {**h, "Idempotency-Key": str(uuid.uuid4())}

    photo = b"\xff\xd8\xff\xe0" + uuid.uuid4().bytes
    up = conforms("/photos/upload", "POST", requests.post(
        f"{api}/photos/upload", headers=key(), data={"entity_type": "inspection", "field_id": "10"},
        files={"file": ("p.jpg", photo, "image/jpeg")}), 201)
    conforms("/photos/upload", "POST", requests.post(
        f"{api}/photos/upload", headers=key(), data={"entity_type": "x"}, files={"file": ("p.jpg", photo)}), 422)
    conforms("/photos/upload", "POST", requests.post(
        f"{api}/photos/upload", headers=h, data={"entity_type": "issue"}, files={"file": ("p.jpg", photo)}), 400)
    conforms("/photos/upload", "POST", requests.post(
        f"{api}/photos/upload", headers=key(), data={"entity_type": "issue"},
        files={"file": ("p.jpg", b"\0" * 70000)}), 413)

    body = {"client_id": str(uuid.uuid4()), "template_id": 11, "facility_id": "101", "area_id": None,
            "form_data": {"2": 3, "10": up["path"]}, "overall_score": 60, "started_at": "2024-05-01T09:00:00Z",
            "completed_at": "2024-05-01T09:10:00.25Z", "parent_inspection_id": None, "follow_up_required": True}
    k = key()
    created = conforms("/inspections", "POST", requests.post(f"{api}/inspections", headers=k, json=body), 201)
    replay = requests.post(f"{api}/inspections", headers=k, json=body)
    assert conforms("/inspections", "POST", replay, 201) == created
    assert replay.headers["Idempotent-Replayed"] == "true"
    conforms("/inspections", "POST", requests.post(f"{api}/inspections", headers=key(), json=body), 200)
    conforms("/inspections", "POST", requests.post(f"{api}/inspections", headers=k, json={**body, "area_id": 1001}), 422)
    conforms("/inspections", "POST", requests.post(f"{api}/inspections", headers=h, json=body), 400)
    auditor = contract_server.login(("auditor", "auditor-pass"))["access_token"]
    conforms("/inspections", "POST", requests.post(
        f"{api}/inspections", headers={"Authorization": f"Bearer {auditor}", "Idempotency-Key": "a1"}, json=body), 409)

    issue = {"client_id": str(uuid.uuid4()), "inspection_id": created["id"], "facility_id": 101,
             "severity": "critical", "description": "Broken lock", "photo_path": ""}
    conforms("/issues", "POST", requests.post(f"{api}/issues", headers=key(), json=issue), 201)
    conforms("/issues", "POST", requests.post(f"{api}/issues", headers=key(), json=issue), 200)
    conforms("/issues", "POST", requests.post(f"{api}/issues", headers=key(),
                                              json={**issue, "client_id": str(uuid.uuid4()), "inspection_id": 9999}), 422)

    history = conforms("/inspections", "GET", requests.get(
        f"{api}/inspections", headers=h, params={"status": "completed", "limit": 30, "offset": 0}), 200)
    assert history["total"] >= 1 and history["inspections"]
    conforms("/inspections", "GET", requests.get(f"{api}/inspections", headers=h, params={"limit": 0}), 422)

    contract_server.admin("faults", {"fault_rate": 1.0, "fault_paths": ["/api/v1/templates"]})
    conforms("/templates", "GET", requests.get(f"{api}/templates", headers=h), 500)
    contract_server.admin("faults", {"fault_status": 429})
    conforms("/templates", "GET", requests.get(f"{api}/templates", headers=h), 429)
    contract_server.admin("reset-faults")

    conforms("/auth/logout", "POST", requests.post(f"{api}/auth/logout", json={"refresh_token": pair["refresh_token"]}), 200)
    conforms("/auth/logout", "POST", requests.post(f"{api}/auth/logout", json={"refresh_token": 5}), 422)


def test_reference_profile_conforms_to_the_document_without_its_extensions(start_server) -> None:
    """The reference profile's answers fit the document once its extensions
    are optional, and would not fit the whole document (so the extensions
    marked there are the ones the profile leaves out)."""
    sys.path.insert(0, str(OPENAPI.parent.parent / "Tools" / "devserver"))
    from contract import Contract

    stripped = schemathesis.openapi.from_dict(Contract(OPENAPI, without_extensions=True).raw)
    whole = schemathesis.openapi.from_path(OPENAPI)
    server = start_server("--profile", "reference")
    api = server.api
    login = requests.post(f"{api}/auth/login", json={"username": "inspector", "password": "inspector-pass"})
    h = {"Authorization": f"Bearer {login.json()['data']['access_token']}"}
    calls = [
        ("/auth/login", "POST", login),
        ("/facilities", "GET", requests.get(f"{api}/facilities", headers=h)),
        ("/templates", "GET", requests.get(f"{api}/templates", headers=h)),
    ]
    body = {"template_id": 11, "facility_id": 101, "form_data": {"2": 3}, "started_at": "2024-05-01T09:00:00Z",
            "completed_at": "2024-05-01T09:10:00Z"}
    created = requests.post(f"{api}/inspections", headers=h, json=body)
    assert created.status_code == 201, created.text
    calls.append(("/inspections", "POST", created))
    calls.append(("/inspections", "GET", requests.get(f"{api}/inspections", headers=h)))
    for path, method, response in calls:
        assert response.status_code in (200, 201), response.text
        stripped[path][method].Case().validate_response(response, checks=CONFORMANCE)
    for path, method, response in calls[:3] + calls[4:]:
        with pytest.raises(FailureGroup):
            whole[path][method].Case().validate_response(response, checks=[response_schema_conformance])
