"""The meta-schema check of a schema file, made once for each content.

`validate-json` and `validate-events` check every schema under `Schemas/`
against the JSON Schema meta-schema before they use it: 0.65 of their 0.8 s
of CPU (measured), paid again by each of the dozens of calls the tests make.
A schema that passed is remembered by the SHA-256 of its bytes and of the
jsonschema version that checked it, as an empty file in
`$XDG_CACHE_HOME/jqc/checked-schemas/` (else `~/.cache/...`), so the same
bytes are not checked twice; an edited schema has other bytes and is checked
again. Without a usable cache directory every schema is checked every time.
"""
from __future__ import annotations

import hashlib
import os
import pathlib
from importlib.metadata import version

from jsonschema import Draft202012Validator


def _cache_directory() -> pathlib.Path | None:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    directory = pathlib.Path(base) / "jqc" / "checked-schemas"
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError:
        return None
    return directory if os.access(directory, os.W_OK) else None


_CACHE = _cache_directory()
_CHECKER = f"jsonschema {version('jsonschema')}".encode()


def check_schema(schema: dict, raw: bytes) -> None:
    """Raises jsonschema's SchemaError when `schema` (parsed from `raw`) is
    not a valid Draft 2020-12 schema; remembers the bytes that are."""
    marker = _CACHE / hashlib.sha256(_CHECKER + b"\0" + raw).hexdigest() if _CACHE else None
    if marker is not None and marker.exists():
        return
    Draft202012Validator.check_schema(schema)
    if marker is not None:
        try:
            marker.touch()
        except OSError:
            pass  # only a cache: the next call checks again
