"""Request validation driven by Schemas/openapi.yaml.

openapi-core checks each request against its operation in the document:
header, query and path parameters, the Content-Type and the body (JSON or
multipart) against the request schema. What the document says is what the
server enforces, so the two cannot drift; the views then check only what a
schema cannot say (that a template exists, that form data fits the template's
fields, that completed_at is not before started_at).

A failure is an ApiError whose message starts with the name of the offending
field, as the document's conventions promise: a missing or malformed header
parameter is 400, a bad query parameter or body 422, a path parameter that
cannot name a record 404, a body of another media type 400.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Iterable

from openapi_core import OpenAPI
from openapi_core.casting.schemas.exceptions import CastError
from openapi_core.contrib.werkzeug import WerkzeugOpenAPIRequest
from openapi_core.deserializing.exceptions import DeserializeError
from openapi_core.templating.media_types.exceptions import MediaTypeNotFound
from openapi_core.templating.paths.exceptions import PathError
from openapi_core.validation.request.exceptions import (
    InvalidRequestBody,
    MissingRequiredParameter,
    MissingRequiredRequestBody,
    ParameterValidationError,
    RequestBodyValidationError,
    SecurityValidationError,
)
from openapi_core.validation.schemas.exceptions import InvalidSchemaValue

from validate import ApiError

API_PREFIX = "/api/v1"
PATH_NOUNS = {"facilities": "facility", "templates": "template", "uploads": "upload"}


def field_path(parts: Iterable[Any]) -> str:
    """["form_data", "12", 0] -> "form_data.12[0]"."""
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += ("." if text else "") + str(part)
    return text


def schema_error_message(error: Any) -> str:
    """One jsonschema error as "field: what is wrong"."""
    where = field_path(error.absolute_path)
    prefix = f"{where}." if where else ""
    instance = error.instance
    if error.validator == "additionalProperties" and isinstance(instance, dict):
        allowed = set((error.schema or {}).get("properties", {}))
        unknown = sorted(k for k in instance if k not in allowed)
        if unknown:
            return "; ".join(f"{prefix}{name}: unknown field" for name in unknown)
    if error.validator == "required" and isinstance(instance, dict):
        missing = [name for name in error.validator_value if name not in instance]
        if missing:
            return "; ".join(f"{prefix}{name}: is required" for name in missing)
    name = where or "body"
    message = error.message
    description = (error.schema or {}).get("description") if isinstance(error.schema, dict) else None
    if error.validator in ("oneOf", "anyOf", "pattern", "format") and description:
        first_line = description.strip().splitlines()[0].rstrip(".")
        message = f"{message} ({first_line})"
    return f"{name}: {message}"


def schema_errors(exc: BaseException) -> list[Any]:
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, InvalidSchemaValue):
            return list(cause.schema_errors)
        cause = cause.__cause__
    return []


def strip_extensions(node: Any) -> None:
    """The document as the reference backend has it: what the document marks
    as this project's extension becomes optional. A parameter with
    `x-jqc-extension` is no longer required; a property named in a schema's
    `x-jqc-extension-properties` leaves that schema's `required` list (a
    client may still send it: the reference backend ignores it)."""
    if isinstance(node, dict):
        if "x-jqc-extension" in node and node.get("in") in ("header", "query"):
            node["required"] = False
        extension_properties = node.get("x-jqc-extension-properties")
        if isinstance(extension_properties, dict) and isinstance(node.get("required"), list):
            node["required"] = [name for name in node["required"] if name not in extension_properties]
            if not node["required"]:
                del node["required"]
        for value in node.values():
            strip_extensions(value)
    elif isinstance(node, list):
        for value in node:
            strip_extensions(value)


class Contract:
    """The document, loaded once, and the checks made with it."""

    def __init__(self, path: Path, without_extensions: bool = False) -> None:
        self.path = path
        self.raw: dict[str, Any] = self._load_yaml(path)
        # The document refers only within itself (#/components/...), so the
        # copy read here serves openapi-core too: read once, not twice.
        if without_extensions:
            strip_extensions(self.raw)
        self.openapi = OpenAPI.from_dict(self.raw)
        self._templates = [
            (re.compile("^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(p)) + "$"), p)
            for p in self.raw.get("paths", {})
        ]

    # Documents read in this process, by path, variant and the file's size
    # and time: the fork server (forkserver.py) reads each once before it
    # forks the servers that use them.
    _shared: dict[tuple[str, bool, int, int], Contract] = {}

    @classmethod
    def shared(cls, path: Path, without_extensions: bool = False) -> Contract:
        """The contract of `path`, read once per process while the file is unchanged."""
        facts = os.stat(path)
        key = (str(Path(path).resolve()), without_extensions, facts.st_size, facts.st_mtime_ns)
        if key not in cls._shared:
            cls._shared[key] = cls(path, without_extensions=without_extensions)
        return cls._shared[key]

    @staticmethod
    def _load_yaml(path: Path) -> dict[str, Any]:
        import yaml

        # libyaml's parser when PyYAML has it (7x less CPU for this
        # document, and every test starts a server): the same safe subset.
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        with open(path, encoding="utf-8") as handle:
            return yaml.load(handle, Loader=loader)  # noqa: S506 (a safe loader)

    def operation(self, method: str, path: str) -> tuple[str, dict[str, Any]] | None:
        """The document's path template and operation for a request path
        under /api/v1 (or /uploads), or None when the document has none."""
        if path.startswith(API_PREFIX + "/"):
            path = path[len(API_PREFIX):]
        elif not path.startswith("/uploads/"):
            return None
        for pattern, template in self._templates:
            if pattern.match(path):
                operation = self.raw["paths"][template].get(method.lower())
                if operation is not None:
                    return template, operation
        return None

    def requires_bearer(self, operation: dict[str, Any]) -> bool:
        """Whether every security requirement of the operation names a scheme
        (an empty requirement, `{}`, makes the token optional)."""
        security = operation.get("security", self.raw.get("security", []))
        return bool(security) and all(requirement for requirement in security)

    def body_properties(self, operation: dict[str, Any], media_type: str) -> set[str] | None:
        """The property names of the operation's request body schema for a
        media type (used for multipart, whose extra parts openapi-core does
        not report)."""
        content = operation.get("requestBody", {}).get("content", {})
        schema = content.get(media_type, {}).get("schema")
        if schema is None:
            return None
        while "$ref" in schema:
            node: Any = self.raw
            for part in schema["$ref"].lstrip("#/").split("/"):
                node = node[part]
            schema = node
        return set(schema.get("properties", {}))

    def check(self, request: Any) -> None:
        """Validate a Flask request against the document; raise ApiError."""
        wrapped = WerkzeugOpenAPIRequest(request)
        for error in self.openapi.iter_request_errors(wrapped):
            raise self._api_error(error, request)

    def _api_error(self, error: BaseException, request: Any) -> ApiError:
        if isinstance(error, PathError):
            return ApiError(404, "not found")
        if isinstance(error, SecurityValidationError):
            return ApiError(401, "authentication required: send Authorization: Bearer <access token>")
        if isinstance(error, ParameterValidationError):
            return self._parameter_error(error, request)
        if isinstance(error, MissingRequiredRequestBody):
            return ApiError(400, "body: a request body is required")
        if isinstance(error, RequestBodyValidationError):
            cause = error.__cause__
            if isinstance(cause, MediaTypeNotFound):
                wanted = " or ".join(cause.availableMimetypes)
                return ApiError(400, f"Content-Type must be {wanted}")
            if isinstance(error, InvalidRequestBody) or schema_errors(error):
                messages = [schema_error_message(e) for e in schema_errors(error)]
                return ApiError(422, "; ".join(messages) or f"body: {error}")
            if isinstance(cause, DeserializeError):
                return ApiError(400, f"body could not be read as {request.mimetype}: {cause}")
            return ApiError(400, f"body: {cause or error}")
        return ApiError(400, str(error))

    @staticmethod
    def _parameter_error(error: ParameterValidationError, request: Any) -> ApiError:
        name, location = error.name, error.location
        if location == "path":
            path = request.path[len(API_PREFIX):] if request.path.startswith(API_PREFIX + "/") else request.path
            segments = [s for s in path.split("/") if s]
            noun = PATH_NOUNS.get(segments[0], segments[0]) if segments else "record"
            raw = segments[1] if len(segments) > 1 else ""
            return ApiError(404, f"{noun} {raw!r} not found")
        if isinstance(error, MissingRequiredParameter):
            if location == "header":
                return ApiError(400, f"{name} header is required on this request")
            return ApiError(422, f"{name}: is required")
        cause = error.__cause__
        errors = schema_errors(error)
        if errors:
            detail = "; ".join(e.message for e in errors)
        elif isinstance(cause, CastError):
            detail = f"{cause.value!r} is not of type {cause.type}"
        else:
            detail = str(cause or error)
        if location == "header":
            return ApiError(400, f"{name} header: {detail}")
        return ApiError(422, f"{name}: {detail}")
