"""The one exception hierarchy of Headwater; the API layer maps each class to an HTTP status."""

from __future__ import annotations


class HeadwaterError(Exception):
    """Base of every error Headwater raises on purpose."""

    status = 500

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class BadRequest(HeadwaterError):
    """The request is malformed: a parameter, a body, an event."""

    status = 400


class InvalidEvent(BadRequest):
    """An event breaks the OpenLineage core; `errors` are `path: reason` strings."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("; ".join(errors))
        self.errors = errors


class Unauthorized(HeadwaterError):
    status = 401


class Forbidden(HeadwaterError):
    status = 403


class NotFound(HeadwaterError):
    status = 404


class PayloadTooLarge(HeadwaterError):
    status = 413


class UnsupportedMediaType(HeadwaterError):
    status = 415


class StoreRefused(HeadwaterError):
    """The store refused to keep this data (not an outage); nothing of the request was stored."""

    status = 422


class StoreUnavailable(HeadwaterError):
    """The store cannot be reached or refused a write; nothing was acknowledged."""

    status = 503


class ConfigError(HeadwaterError):
    """A setting has a value Headwater cannot use."""
