"""Checks a delivery's signature as Weir makes it (contract §4): the Standard Webhooks
headers (``webhook-id``, ``webhook-timestamp``, ``webhook-signature``), else
``X-Webhook-Signature`` (the hex HMAC-SHA256 of the body under the whole secret).
Comparisons are in constant time."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
import time
from collections.abc import Mapping

PREFIX = "whsec_"
_STANDARD = re.compile(r"[A-Za-z0-9+/]*={0,2}")
_URL_SAFE = re.compile(r"[A-Za-z0-9_-]*")


def standard_key(secret: str) -> bytes:
    """The Standard Webhooks key of a signing secret: the base64 after ``whsec_`` (URL-safe
    base64 without padding for older secrets), else the secret's UTF-8 bytes."""
    encoded = secret[len(PREFIX):] if secret.startswith(PREFIX) else secret
    if encoded and _STANDARD.fullmatch(encoded):
        try:
            key = base64.b64decode(encoded, validate=True)
            if key and base64.b64encode(key).decode() == encoded:
                return key
        except binascii.Error:
            pass
    if encoded and _URL_SAFE.fullmatch(encoded) and len(encoded) % 4 != 1:
        key = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
        if key and base64.urlsafe_b64encode(key).decode().rstrip("=") == encoded:
            return key
    return secret.encode()


def verify(
    body: bytes | str,
    headers: Mapping[str, str],
    secret: str,
    *,
    tolerance_seconds: int = 300,
    now: int | None = None,
) -> bool:
    """Whether ``body`` (the exact bytes received) and ``headers`` are a delivery signed with
    ``secret`` (the webhook's ``signing_secret``)."""
    data = body.encode() if isinstance(body, str) else bytes(body)
    lower = {name.lower(): value for name, value in headers.items()}
    msg_id, timestamp, signatures = (lower.get(n) for n in ("webhook-id", "webhook-timestamp", "webhook-signature"))
    if msg_id is not None and timestamp is not None and signatures is not None:
        if not timestamp.isdigit():
            return False
        if abs((int(time.time()) if now is None else now) - int(timestamp)) > tolerance_seconds:
            return False
        signed = f"{msg_id}.{timestamp}.".encode() + data
        expected = hmac.new(standard_key(secret), signed, hashlib.sha256).digest()
        for entry in signatures.split(" "):
            if not entry.startswith("v1,"):
                continue
            try:
                given = base64.b64decode(entry[3:], validate=True)
            except binascii.Error:
                continue
            if hmac.compare_digest(given, expected):
                return True
        return False
    given_hex = (lower.get("x-webhook-signature") or "").strip()
    if not re.fullmatch(r"[0-9a-fA-F]{64}", given_hex):
        return False
    expected = hmac.new(secret.encode(), data, hashlib.sha256).digest()
    return hmac.compare_digest(bytes.fromhex(given_hex), expected)
