"""The rules of a request that the OpenAPI document cannot state (it checks
every shape; see contract.py): form data against its template's fields,
timestamps as instants, the domain's score; and the error type.  Every
failure raises ApiError with a message that starts with the name of the
offending field."""

from __future__ import annotations

import datetime as dt
import math
import re
from typing import Any

FIELD_TYPES = (
    "text", "email", "textarea", "number", "date", "checkbox", "checkbox_group",
    "radio", "select", "rating", "pass_fail", "signature", "image", "table",
    "section", "label",
)
DISPLAY_ONLY = ("section", "label")

# RFC 3339 date-time: full date, "T" (or "t"), time, optional fraction, and a
# mandatory offset ("Z" or +hh:mm).
RFC3339 = re.compile(
    r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$"
)
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
UPLOAD_PATH = re.compile(r"^/uploads/[0-9a-f]{64}\.[a-z0-9]{1,5}$")


class ApiError(Exception):
    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


def invalid(field: str, message: str) -> ApiError:
    return ApiError(422, f"{field}: {message}")


def require_object(body: Any, allowed: tuple[str, ...], required: tuple[str, ...]) -> dict[str, Any]:
    """For the test-only /__admin endpoints, which are not in the document."""
    if not isinstance(body, dict):
        raise ApiError(422, "body: must be a JSON object")
    for key in body:
        if key not in allowed:
            raise invalid(key, "unknown field")
    for key in required:
        if key not in body:
            raise invalid(key, "is required")
    return body


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, float) and math.isfinite(value)


def record_id(value: Any) -> int | None:
    """An id of a server record as the document allows it (an integer or a
    string of digits, already checked), as an integer; None stays None."""
    return None if value is None else int(value)


def timestamp(body: dict[str, Any], field: str) -> dt.datetime:
    value = body.get(field)
    if not isinstance(value, str) or not RFC3339.match(value):
        raise invalid(field, "must be an RFC 3339 date-time with an offset, e.g. 2024-05-01T09:30:00.000Z")
    text = value.replace("t", "T").replace("z", "Z")
    # Python keeps at most 6 fractional digits.
    match = re.match(r"^(.*?\.)(\d+)(.*)$", text)
    if match and len(match.group(2)) > 6:
        text = match.group(1) + match.group(2)[:6] + match.group(3)
    try:
        parsed = dt.datetime.fromisoformat(text)
    except ValueError:
        raise invalid(field, "is not a valid date-time") from None
    return parsed.astimezone(dt.timezone.utc)


def format_timestamp(value: dt.datetime) -> str:
    """UTC, millisecond precision, trailing Z: 2024-05-01T09:30:00.000Z."""
    value = value.astimezone(dt.timezone.utc)
    return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"


def field_key(raw: Any) -> str:
    """Template field ids arrive as integers or strings: one string form."""
    if is_int(raw):
        return str(raw)
    if isinstance(raw, str):
        text = raw.strip()
        if re.fullmatch(r"[0-9]+", text):
            return str(int(text))
        return text
    return str(raw)


def validate_form_data(
    form_data: Any, fields: list[dict[str, Any]], photo_exists
) -> dict[str, Any]:
    """Check each value against its template field.  ``null`` means unanswered."""
    if not isinstance(form_data, dict):
        raise invalid("form_data", "must be an object keyed by field id")
    by_id = {field_key(f.get("id")): f for f in fields}
    for key, value in form_data.items():
        name = f"form_data.{key}"
        if not re.fullmatch(r"[0-9]+", key) or key != field_key(key):
            raise invalid(name, "keys must be field ids written as decimal strings, e.g. \"5\"")
        field = by_id.get(key)
        if field is None:
            raise invalid(name, "the template has no field with this id")
        ftype = field.get("type")
        if ftype in DISPLAY_ONLY:
            raise invalid(name, f"a {ftype} field never holds a value")
        if value is None:
            continue
        options = field.get("options") or []
        if ftype in ("text", "textarea"):
            if not isinstance(value, str):
                raise invalid(name, f"{ftype} value must be a string")
        elif ftype == "email":
            if not isinstance(value, str) or (value and not EMAIL.match(value)):
                raise invalid(name, "must be an email address or \"\"")
        elif ftype == "number":
            if not is_number(value):
                raise invalid(name, "number value must be a JSON number")
        elif ftype == "date":
            if not isinstance(value, str) or (value and not DATE.match(value)):
                raise invalid(name, "date value must be YYYY-MM-DD or \"\"")
            if value:
                try:
                    dt.date.fromisoformat(value)
                except ValueError:
                    raise invalid(name, "is not a calendar date") from None
        elif ftype == "checkbox":
            if not isinstance(value, bool):
                raise invalid(name, "checkbox value must be true or false")
        elif ftype == "checkbox_group":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise invalid(name, "checkbox_group value must be an array of option strings")
            if len(set(value)) != len(value):
                raise invalid(name, "checkbox_group value repeats an option")
            for v in value:
                if v not in options:
                    raise invalid(name, f"{v!r} is not one of the field's options")
        elif ftype in ("radio", "select"):
            if not isinstance(value, str):
                raise invalid(name, f"{ftype} value must be an option string")
            if value and value not in options:
                raise invalid(name, f"{value!r} is not one of the field's options")
        elif ftype == "rating":
            if not (is_int(value) or (isinstance(value, float) and value.is_integer())) or not 0 <= value <= 5:
                raise invalid(name, "rating must be an integer from 0 to 5")
        elif ftype == "pass_fail":
            if value not in ("pass", "fail", ""):
                raise invalid(name, "pass_fail value must be \"pass\", \"fail\" or \"\"")
        elif ftype in ("signature", "image"):
            if not isinstance(value, str):
                raise invalid(name, f"{ftype} value must be an uploaded photo path or \"\"")
            if value and not (UPLOAD_PATH.match(value) and photo_exists(value)):
                raise invalid(
                    name,
                    f"{value!r} is not a path returned by /photos/upload (send \"\" while the photo is pending)",
                )
        elif ftype == "table":
            columns = field.get("columns") or []
            if not isinstance(value, list):
                raise invalid(name, "table value must be an array of rows")
            for i, row in enumerate(value):
                if not isinstance(row, list) or not all(isinstance(c, str) for c in row):
                    raise invalid(f"{name}[{i}]", "a table row must be an array of strings")
                if len(row) != len(columns):
                    raise invalid(f"{name}[{i}]", f"a table row must have {len(columns)} cells, one per column")
    return form_data


PASSING = ("pass", "yes", "ok", "good", "acceptable", "compliant")


def compute_score(form_data: dict[str, Any], fields: list[dict[str, Any]]) -> float | None:
    """The domain's score: 100 x earned / answered scoreable fields, 2 decimals."""
    earned = 0.0
    answered = 0
    by_id = {field_key(f.get("id")): f for f in fields}
    for key, value in form_data.items():
        field = by_id.get(key)
        if field is None or value is None:
            continue
        ftype = field.get("type")
        if ftype == "rating":
            if value == 0:
                continue
            answered += 1
            earned += float(value) / 5.0
        elif ftype == "checkbox":
            answered += 1
            earned += 1.0 if value is True else 0.0
        elif ftype in ("radio", "pass_fail"):
            if value == "":
                continue
            answered += 1
            earned += 1.0 if str(value).lower() in PASSING else 0.0
    if answered == 0:
        return None
    return round(100.0 * earned / answered, 2)
