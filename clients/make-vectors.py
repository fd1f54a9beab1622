"""Writes signature-vectors.json: deliveries signed as Weir signs them (contract §4), made
with the Standard Webhooks library (and Python's hmac for X-Webhook-Signature and the keys
that library does not read), not with Weir's signer — which must agree (host/src/sign.rs's
tests), as both clients' verify must. Run by hand: target/pyenv/bin/python clients/make-vectors.py
"""
import base64
import datetime
import hashlib
import hmac
import json
import pathlib

from standardwebhooks.webhooks import Webhook

NOW = 1764633600  # 2025-12-02T00:00:00Z: the verifiers are given this as now.
BODY = '{"id":"evt_01","action":"work_order_created","created_at":"2025-12-02T00:00:00Z"}'
NEW = "whsec_" + base64.b64encode(bytes(range(32))).decode()
OLD = "whsec_" + base64.b64encode(bytes(range(100, 132))).decode()
LEGACY = "whsec_" + base64.urlsafe_b64encode(bytes(range(50, 82))).decode().rstrip("=")
RAW = "whsec_not base64!"


def standard(secret, msg_id, ts, body):
    """webhook-signature's entry: through the library where it reads the key, else by hand."""
    if secret in (NEW, OLD):
        when = datetime.datetime.fromtimestamp(ts, tz=datetime.timezone.utc)
        return Webhook(secret).sign(msg_id, when, body)
    if secret == LEGACY:
        key = base64.urlsafe_b64decode(secret[6:] + "=" * (-len(secret[6:]) % 4))
    else:
        key = secret.encode()
    mac = hmac.new(key, f"{msg_id}.{ts}.{body}".encode(), hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode()


def x_signature(secret, body):
    return hmac.new(secret.encode(), body.encode(), hashlib.sha256).hexdigest()


def signed(name, current, previous=None, ts=NOW, body=BODY, msg_id="dlv_01"):
    entries = [standard(current, msg_id, ts, body)] + ([standard(previous, msg_id, ts, body)] if previous else [])
    headers = {
        "webhook-id": msg_id,
        "webhook-timestamp": str(ts),
        "webhook-signature": " ".join(entries),
        "x-webhook-signature": x_signature(current, body),
    }
    return {"name": name, "body": body, "signing": {"current": current, "previous": previous}, "headers": headers}


def with_checks(vector, *checks):
    vector["checks"] = [{"secret": s, "valid": v} for s, v in checks]
    return vector


vectors = [
    with_checks(signed("a secret in the Standard Webhooks format", NEW), (NEW, True), (OLD, False)),
    with_checks(signed("during a rotation: the new secret's entry, then the previous one's", NEW, OLD), (NEW, True), (OLD, True)),
    with_checks(signed("a secret made before Weir spoke Standard Webhooks (URL-safe base64, no padding)", LEGACY), (LEGACY, True)),
    with_checks(signed("a secret that is no base64: its UTF-8 bytes are the key", RAW), (RAW, True)),
    with_checks(signed("signed 299 seconds before now", NEW, ts=NOW - 299), (NEW, True)),
    with_checks(signed("signed 301 seconds before now: too old", NEW, ts=NOW - 301), (NEW, False)),
    with_checks(signed("signed 301 seconds after now: too new", NEW, ts=NOW + 301), (NEW, False)),
]
tampered = signed("the body changed by one byte", NEW)
tampered["body"] = BODY.replace("evt_01", "evt_02")
tampered["signing"] = None
vectors.append(with_checks(tampered, (NEW, False)))
only_x = signed("X-Webhook-Signature alone (no Standard Webhooks headers)", NEW)
only_x["headers"] = {"x-webhook-signature": only_x["headers"]["x-webhook-signature"]}
only_x["signing"] = None
vectors.append(with_checks(only_x, (NEW, True), (OLD, False)))
v1a = signed("only an asymmetric (v1a) entry, which is not Weir's", NEW)
v1a["headers"]["webhook-signature"] = "v1a," + base64.b64encode(b"x" * 64).decode()
v1a["signing"] = None
vectors.append(with_checks(v1a, (NEW, False)))
other_id = signed("another delivery's id under the same signature", NEW)
other_id["headers"]["webhook-id"] = "dlv_02"
other_id["signing"] = None
vectors.append(with_checks(other_id, (NEW, False)))

out = {
    "about": "Deliveries as Weir signs them (contract §4). Check each with now = `now` and a tolerance of 300 s; `signing` (when set) is what Weir's signer is given to make the same headers.",
    "now": NOW,
    "tolerance_seconds": 300,
    "vectors": vectors,
}
path = pathlib.Path(__file__).with_name("signature-vectors.json")
path.write_text(json.dumps(out, indent=2) + "\n")
print(f"wrote {len(vectors)} vectors to {path}")
