"""Drives Weir through a client generated from its OpenAPI document (openapi-python-client):
creates a webhook, publishes an event, waits for its delivery and lists it. A drift between the
document and the server breaks this script.

Usage: generated_client.py BASE_URL TOKEN RECEIVER_URL  (the generated `weir_client` package on
PYTHONPATH). Prints {"webhook_id", "event_id", "deliveries": [{"id", "status", "event_id"}]}.
"""
import json
import sys
import time

from weir_client import AuthenticatedClient
from weir_client.api.deliveries import deliveries_list
from weir_client.api.events import events_get, events_publish
from weir_client.api.webhooks import webhooks_create
from weir_client.models import Creator, PublishRequest, Subject, WebhookCreateRequest

base, token, receiver = sys.argv[1:4]
client = AuthenticatedClient(base_url=base, token=token, raise_on_unexpected_status=True)

webhook = webhooks_create.sync(
    client=client, body=WebhookCreateRequest(url=receiver, subscribed_actions=["work_order_created"])
)
event = PublishRequest(
    action="work_order_created",
    creator=Creator(id="usr_gen", name="Generated Client"),
    subject=Subject(type_="WorkOrder", id="wo_gen"),
)
event.additional_properties["work_order"] = {"id": "wo_gen", "title": "From the generated client"}
accepted = events_publish.sync(client=client, body=event)

deliveries = []
for _ in range(100):
    page = deliveries_list.sync(client=client, webhook_id=webhook.id)
    deliveries = [{"id": d.id, "status": str(d.status.value), "event_id": d.event_id} for d in page.data]
    if deliveries and all(d["status"] == "succeeded" for d in deliveries):
        break
    time.sleep(0.1)
looked_up = events_get.sync(id=accepted.id, client=client)
print(json.dumps({
    "webhook_id": webhook.id,
    "signing_secret": webhook.signing_secret,
    "event_id": accepted.id,
    "deliveries": deliveries,
    "lookup": [{"id": d.id, "webhook_id": d.webhook_id} for d in looked_up.deliveries],
}))
