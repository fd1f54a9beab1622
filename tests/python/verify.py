"""Verifies one delivery with the Standard Webhooks libraries a subscriber would use.

Usage: verify.py SECRET [--later SECONDS] < {"headers": {...}, "body": "..."}
Prints {"standardwebhooks": "ok" | "<error>", "svix": "ok" | "<error>"}.
With --later, both libraries check the delivery as if it arrived that many seconds late
(a replay): only their clock moves.
"""
import json
import sys
from datetime import datetime, timedelta, timezone

import standardwebhooks.webhooks as std_module
import svix.webhooks


def main():
    secret = sys.argv[1]
    later = 0
    if len(sys.argv) == 4 and sys.argv[2] == "--later":
        later = int(sys.argv[3])
    if later:
        class Later(datetime):
            @classmethod
            def now(cls, tz=None):
                return datetime.now(tz=tz or timezone.utc) + timedelta(seconds=later)
        std_module.datetime = Later
    delivery = json.load(sys.stdin)
    headers, body = delivery["headers"], delivery["body"].encode()
    results = {}
    for name, verify in (
        ("standardwebhooks", lambda: std_module.Webhook(secret).verify(body, dict(headers))),
        ("svix", lambda: svix.webhooks.Webhook(secret).verify(body, dict(headers))),
    ):
        try:
            verify()
            results[name] = "ok"
        except Exception as e:  # the libraries' own verification errors, reported as text
            results[name] = f"{type(e).__name__}: {e}"
    print(json.dumps(results))


main()
