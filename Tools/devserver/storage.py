"""SQLite storage for the development server.

One connection, guarded by one re-entrant lock: this is a development server,
so every request simply takes its turn.  Writes run inside
``BEGIN IMMEDIATE`` transactions, so a write and the idempotency record that
remembers its response are committed together or not at all.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import sqlite3
import threading
from pathlib import Path
from typing import Any, Iterator

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS users (
    id            INTEGER PRIMARY KEY,
    username      TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    role          TEXT NOT NULL,
    display_name  TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS facilities (
    id           INTEGER PRIMARY KEY,
    name         TEXT NOT NULL,
    address      TEXT NOT NULL,
    project_name TEXT NOT NULL,
    position     INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS areas (
    id          INTEGER PRIMARY KEY,
    facility_id INTEGER NOT NULL REFERENCES facilities(id),
    name        TEXT NOT NULL,
    area_type   TEXT NOT NULL,
    position    INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS templates (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL,
    version     INTEGER NOT NULL,
    form_schema TEXT NOT NULL,
    position    INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS refresh_tokens (
    token_hash TEXT PRIMARY KEY,
    user_id    INTEGER NOT NULL REFERENCES users(id),
    issued_at  REAL NOT NULL,
    expires_at REAL NOT NULL,
    used_at    REAL,
    revoked_at REAL,
    successor_hash TEXT,  -- the refresh token its use issued
    replay_body    BLOB   -- that answer, replayed within the grace period
);
CREATE TABLE IF NOT EXISTS photos (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    path         TEXT NOT NULL,
    sha256       TEXT NOT NULL,
    size         INTEGER NOT NULL,
    content_type TEXT NOT NULL,
    entity_type  TEXT NOT NULL,
    field_id     TEXT,
    user_id      INTEGER NOT NULL,
    created_at   TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS photos_path ON photos(path);
CREATE TABLE IF NOT EXISTS inspections (
    id                   INTEGER PRIMARY KEY AUTOINCREMENT,
    client_id            TEXT NOT NULL UNIQUE,
    user_id              INTEGER NOT NULL REFERENCES users(id),
    template_id          INTEGER NOT NULL,
    template_version     INTEGER NOT NULL,
    facility_id          INTEGER NOT NULL,
    area_id              INTEGER,
    form_data            TEXT NOT NULL,
    overall_score        REAL,
    started_at           TEXT NOT NULL,
    completed_at         TEXT NOT NULL,
    completed_at_epoch   REAL NOT NULL,
    parent_inspection_id INTEGER,
    follow_up_required   INTEGER NOT NULL,
    created_at           TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS issues (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    client_id     TEXT NOT NULL UNIQUE,
    user_id       INTEGER NOT NULL REFERENCES users(id),
    inspection_id INTEGER NOT NULL REFERENCES inspections(id),
    facility_id   INTEGER NOT NULL,
    severity      TEXT NOT NULL,
    description   TEXT NOT NULL,
    photo_path    TEXT,
    created_at    TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS idempotency_keys (
    user_id      INTEGER NOT NULL,
    key          TEXT NOT NULL,
    fingerprint  TEXT NOT NULL,
    method       TEXT NOT NULL,
    path         TEXT NOT NULL,
    status       INTEGER NOT NULL,
    body         BLOB NOT NULL,
    content_type TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    PRIMARY KEY (user_id, key)
);
"""


class Store:
    def __init__(self, db_path: Path) -> None:
        self.db_path = Path(db_path)
        self.lock = threading.RLock()
        self.conn = sqlite3.connect(
            str(self.db_path), check_same_thread=False, isolation_level=None
        )
        self.conn.row_factory = sqlite3.Row
        with self.lock:
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA foreign_keys=ON")
            self.conn.execute("PRAGMA busy_timeout=5000")
            self.conn.executescript(SCHEMA)
            # A database made before the grace period lacks two columns.
            columns = {r["name"] for r in self.conn.execute("PRAGMA table_info(refresh_tokens)")}
            for column, kind in (("successor_hash", "TEXT"), ("replay_body", "BLOB")):
                if column not in columns:
                    self.conn.execute(f"ALTER TABLE refresh_tokens ADD COLUMN {column} {kind}")

    def close(self) -> None:
        with self.lock:
            self.conn.close()

    # -- transactions -------------------------------------------------------

    @contextlib.contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction: committed on success, rolled back on any error."""
        with self.lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            else:
                self.conn.execute("COMMIT")

    @contextlib.contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        with self.lock:
            yield self.conn

    # -- meta ---------------------------------------------------------------

    def meta_get(self, key: str) -> str | None:
        with self.read() as c:
            row = c.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
            return None if row is None else row["value"]

    def meta_set(self, key: str, value: str) -> None:
        with self.write() as c:
            c.execute(
                "INSERT INTO meta(key, value) VALUES(?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    def jwt_secret(self) -> str:
        """The HS256 signing secret, created once and kept in the database so
        that tokens stay valid across a restart on the same database."""
        with self.write() as c:
            row = c.execute("SELECT value FROM meta WHERE key = 'jwt_secret'").fetchone()
            if row is not None:
                return row["value"]
            secret = secrets.token_hex(32)
            c.execute("INSERT INTO meta(key, value) VALUES('jwt_secret', ?)", (secret,))
            return secret

    def token_epoch(self) -> int:
        value = self.meta_get("token_epoch")
        return int(value) if value is not None else 0

    def bump_token_epoch(self) -> int:
        with self.write() as c:
            row = c.execute("SELECT value FROM meta WHERE key = 'token_epoch'").fetchone()
            epoch = (int(row["value"]) if row else 0) + 1
            c.execute(
                "INSERT INTO meta(key, value) VALUES('token_epoch', ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (str(epoch),),
            )
            return epoch

    # -- seeding ------------------------------------------------------------

    def seed_reference(self, facilities: list[dict[str, Any]], templates: list[dict[str, Any]]) -> None:
        with self.write() as c:
            for pos, f in enumerate(facilities):
                c.execute(
                    "INSERT INTO facilities(id, name, address, project_name, position) "
                    "VALUES(?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET name = excluded.name, "
                    "address = excluded.address, project_name = excluded.project_name, "
                    "position = excluded.position",
                    (f["id"], f["name"], f["address"], f["project_name"], pos),
                )
                for apos, a in enumerate(f["areas"]):
                    c.execute(
                        "INSERT INTO areas(id, facility_id, name, area_type, position) "
                        "VALUES(?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET "
                        "facility_id = excluded.facility_id, name = excluded.name, "
                        "area_type = excluded.area_type, position = excluded.position",
                        (a["id"], a["facility_id"], a["name"], a["area_type"], apos),
                    )
            for pos, t in enumerate(templates):
                c.execute(
                    "INSERT INTO templates(id, name, version, form_schema, position) "
                    "VALUES(?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET name = excluded.name, "
                    "version = excluded.version, form_schema = excluded.form_schema, "
                    "position = excluded.position",
                    (t["id"], t["name"], t["version"], json.dumps(t["form_schema"]), pos),
                )

    def seed_users(self, users: list[dict[str, str]]) -> None:
        with self.write() as c:
            for u in users:
                c.execute(
                    "INSERT INTO users(username, password_hash, role, display_name) "
                    "VALUES(?, ?, ?, ?) ON CONFLICT(username) DO UPDATE SET "
                    "password_hash = excluded.password_hash, role = excluded.role, "
                    "display_name = excluded.display_name",
                    (u["username"], u["password_hash"], u["role"], u["display_name"]),
                )

    # -- stats --------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        with self.read() as c:
            def one(sql: str) -> int:
                return int(c.execute(sql).fetchone()[0])

            return {
                "inspections": one("SELECT COUNT(*) FROM inspections"),
                "issues": one("SELECT COUNT(*) FROM issues"),
                "photos": one("SELECT COUNT(*) FROM photos"),
                "photo_files": one("SELECT COUNT(DISTINCT path) FROM photos"),
                "idempotency_keys": one("SELECT COUNT(*) FROM idempotency_keys"),
                "users": one("SELECT COUNT(*) FROM users"),
                "active_refresh_tokens": one(
                    "SELECT COUNT(*) FROM refresh_tokens WHERE used_at IS NULL AND revoked_at IS NULL"
                ),
            }
