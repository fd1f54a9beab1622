"""Against a running Weir (tests/tests/it/clients.rs starts one and sets WEIR_URL,
WEIR_CLIENT_ID and WEIR_CLIENT_SECRET for an admin and publisher client): a token from the
client's credentials, a webhook to a receiver of this test's own, an event published, its
delivery verified, and the event read back — through the generated client."""

import http.server
import os
import queue
import threading
import unittest

from weir_client import ClientCredentials, CredentialsRefused, connect, verify
from weir_client.generated.api.events import events_get, events_publish
from weir_client.generated.api.webhooks import webhooks_create, webhooks_get
from weir_client.generated.models import ErrorBody, PublishRequest, WebhookCreateRequest


def settings():
    try:
        return os.environ["WEIR_URL"], os.environ["WEIR_CLIENT_ID"], os.environ["WEIR_CLIENT_SECRET"]
    except KeyError as missing:
        raise RuntimeError(f"set WEIR_URL, WEIR_CLIENT_ID and WEIR_CLIENT_SECRET (tests/tests/it/clients.rs does): {missing}")


class Receiver(http.server.ThreadingHTTPServer):
    """A receiver on loopback answering 200 to everything: what arrived, in order."""

    def __init__(self):
        self.arrived = queue.Queue()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                self.send_response(200)
                self.end_headers()
                outer.arrived.put((body, {k: v for k, v in self.headers.items()}))

            def log_message(self, *args):
                pass

        super().__init__(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server_address[1]}/hook"


class Live(unittest.TestCase):
    def test_a_token_is_kept_and_another_fetched_once_forgotten(self):
        base_url, client_id, client_secret = settings()
        tokens = ClientCredentials(base_url, client_id, client_secret)
        first = tokens.token()
        self.assertEqual(tokens.token(), first)
        tokens.forget()
        self.assertNotEqual(tokens.token(), first)
        with self.assertRaisesRegex(CredentialsRefused, "401"):
            ClientCredentials(base_url, client_id, "wrong").token()

    def test_a_webhook_an_event_its_delivery_verified_the_event_read_back(self):
        base_url, client_id, client_secret = settings()
        receiver = Receiver()
        self.addCleanup(receiver.shutdown)
        with connect(base_url, client_id, client_secret) as weir:
            made = webhooks_create.sync_detailed(
                client=weir,
                body=WebhookCreateRequest.from_dict({"url": receiver.url, "subscribed_actions": ["work_order_created"]}),
            )
            self.assertEqual(made.status_code, 201, made.content)
            secret = made.parsed.signing_secret
            event = {
                "action": "work_order_created",
                "creator": {"id": "usr_7", "name": "Ada Lovelace"},
                "subject": {"type": "WorkOrder", "id": "wo_py"},
                "work_order": {"id": "wo_py", "title": "Replace pump seal", "status": "open", "priority": 2},
            }
            published = events_publish.sync_detailed(client=weir, body=PublishRequest.from_dict(event))
            self.assertEqual(published.status_code, 202, published.content)
            body, headers = receiver.arrived.get(timeout=20)
            self.assertTrue(verify(body, headers, secret), "the delivery verifies")
            self.assertFalse(verify(body + b" ", headers, secret), "a changed body does not")
            read = events_get.sync_detailed(client=weir, id=published.parsed.id)
            self.assertEqual(read.status_code, 200, read.content)
            self.assertEqual(read.parsed.action, "work_order_created")
            missing = webhooks_get.sync(client=weir, id="wh_00000000000000000000000000")
            self.assertIsInstance(missing, ErrorBody)
            self.assertEqual(missing.error.code, "not_found")


if __name__ == "__main__":
    unittest.main()
