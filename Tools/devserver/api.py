"""The Flask application: the server contract of Schemas/openapi.yaml."""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
import logging
import math
import random
import re
import secrets
import threading
import time
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable

import jwt
from flask import Flask, Response, g, request
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge
from werkzeug.security import check_password_hash

from contract import Contract
from storage import Store
import standard_witness
import witness
from validate import (
    UPLOAD_PATH,
    ApiError,
    compute_score,
    format_timestamp,
    invalid,
    is_number,
    record_id,
    require_object,
    timestamp,
    validate_form_data,
)

log = logging.getLogger("devserver")

API = "/api/v1"
DROP_FLAG = "devserver.drop_connection"
WRITE_ENDPOINTS = ("upload_photo", "create_inspection", "create_issue")
OUTAGE_PATHS = (API + "/photos/upload",)


@dataclasses.dataclass
class Faults:
    fault_rate: float = 0.0
    latency_ms: int = 0
    drop_after_commit_rate: float = 0.0
    refuse_refresh: bool = False
    drop_refresh_rate: float = 0.0
    fault_status: int = 500
    fault_paths: list[str] | None = None

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass
class Config:
    db_path: Path
    uploads_dir: Path
    openapi_path: Path
    access_ttl: int = 900
    refresh_ttl: int = 30 * 24 * 3600
    refresh_grace: float = 60.0
    max_upload_bytes: int = 20 * 1024 * 1024
    admin: bool = False
    verify_score: bool = False
    seed: int | None = None
    faults: Faults = dataclasses.field(default_factory=Faults)
    profile: str = "contract"
    photo_outage_seconds: float = 0.0
    # The standard witness at /witness: its name (its key's name), and a
    # development-only switch that spoils its cosignatures (tests of clients).
    witness_name: str = "devserver.jqc.invalid/witness"
    witness_tamper: bool = False


class State:
    def __init__(self, config: Config, store: Store) -> None:
        self.config = config
        self.store = store
        self.secret = store.jwt_secret()
        self.faults = dataclasses.replace(config.faults)
        self.lock = threading.Lock()
        self.rng = random.Random(config.seed)
        self.requests: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        self.connections = 0
        self.in_flight = 0
        self.max_in_flight = 0
        # Photo uploads answer 500 until this time.monotonic() value.
        self.outage_until = time.monotonic() + config.photo_outage_seconds

    def roll(self, rate: float) -> bool:
        if rate <= 0:
            return False
        if rate >= 1:
            return True
        with self.lock:
            return self.rng.random() < rate

    def count_request(self, key: str, status: str) -> None:
        with self.lock:
            self.requests[key][status] += 1

    def count_connection(self) -> None:
        with self.lock:
            self.connections += 1

    def enter(self) -> None:
        with self.lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def leave(self) -> None:
        with self.lock:
            self.in_flight -= 1


# -- helpers ---------------------------------------------------------------


def dump(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


def envelope(data: Any, status: int = 200) -> Response:
    return Response(dump({"ok": True, "data": data, "error": None}), status=status, mimetype="application/json")


def error_response(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    resp = Response(dump({"ok": False, "data": None, "error": message}), status=status, mimetype="application/json")
    for k, v in (headers or {}).items():
        resp.headers[k] = v
    if status == 401:
        resp.headers["WWW-Authenticate"] = 'Bearer realm="api"'
    return resp


def now_utc() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed in JSON")


def json_body(optional: bool = False) -> Any:
    if "body" in g:
        return g.body
    raw = request.get_data(cache=True)
    if not raw:
        if optional:
            return {}
        raise ApiError(400, "body: a JSON object is required")
    mimetype = request.mimetype or ""
    if mimetype != "application/json" and not mimetype.endswith("+json"):
        raise ApiError(400, "Content-Type must be application/json")
    try:
        return json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError) as exc:
        raise ApiError(400, f"body is not valid JSON: {exc}") from None
    except RecursionError:
        raise ApiError(400, "body is not valid JSON: nested too deeply") from None


def canonical_json(value: Any) -> bytes:
    """The fingerprint form of a JSON body: key order and spacing do not matter."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def user_json(row: Any) -> dict[str, Any]:
    return {
        "id": row["id"],
        "username": row["username"],
        "role": row["role"],
        "display_name": row["display_name"],
    }


def sniff_extension(data: bytes, filename: str | None) -> tuple[str, str]:
    if data.startswith(b"\xff\xd8\xff"):
        return "jpg", "image/jpeg"
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png", "image/png"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "gif", "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp", "image/webp"
    if data[4:8] == b"ftyp" and data[8:12] in (b"heic", b"heix", b"mif1", b"msf1", b"heif"):
        return "heic", "image/heic"
    ext = (filename or "").rsplit(".", 1)[-1].lower() if filename and "." in filename else ""
    known = {"jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "heic": "image/heic",
             "gif": "image/gif", "webp": "image/webp"}
    if ext in known:
        return ("jpg" if ext == "jpeg" else ext), known[ext]
    return "bin", "application/octet-stream"


CONTENT_TYPES = {"jpg": "image/jpeg", "png": "image/png", "gif": "image/gif", "webp": "image/webp",
                 "heic": "image/heic", "bin": "application/octet-stream"}


# -- the application -------------------------------------------------------


def create_app(config: Config, store: Store) -> Flask:
    app = Flask("devserver")
    app.config["MAX_CONTENT_LENGTH"] = config.max_upload_bytes
    # OPTIONS is not part of the contract: answer it 405 with Allow, in the envelope.
    app.config["PROVIDE_AUTOMATIC_OPTIONS"] = False
    app.json.sort_keys = False  # type: ignore[attr-defined]
    state = State(config, store)
    app.extensions["devserver"] = state
    reference = config.profile == "reference"
    contract = Contract.shared(config.openapi_path, without_extensions=reference)
    config.uploads_dir.mkdir(parents=True, exist_ok=True)

    # -- faults, latency, stats ---------------------------------------------

    def faults_apply(path: str) -> bool:
        if not (path.startswith(API + "/") or path.startswith("/uploads/")):
            return False
        prefixes = state.faults.fault_paths
        return prefixes is None or any(path.startswith(p) for p in prefixes)

    @app.before_request
    def before() -> Response | None:
        g.started = time.monotonic()
        path = request.path
        if path.startswith("/__admin"):
            if not config.admin:
                return error_response(404, "not found")
            return None
        if not faults_apply(path):
            return None
        faults = state.faults
        if faults.latency_ms > 0:
            time.sleep(faults.latency_ms / 1000.0)
        if state.outage_until > time.monotonic() and any(path.startswith(p) for p in OUTAGE_PATHS):
            return error_response(500, "photo storage unavailable (injected outage)")
        if state.roll(faults.fault_rate):
            headers = {"Retry-After": "1"} if faults.fault_status == 429 else None
            message = "too many requests (injected fault)" if faults.fault_status == 429 else "internal server error (injected fault)"
            return error_response(faults.fault_status, message, headers)
        found = contract.operation(request.method, path)
        if found is None:
            return None  # Flask answers 404 or 405
        _, operation = found
        # Authentication first (401 before any complaint about the request),
        # where the document's security requirements ask for it.
        g.user = current_user() if contract.requires_bearer(operation) else None
        if request.content_length and (request.mimetype == "application/json" or request.mimetype.endswith("+json")):
            g.body = json_body()  # 400 for JSON that is not JSON (NaN, bad UTF-8), before the schema
        # Buffer the raw body before the form is parsed: openapi-core reads the
        # raw bytes, Flask parses its form from the same buffer.
        request.get_data(cache=True)
        allowed = contract.body_properties(operation, request.mimetype)
        if request.mimetype == "multipart/form-data" and allowed is not None:
            # openapi-core reads only the parts the schema names; the schema's
            # additionalProperties: false is applied here, from its names.
            for name in list(request.form.keys()) + list(request.files.keys()):
                if name not in allowed:
                    raise invalid(name, "unknown form field" if name in request.form else
                                  "unknown file part (send the photo as \"file\")")
        contract.check(request)
        return None

    @app.after_request
    def after(resp: Response) -> Response:
        if request.path.startswith("/__admin"):
            return resp
        # An unmatched request is counted with its path, so a test can say which request was outside the API.
        rule = request.url_rule.rule if request.url_rule is not None else f"{request.path} (unmatched)"
        rule = re.sub(r"<(?:[^:>]+:)?([^>]+)>", r"{\1}", rule)
        status = "dropped" if request.environ.get(DROP_FLAG) else str(resp.status_code)
        state.count_request(f"{request.method} {rule}", status)
        return resp

    @app.errorhandler(ApiError)
    def on_api_error(exc: ApiError) -> Response:
        return error_response(exc.status, exc.message, exc.headers)

    @app.errorhandler(HTTPException)
    def on_http_error(exc: HTTPException) -> Response:
        if isinstance(exc, RequestEntityTooLarge):
            return error_response(413, f"request body too large (the limit is {config.max_upload_bytes} bytes)")
        code = exc.code or 500
        message = {404: "not found", 405: "method not allowed"}.get(code, exc.description or exc.name)
        resp = error_response(code, message)
        if code == 405 and exc.get_headers():
            for k, v in exc.get_headers():
                if k.lower() == "allow":
                    resp.headers["Allow"] = v
        return resp

    @app.errorhandler(Exception)
    def on_error(exc: Exception) -> Response:
        log.exception("unhandled error on %s %s", request.method, request.path)
        return error_response(500, "internal server error")

    # -- auth ----------------------------------------------------------------

    def issue_tokens(conn: Any, user_id: int, username: str, role: str) -> dict[str, Any]:
        now = time.time()
        payload = {
            "sub": str(user_id),
            "username": username,
            "role": role,
            "typ": "access",
            "ep": store.token_epoch(),
            "iat": int(now),
            "exp": int(math.ceil(now + config.access_ttl)),
            "jti": secrets.token_hex(8),
        }
        access = jwt.encode(payload, state.secret, algorithm="HS256")
        refresh = secrets.token_hex(32)
        conn.execute(
            "INSERT INTO refresh_tokens(token_hash, user_id, issued_at, expires_at) VALUES(?, ?, ?, ?)",
            (sha256_hex(refresh.encode()), user_id, now, now + config.refresh_ttl),
        )
        return {
            "access_token": access,
            "refresh_token": refresh,
            "token_type": "Bearer",
            "expires_in": config.access_ttl,
        }

    def current_user() -> Any:
        header = request.headers.get("Authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise ApiError(401, "authentication required: send Authorization: Bearer <access token>")
        try:
            claims = jwt.decode(
                token.strip(), state.secret, algorithms=["HS256"],
                options={"require": ["exp", "iat", "sub"]},
            )
        except jwt.ExpiredSignatureError:
            raise ApiError(401, "access token expired") from None
        except jwt.InvalidTokenError:
            raise ApiError(401, "invalid access token") from None
        if claims.get("typ") != "access":
            raise ApiError(401, "invalid access token")
        if int(claims.get("ep", -1)) < store.token_epoch():
            raise ApiError(401, "access token expired")
        with store.read() as c:
            row = c.execute("SELECT * FROM users WHERE id = ?", (int(claims["sub"]),)).fetchone()
        if row is None:
            raise ApiError(401, "invalid access token")
        return row

    def authenticated() -> Any:
        """The user the before-request hook authenticated (or authenticate now)."""
        user = g.get("user")
        return user if user is not None else current_user()

    @app.post(f"{API}/auth/login")
    def login() -> Response:
        body = json_body()
        username, password = body["username"], body["password"]
        with store.write() as c:
            row = c.execute("SELECT * FROM users WHERE username = ?", (username,)).fetchone()
            if row is None or not check_password_hash(row["password_hash"], password):
                raise ApiError(401, "invalid username or password")
            tokens = issue_tokens(c, row["id"], row["username"], row["role"])
        if reference:
            return envelope(tokens)  # tokens only: the client asks GET /auth/me who it is
        return envelope({**tokens, "user": user_json(row)})

    @app.post(f"{API}/auth/refresh")
    def refresh() -> Response:
        token = json_body()["refresh_token"]
        if state.faults.refuse_refresh:
            raise ApiError(401, "refresh refused (injected fault): log in again")
        now = time.time()
        with store.write() as c:
            row = c.execute(
                "SELECT r.*, u.username, u.role FROM refresh_tokens r JOIN users u ON u.id = r.user_id "
                "WHERE r.token_hash = ?",
                (sha256_hex(token.encode()),),
            ).fetchone()
            if row is None:
                raise ApiError(401, "unknown refresh token")
            if row["revoked_at"] is not None:
                raise ApiError(401, "refresh token revoked")
            if row["used_at"] is not None:
                # A used token presented again within the grace period (its
                # answer was lost, or the client crashed before keeping it)
                # gets the very pair its first use issued, unless that
                # session has since been logged out.
                grace = config.refresh_grace
                if grace > 0 and now - row["used_at"] <= grace and row["successor_hash"] and row["replay_body"]:
                    successor = c.execute("SELECT revoked_at FROM refresh_tokens WHERE token_hash = ?",
                                          (row["successor_hash"],)).fetchone()
                    if successor is not None and successor["revoked_at"] is not None:
                        raise ApiError(401, "refresh token revoked")
                    replay = Response(row["replay_body"], status=200, mimetype="application/json")
                    replay.headers["Idempotent-Replayed"] = "true"
                    return replay
                raise ApiError(401, "refresh token already used (tokens rotate on every refresh; "
                                    f"a reuse is answered only within {grace:g} s of the first)")
            if row["expires_at"] <= now:
                raise ApiError(401, "refresh token expired")
            tokens = issue_tokens(c, row["user_id"], row["username"], row["role"])
            body = dump({"ok": True, "data": tokens, "error": None})
            c.execute(
                "UPDATE refresh_tokens SET used_at = ?, successor_hash = ?, replay_body = ? WHERE token_hash = ?",
                (now, sha256_hex(tokens["refresh_token"].encode()), body if config.refresh_grace > 0 else None,
                 row["token_hash"]),
            )
        # Rotated and committed. Now, perhaps, lose the answer.
        if state.roll(state.faults.drop_refresh_rate):
            request.environ[DROP_FLAG] = True
        return Response(body, status=200, mimetype="application/json")

    @app.get(f"{API}/auth/me")
    def me() -> Response:
        return envelope(user_json(authenticated()))

    @app.post(f"{API}/auth/logout")
    def logout() -> Response:
        if reference:
            authenticated()  # the reference backend's logout needs the access token (401 without)
        token = json_body(optional=True).get("refresh_token")
        if token:
            with store.write() as c:
                c.execute(
                    "UPDATE refresh_tokens SET revoked_at = ? WHERE token_hash = ? AND revoked_at IS NULL",
                    (time.time(), sha256_hex(token.encode())),
                )
        return envelope(None)

    # -- reference data ------------------------------------------------------

    def area_json(row: Any) -> dict[str, Any]:
        return {"id": row["id"], "facility_id": row["facility_id"], "name": row["name"], "area_type": row["area_type"]}

    def template_json(row: Any) -> dict[str, Any]:
        if reference:  # no versions: a template is known by its content
            return {"id": row["id"], "name": row["name"], "form_schema": json.loads(row["form_schema"])}
        return {"id": row["id"], "name": row["name"], "version": row["version"],
                "form_schema": json.loads(row["form_schema"])}

    def path_id(raw: str, what: str) -> int:
        return int(raw)  # the document's path parameter schema made it an integer (else 404)

    @app.get(f"{API}/facilities")
    def facilities() -> Response:
        authenticated()
        with store.read() as c:
            rows = c.execute("SELECT * FROM facilities ORDER BY position, id").fetchall()
            areas = c.execute("SELECT * FROM areas ORDER BY position, id").fetchall()
        out = []
        for f in rows:
            out.append({
                "id": f["id"], "name": f["name"], "address": f["address"], "project_name": f["project_name"],
                "areas": [area_json(a) for a in areas if a["facility_id"] == f["id"]],
            })
            if reference:
                del out[-1]["areas"]  # areas only through GET /facilities/{id}/areas
        return envelope(out)

    @app.get(f"{API}/facilities/<facility_id>/areas")
    def facility_areas(facility_id: str) -> Response:
        authenticated()
        fid = path_id(facility_id, "facility")
        with store.read() as c:
            if c.execute("SELECT 1 FROM facilities WHERE id = ?", (fid,)).fetchone() is None:
                raise ApiError(404, f"facility {fid} not found")
            rows = c.execute("SELECT * FROM areas WHERE facility_id = ? ORDER BY position, id", (fid,)).fetchall()
        return envelope([area_json(a) for a in rows])

    @app.get(f"{API}/templates")
    def templates() -> Response:
        authenticated()
        with store.read() as c:
            rows = c.execute("SELECT * FROM templates ORDER BY position, id").fetchall()
        return envelope([template_json(t) for t in rows])

    @app.get(f"{API}/templates/<template_id>")
    def template(template_id: str) -> Response:
        authenticated()
        tid = path_id(template_id, "template")
        with store.read() as c:
            row = c.execute("SELECT * FROM templates WHERE id = ?", (tid,)).fetchone()
        if row is None:
            raise ApiError(404, f"template {tid} not found")
        return envelope(template_json(row))

    # -- idempotent writes ---------------------------------------------------

    def idempotent(user: Any, fingerprint: bytes, action: Callable[[Any], tuple[int, Any]]) -> Response:
        if reference:
            # The reference backend has no idempotency: every request that
            # passes validation is a new write (a lost answer and a retry make
            # two records, unless the client looks first).
            with store.write() as c:
                status, data = action(c)
            body = dump({"ok": True, "data": data, "error": None})
            if state.roll(state.faults.drop_after_commit_rate):
                request.environ[DROP_FLAG] = True
            return Response(body, status=status, mimetype="application/json")
        key = request.headers["Idempotency-Key"]  # required and well-formed, by the document
        digest = sha256_hex(f"{request.method} {request.path}\n".encode() + fingerprint)
        with store.write() as c:
            row = c.execute(
                "SELECT * FROM idempotency_keys WHERE user_id = ? AND key = ?", (user["id"], key)
            ).fetchone()
            if row is not None:
                if row["fingerprint"] != digest:
                    where = f"{row['method']} {row['path']}"
                    raise ApiError(
                        422,
                        f"Idempotency-Key: this key was already used for a different request ({where} with "
                        "another body); a new request needs a new key",
                    )
                resp = Response(bytes(row["body"]), status=row["status"], content_type=row["content_type"])
                resp.headers["Idempotent-Replayed"] = "true"
                return resp
            status, data = action(c)
            body = dump({"ok": True, "data": data, "error": None})
            c.execute(
                "INSERT INTO idempotency_keys(user_id, key, fingerprint, method, path, status, body, "
                "content_type, created_at) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (user["id"], key, digest, request.method, request.path, status, body,
                 "application/json", format_timestamp(now_utc())),
            )
        # Committed.  Now, perhaps, lose the response.
        if state.roll(state.faults.drop_after_commit_rate):
            request.environ[DROP_FLAG] = True
        return Response(body, status=status, mimetype="application/json")

    def photo_exists(conn: Any, path: str) -> bool:
        return conn.execute("SELECT 1 FROM photos WHERE path = ? LIMIT 1", (path,)).fetchone() is not None

    @app.post(f"{API}/photos/upload")
    def upload_photo() -> Response:
        user = authenticated()
        if request.mimetype != "multipart/form-data":
            raise ApiError(400, "Content-Type must be multipart/form-data")
        try:
            files = request.files
            form = request.form
        except RequestEntityTooLarge:
            raise
        except ValueError as exc:  # malformed multipart
            raise ApiError(400, f"malformed multipart body: {exc}") from None
        file_parts = [(name, fs, fs.read()) for name, fs in files.items(multi=True)]
        fields = sorted(form.items(multi=True))
        fingerprint = canonical_json({
            "fields": fields,
            "files": [[name, sha256_hex(data)] for name, _, data in file_parts],
        })

        def action(c: Any) -> tuple[int, Any]:
            # The document has checked the parts' names and values; what a
            # schema of a form cannot say is that each part comes once.
            if len(file_parts) != 1:
                raise invalid("file", "send exactly one file")
            values = form.getlist("entity_type")
            if len(values) != 1:
                raise invalid("entity_type", "send it once (inspection or issue)")
            entity_type = values[0]
            field_ids = form.getlist("field_id")
            if len(field_ids) > 1:
                raise invalid("field_id", "send at most one field_id")
            field_id = field_ids[0] if field_ids else None
            _, storage, data = file_parts[0]
            if not data:
                raise invalid("file", "is empty")
            digest_hex = sha256_hex(data)
            ext, content_type = sniff_extension(data, storage.filename)
            name = f"{digest_hex}.{ext}"
            target = config.uploads_dir / name
            if not target.exists():
                tmp = target.with_suffix(f".{secrets.token_hex(4)}.tmp")
                tmp.write_bytes(data)
                tmp.replace(target)
            path = f"/uploads/{name}"
            c.execute(
                "INSERT INTO photos(path, sha256, size, content_type, entity_type, field_id, user_id, created_at) "
                "VALUES(?, ?, ?, ?, ?, ?, ?, ?)",
                (path, digest_hex, len(data), content_type, entity_type, field_id, user["id"],
                 format_timestamp(now_utc())),
            )
            return 201, {"path": path}

        return idempotent(user, fingerprint, action)

    @app.get("/uploads/<name>")
    def get_upload(name: str) -> Response:
        authenticated()
        if not UPLOAD_PATH.match(f"/uploads/{name}"):
            raise ApiError(404, "not found")
        target = config.uploads_dir / name
        if not target.is_file():
            raise ApiError(404, "not found")
        ext = name.rsplit(".", 1)[-1]
        resp = Response(target.read_bytes(), status=200, content_type=CONTENT_TYPES.get(ext, "application/octet-stream"))
        resp.headers["Cache-Control"] = "private, max-age=31536000, immutable"
        return resp

    @app.post(f"{API}/inspections")
    def create_inspection() -> Response:
        user = authenticated()
        raw = json_body()

        def action(c: Any) -> tuple[int, Any]:
            # The shape is the document's (checked before the view); here
            # are the rules that need the data: records exist and fit.
            body = raw
            # The reference backend has no client_id: one sent is ignored
            # (the row gets a server-made one, never shown).
            client_id = str(uuid.uuid4()) if reference or "client_id" not in body else str(uuid.UUID(body["client_id"]))
            template_id = record_id(body["template_id"])
            tpl = c.execute("SELECT * FROM templates WHERE id = ?", (template_id,)).fetchone()
            if tpl is None:
                raise invalid("template_id", f"template {template_id} does not exist")
            facility_id = record_id(body["facility_id"])
            if c.execute("SELECT 1 FROM facilities WHERE id = ?", (facility_id,)).fetchone() is None:
                raise invalid("facility_id", f"facility {facility_id} does not exist")
            area_id = record_id(body.get("area_id"))
            if area_id is not None:
                area = c.execute("SELECT * FROM areas WHERE id = ?", (area_id,)).fetchone()
                if area is None:
                    raise invalid("area_id", f"area {area_id} does not exist")
                if area["facility_id"] != facility_id:
                    raise invalid("area_id", f"area {area_id} does not belong to facility {facility_id}")
            fields = json.loads(tpl["form_schema"])["fields"]
            form_data = validate_form_data(body["form_data"], fields, lambda p: photo_exists(c, p))
            score = body.get("overall_score")
            if config.verify_score:
                expected = compute_score(form_data, fields)
                if (expected is None) != (score is None) or (
                    expected is not None and abs(float(score) - expected) > 0.011
                ):
                    raise invalid("overall_score", f"does not match the form data (expected {expected})")
            started = timestamp(body, "started_at")
            completed = timestamp(body, "completed_at")
            if completed < started:
                raise invalid("completed_at", "must not be before started_at")
            parent_id = record_id(body.get("parent_inspection_id"))
            if parent_id is not None:
                parent = c.execute("SELECT * FROM inspections WHERE id = ?", (parent_id,)).fetchone()
                if parent is None:
                    raise invalid("parent_inspection_id", f"inspection {parent_id} does not exist on the server")
                if parent["template_id"] != template_id or parent["facility_id"] != facility_id:
                    raise invalid(
                        "parent_inspection_id",
                        f"inspection {parent_id} has a different template or facility than this re-inspection",
                    )
            follow_up = body.get("follow_up_required", False)

            existing = c.execute("SELECT id, user_id FROM inspections WHERE client_id = ?", (client_id,)).fetchone()
            if existing is not None:
                if existing["user_id"] != user["id"]:
                    raise ApiError(409, f"client_id: {client_id} is already used by another user's inspection")
                return 200, {"id": existing["id"]}
            cur = c.execute(
                "INSERT INTO inspections(client_id, user_id, template_id, template_version, facility_id, area_id, "
                "form_data, overall_score, started_at, completed_at, completed_at_epoch, parent_inspection_id, "
                "follow_up_required, created_at) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (client_id, user["id"], template_id, tpl["version"], facility_id, area_id,
                 json.dumps(form_data), None if score is None else float(score),
                 format_timestamp(started), format_timestamp(completed), completed.timestamp(),
                 parent_id, 1 if follow_up else 0, format_timestamp(now_utc())),
            )
            if parent_id is not None:
                c.execute("UPDATE inspections SET follow_up_required = 0 WHERE id = ?", (parent_id,))
            return 201, {"id": cur.lastrowid}

        return idempotent(user, canonical_json(raw), action)

    @app.post(f"{API}/issues")
    def create_issue() -> Response:
        user = authenticated()
        raw = json_body()

        def action(c: Any) -> tuple[int, Any]:
            body = raw  # shaped by the document
            # The reference backend has no client_id: one sent is ignored
            # (the row gets a server-made one, never shown).
            client_id = str(uuid.uuid4()) if reference or "client_id" not in body else str(uuid.UUID(body["client_id"]))
            inspection_id = record_id(body["inspection_id"])
            insp = c.execute("SELECT * FROM inspections WHERE id = ?", (inspection_id,)).fetchone()
            if insp is None:
                raise invalid(
                    "inspection_id", f"inspection {inspection_id} does not exist on the server (submit it first)"
                )
            facility_id = record_id(body["facility_id"])
            if c.execute("SELECT 1 FROM facilities WHERE id = ?", (facility_id,)).fetchone() is None:
                raise invalid("facility_id", f"facility {facility_id} does not exist")
            if facility_id != insp["facility_id"]:
                raise invalid(
                    "facility_id", f"must be the inspection's facility ({insp['facility_id']}), not {facility_id}"
                )
            severity = body["severity"]
            description = body["description"]
            if not description.strip():
                # Not in the schema: a pattern there makes generated bodies
                # (schemathesis) crawl for a 10000-character limit.
                raise invalid("description", "must contain something other than white space")
            photo_path = body.get("photo_path")
            if photo_path is not None:
                if photo_path == "":
                    photo_path = None
                elif not (UPLOAD_PATH.match(photo_path) and photo_exists(c, photo_path)):
                    raise invalid("photo_path", f"{photo_path!r} is not a path returned by /photos/upload")
            existing = c.execute("SELECT id, user_id FROM issues WHERE client_id = ?", (client_id,)).fetchone()
            if existing is not None:
                if existing["user_id"] != user["id"]:
                    raise ApiError(409, f"client_id: {client_id} is already used by another user's issue")
                return 200, {"id": existing["id"]}
            cur = c.execute(
                "INSERT INTO issues(client_id, user_id, inspection_id, facility_id, severity, description, "
                "photo_path, created_at) VALUES(?, ?, ?, ?, ?, ?, ?, ?)",
                (client_id, user["id"], inspection_id, facility_id, severity, description, photo_path,
                 format_timestamp(now_utc())),
            )
            return 201, {"id": cur.lastrowid}

        return idempotent(user, canonical_json(raw), action)

    # -- history -------------------------------------------------------------

    @app.get(f"{API}/inspections")
    def list_inspections() -> Response:
        authenticated()
        # status, limit and offset are checked against the document.
        limit = int(request.args.get("limit", 30))
        offset = int(request.args.get("offset", 0))
        with store.read() as c:
            total = c.execute("SELECT COUNT(*) FROM inspections").fetchone()[0]
            rows = c.execute(
                "SELECT i.*, t.name AS template_name, f.name AS facility_name, a.name AS area_name, "
                "u.display_name AS inspector_name FROM inspections i "
                "JOIN templates t ON t.id = i.template_id JOIN facilities f ON f.id = i.facility_id "
                "LEFT JOIN areas a ON a.id = i.area_id JOIN users u ON u.id = i.user_id "
                "ORDER BY i.completed_at_epoch DESC, i.id DESC LIMIT ? OFFSET ?",
                (limit, offset),
            ).fetchall()
        items = [
            {
                "id": r["id"],
                "client_id": r["client_id"],
                "template_id": r["template_id"],
                "template_name": r["template_name"],
                "template_version": r["template_version"],
                "facility_id": r["facility_id"],
                "facility_name": r["facility_name"],
                "area_id": r["area_id"],
                "area_name": r["area_name"],
                "inspector_id": r["user_id"],
                "inspector_name": r["inspector_name"],
                "status": "completed",
                "overall_score": r["overall_score"],
                "started_at": r["started_at"],
                "completed_at": r["completed_at"],
                "created_at": r["created_at"],
                "parent_inspection_id": r["parent_inspection_id"],
                "follow_up_required": bool(r["follow_up_required"]),
                "form_data": json.loads(r["form_data"]),
            }
            for r in rows
        ]
        if reference:
            # Its summary: the follow-up badge, the parent link, the score,
            # the template, facility and area, when it was completed; no
            # client_id, template version or start time.
            for item in items:
                del item["client_id"]
                del item["template_version"]
                del item["started_at"]
        return envelope({"inspections": items, "total": total})

    # -- test-only admin -----------------------------------------------------

    FAULT_KEYS = ("fault_rate", "latency_ms", "drop_after_commit_rate", "expire_tokens_now",
                  "refuse_refresh", "fault_status", "fault_paths", "drop_refresh_rate", "photo_outage_seconds")

    @app.post("/__admin/faults")
    def admin_faults() -> Response:
        body = require_object(json_body(), FAULT_KEYS, ())
        new = dataclasses.replace(state.faults)
        for name in ("fault_rate", "drop_after_commit_rate", "drop_refresh_rate"):
            if name in body:
                value = body[name]
                if not is_number(value) or not 0 <= value <= 1:
                    raise invalid(name, "must be a number from 0 to 1")
                setattr(new, name, float(value))
        if "latency_ms" in body:
            value = body["latency_ms"]
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 60000:
                raise invalid("latency_ms", "must be an integer from 0 to 60000")
            new.latency_ms = value
        if "refuse_refresh" in body:
            if not isinstance(body["refuse_refresh"], bool):
                raise invalid("refuse_refresh", "must be true or false")
            new.refuse_refresh = body["refuse_refresh"]
        if "fault_status" in body:
            if body["fault_status"] not in (500, 429):
                raise invalid("fault_status", "must be 500 or 429")
            new.fault_status = body["fault_status"]
        if "fault_paths" in body:
            paths = body["fault_paths"]
            if paths is not None and (not isinstance(paths, list) or not all(isinstance(p, str) and p.startswith("/") for p in paths)):
                raise invalid("fault_paths", "must be null or an array of path prefixes starting with /")
            new.fault_paths = paths
        if "photo_outage_seconds" in body:
            value = body["photo_outage_seconds"]
            if not is_number(value) or not 0 <= value <= 86400:
                raise invalid("photo_outage_seconds", "must be a number of seconds from 0 to 86400 (0 ends an outage)")
            state.outage_until = time.monotonic() + float(value)
        expire = body.get("expire_tokens_now", False)
        if not isinstance(expire, bool):
            raise invalid("expire_tokens_now", "must be true or false")
        state.faults = new
        if expire:
            store.bump_token_epoch()
        log.info("faults now %s%s", new.as_dict(), " (access tokens expired)" if expire else "")
        return envelope({**new.as_dict(), "photo_outage_remaining": outage_remaining(),
                         "token_epoch": store.token_epoch()})

    def outage_remaining() -> float:
        return round(max(0.0, state.outage_until - time.monotonic()), 3)

    @app.get("/__admin/records")
    def admin_records() -> Response:
        """Every inspection, issue and upload record as stored, for tests that
        check what reached the server (exactly once, photos attached)."""
        with store.read() as c:
            inspections = [
                {"id": r["id"], "client_id": r["client_id"], "user_id": r["user_id"],
                 "template_id": r["template_id"], "facility_id": r["facility_id"], "area_id": r["area_id"],
                 "form_data": json.loads(r["form_data"]), "overall_score": r["overall_score"],
                 "started_at": r["started_at"], "completed_at": r["completed_at"],
                 "parent_inspection_id": r["parent_inspection_id"]}
                for r in c.execute("SELECT * FROM inspections ORDER BY id")
            ]
            issues = [
                {"id": r["id"], "client_id": r["client_id"], "inspection_id": r["inspection_id"],
                 "facility_id": r["facility_id"], "severity": r["severity"], "description": r["description"],
                 "photo_path": r["photo_path"]}
                for r in c.execute("SELECT * FROM issues ORDER BY id")
            ]
            photos = [
                {"id": r["id"], "path": r["path"], "sha256": r["sha256"], "size": r["size"],
                 "entity_type": r["entity_type"], "field_id": r["field_id"]}
                for r in c.execute("SELECT * FROM photos ORDER BY id")
            ]
        files = sorted(p.name for p in config.uploads_dir.iterdir() if not p.name.endswith(".tmp"))
        return envelope({"inspections": inspections, "issues": issues, "photos": photos, "files": files})

    @app.post("/__admin/reset-faults")
    def admin_reset_faults() -> Response:
        state.faults = Faults()
        state.outage_until = 0.0
        log.info("faults reset")
        return envelope({**state.faults.as_dict(), "photo_outage_remaining": 0.0,
                         "token_epoch": store.token_epoch()})

    @app.get("/__admin/stats")
    def admin_stats() -> Response:
        with state.lock:
            requests = {k: dict(v) for k, v in state.requests.items()}
            connections = state.connections
            max_in_flight = state.max_in_flight
            in_flight = state.in_flight - 1  # not counting this request
        return envelope({
            **store.counts(),
            "requests": requests,
            "connections": connections,
            "max_in_flight": max_in_flight,
            "in_flight": in_flight,
            "faults": {**state.faults.as_dict(), "photo_outage_remaining": outage_remaining()},
            "profile": config.profile,
            "token_epoch": store.token_epoch(),
        })

    # The witness of device logs is an extension: the reference profile has none (404).
    if not reference:
        witness.register(app, API, store, envelope, authenticated, lambda: format_timestamp(now_utc()))
        # The standard C2SP witness (tlog-witness), beside the legacy one above.
        standard_witness.register(app, config.db_path.parent / (config.db_path.name + ".witness"), authenticated,
                                  name=config.witness_name, tamper=config.witness_tamper)

    return app
