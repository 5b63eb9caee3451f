"""checked_schemas: a schema's meta-schema check is made once for its bytes,
again for other bytes, and every time without a cache directory."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def load(monkeypatch: pytest.MonkeyPatch, cache: Path | None) -> tuple[object, list[dict]]:
    if cache is None:
        # A "cache" below a file: no directory can be made there.
        monkeypatch.setenv("XDG_CACHE_HOME", "/dev/null")
    else:
        monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    import checked_schemas

    module = importlib.reload(checked_schemas)
    checked: list[dict] = []
    real = Draft202012Validator.check_schema

    def counting(schema: dict) -> None:
        checked.append(schema)
        real(schema)

    monkeypatch.setattr(module.Draft202012Validator, "check_schema", staticmethod(counting))
    return module, checked


GOOD = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"}
OTHER = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "array"}
BAD = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": 5}


def raw(schema: dict) -> bytes:
    return json.dumps(schema).encode()


def test_the_same_bytes_are_checked_once_and_other_bytes_again(monkeypatch: pytest.MonkeyPatch,
                                                               tmp_path: Path) -> None:
    module, checked = load(monkeypatch, tmp_path)
    for schema in (GOOD, GOOD, OTHER, GOOD, OTHER):
        module.check_schema(schema, raw(schema))
    assert checked == [GOOD, OTHER]
    assert len(list((tmp_path / "jqc" / "checked-schemas").iterdir())) == 2


def test_a_bad_schema_is_refused_every_time_and_never_remembered(monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: Path) -> None:
    module, checked = load(monkeypatch, tmp_path)
    for _ in range(2):
        with pytest.raises(SchemaError):
            module.check_schema(BAD, raw(BAD))
    assert checked == [BAD, BAD]
    assert list((tmp_path / "jqc" / "checked-schemas").iterdir()) == []


def test_without_a_cache_directory_every_schema_is_checked_every_time(monkeypatch: pytest.MonkeyPatch) -> None:
    module, checked = load(monkeypatch, None)
    for _ in range(3):
        module.check_schema(GOOD, raw(GOOD))
    assert checked == [GOOD, GOOD, GOOD]
