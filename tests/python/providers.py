"""Signs and verifies webhooks with the providers' own code, for the sources tests.

    providers.py sign <provider> <secret> <url> [timestamp]   (body on stdin)
        prints the headers the provider would send, as JSON
    providers.py verify <provider> <secret> <url>             (JSON {"headers", "body"} on stdin)
        exits 0 when the provider's code accepts the request as forwarded, else 1

Providers: stripe (stripe), slack (slack-sdk), twilio (twilio), standard_webhooks
(standardwebhooks). GitHub's is tests/node/github.mjs (@octokit/webhooks-methods); Shopify
publishes no signing library for Python, so its rule is written here as Shopify's
documentation writes it.
"""

import base64
import datetime
import hashlib
import hmac
import json
import sys
import time
import urllib.parse


def sign(provider, secret, url, body, timestamp):
    if provider == "stripe":
        import stripe

        header = stripe.WebhookSignature.generate_signature_header(body, secret, timestamp=timestamp)
        return {"Stripe-Signature": header, "Content-Type": "application/json; charset=utf-8"}
    if provider == "slack":
        from slack_sdk.signature import SignatureVerifier

        signature = SignatureVerifier(secret).generate_signature(timestamp=str(timestamp), body=body)
        return {"X-Slack-Signature": signature, "X-Slack-Request-Timestamp": str(timestamp),
                "Content-Type": "application/x-www-form-urlencoded"}
    if provider == "twilio":
        from twilio.request_validator import RequestValidator

        params = dict(urllib.parse.parse_qsl(body, keep_blank_values=True))
        signature = RequestValidator(secret).compute_signature(url, params)
        return {"X-Twilio-Signature": signature, "I-Twilio-Idempotency-Token": hashlib.md5(body.encode()).hexdigest(),
                "Content-Type": "application/x-www-form-urlencoded"}
    if provider == "standard_webhooks":
        from standardwebhooks.webhooks import Webhook

        msg_id = "msg_" + hashlib.sha256(body.encode()).hexdigest()[:24]
        at = datetime.datetime.fromtimestamp(timestamp, tz=datetime.timezone.utc)
        signature = Webhook(secret).sign(msg_id, at, body)
        return {"webhook-id": msg_id, "webhook-timestamp": str(timestamp), "webhook-signature": signature,
                "Content-Type": "application/json"}
    if provider == "shopify":
        digest = hmac.new(secret.encode(), body.encode(), hashlib.sha256).digest()
        return {"X-Shopify-Hmac-Sha256": base64.b64encode(digest).decode(), "X-Shopify-Topic": "orders/create",
                "X-Shopify-Webhook-Id": hashlib.md5(body.encode()).hexdigest(), "Content-Type": "application/json"}
    raise SystemExit(f"unknown provider {provider}")


def verify(provider, secret, url, headers, body):
    headers = {k.lower(): v for k, v in headers.items()}
    if provider == "stripe":
        import stripe

        stripe.Webhook.construct_event(body, headers["stripe-signature"], secret)
        return True
    if provider == "slack":
        from slack_sdk.signature import SignatureVerifier

        return SignatureVerifier(secret).is_valid(body, headers["x-slack-request-timestamp"], headers["x-slack-signature"])
    if provider == "twilio":
        from twilio.request_validator import RequestValidator

        params = dict(urllib.parse.parse_qsl(body, keep_blank_values=True))
        return RequestValidator(secret).validate(url, params, headers["x-twilio-signature"])
    if provider == "standard_webhooks":
        from standardwebhooks.webhooks import Webhook

        Webhook(secret).verify(body, headers)
        return True
    if provider == "shopify":
        digest = hmac.new(secret.encode(), body.encode(), hashlib.sha256).digest()
        return hmac.compare_digest(base64.b64encode(digest).decode(), headers["x-shopify-hmac-sha256"])
    raise SystemExit(f"unknown provider {provider}")


def main():
    action, provider, secret, url = sys.argv[1:5]
    if action == "sign":
        timestamp = int(sys.argv[5]) if len(sys.argv) > 5 else int(time.time())
        print(json.dumps(sign(provider, secret, url, sys.stdin.read(), timestamp)))
        return
    request = json.load(sys.stdin)
    try:
        ok = verify(provider, secret, url, request["headers"], request["body"])
    except Exception as e:  # the provider's code refused it
        print(f"refused: {e}", file=sys.stderr)
        ok = False
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
