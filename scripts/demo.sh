#!/usr/bin/env bash
# Runs Weir with a demo, offline: installs what is missing, builds (the same build the tests
# use, so neither rebuilds after the other), starts `weir serve` (with its own managed Redis
# under ./weir-data) and the example subscriber (examples/receiver) on loopback, creates the
# demo organisation, API clients and a webhook to that subscriber once, publishes an event and
# prints the delivery the subscriber received and verified. Then it keeps both running, with
# the credentials and next commands printed, until Ctrl-C (Weir stops first, then its Redis).
#
# Settings: WEIR_DATA_DIR (./weir-data), WEIR_LISTEN (127.0.0.1:8080),
# DEMO_RECEIVER (127.0.0.1:9100, where the example subscriber listens).
set -euo pipefail
cd "$(dirname "$0")/.."
STARTED=$(date +%s.%N)

./scripts/setup.sh
./scripts/build.sh --rust-only
WEIR=target/debug/weir
RECEIVER_BIN=target/debug/weir-receiver

export WEIR_DATA_DIR="${WEIR_DATA_DIR:-./weir-data}"
export WEIR_LISTEN="${WEIR_LISTEN:-127.0.0.1:8080}"
RECEIVER_ADDR="${DEMO_RECEIVER:-127.0.0.1:9100}"
# The demo's subscriber runs on loopback; production installations keep loopback blocked.
export WEIR_ALLOW_PRIVATE_TARGETS="${WEIR_ALLOW_PRIVATE_TARGETS:-127.0.0.0/8}"
BASE="http://${WEIR_LISTEN}"
mkdir -p "$WEIR_DATA_DIR"
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print(eval('d' + sys.argv[1]))" "$1"; }

"$WEIR" serve &
SERVE_PID=$!
RECEIVER_PID=""
stop() {
  trap - EXIT INT TERM
  [ -n "$RECEIVER_PID" ] && kill -TERM "$RECEIVER_PID" 2>/dev/null
  kill -TERM "$SERVE_PID" 2>/dev/null
  wait "$SERVE_PID" 2>/dev/null
}
trap stop EXIT INT TERM

for _ in $(seq 1 150); do
  if curl -fsS "$BASE/readyz" >/dev/null 2>&1; then break; fi
  if ! kill -0 $SERVE_PID 2>/dev/null; then echo "weir serve exited; see the messages above" >&2; exit 1; fi
  sleep 0.2
done

CREDS="$WEIR_DATA_DIR/demo-credentials.json"
if [ ! -s "$CREDS" ]; then
  ORG=$("$WEIR" admin org create --name "Demo Organisation" --plan pro)
  ORG_ID=$(printf '%s' "$ORG" | json '["id"]')
  ADMIN=$("$WEIR" admin client create --org "$ORG_ID" --name "demo admin" --admin)
  PUBLISHER=$("$WEIR" admin client create --org "$ORG_ID" --name "demo publisher" --publisher)
  PASSWORD=$(python3 -c 'import secrets; print(secrets.token_urlsafe(12))')
  USER=$(printf '%s\n' "$PASSWORD" | "$WEIR" admin user create --org "$ORG_ID" --email admin@demo.example --admin)
  printf '{"org": %s, "admin": %s, "publisher": %s, "user": %s, "password": "%s"}\n' \
    "$ORG" "$ADMIN" "$PUBLISHER" "$USER" "$PASSWORD" > "$CREDS"
  chmod 600 "$CREDS"
fi

token() {
  curl -fsS -X POST "$BASE/oauth/token" -d grant_type=client_credentials \
    -d "client_id=$(json "[\"$1\"][\"client_id\"]" < "$CREDS")" \
    -d "client_secret=$(json "[\"$1\"][\"client_secret\"]" < "$CREDS")" | json '["access_token"]'
}
ADMIN_TOKEN=$(token admin)
PUBLISHER_TOKEN=$(token publisher)
api() { curl -fsS -H "Authorization: Bearer $1" -H 'Content-Type: application/json' "${@:2}"; }

# The demo webhook: found by name, created on the first run, pointed at the receiver.
HOOK_URL="http://$RECEIVER_ADDR/hooks"
WEBHOOK=$(api "$ADMIN_TOKEN" "$BASE/api/v2/webhooks?limit=100" | python3 -c '
import json, sys
hooks = [w for w in json.load(sys.stdin)["data"] if w["name"] == "demo receiver"]
print(json.dumps(hooks[0]) if hooks else "")')
if [ -z "$WEBHOOK" ]; then
  WEBHOOK=$(api "$ADMIN_TOKEN" -X POST "$BASE/api/v2/webhooks" -d "{\"name\": \"demo receiver\",
    \"url\": \"$HOOK_URL\", \"subscribed_actions\": [\"work_order_created\", \"form_completed\"]}")
else
  WEBHOOK=$(api "$ADMIN_TOKEN" -X PATCH "$BASE/api/v2/webhooks/$(echo "$WEBHOOK" | json '["id"]')" \
    -d "{\"url\": \"$HOOK_URL\", \"active\": true}")
fi
WEBHOOK_ID=$(echo "$WEBHOOK" | json '["id"]')
SECRET=$(echo "$WEBHOOK" | json '["signing_secret"]')

RECEIVED="$WEIR_DATA_DIR/demo-received.jsonl"
: > "$RECEIVED"
"$RECEIVER_BIN" --listen "$RECEIVER_ADDR" --secret "$SECRET" >> "$RECEIVED" 2>> "$WEIR_DATA_DIR/demo-receiver.log" &
RECEIVER_PID=$!
for _ in $(seq 1 50); do
  curl -s -o /dev/null "http://$RECEIVER_ADDR/" && break
  kill -0 $RECEIVER_PID 2>/dev/null || { echo "the example subscriber did not start; see $WEIR_DATA_DIR/demo-receiver.log" >&2; exit 1; }
  sleep 0.1
done

EVENT=$(api "$PUBLISHER_TOKEN" -X POST "$BASE/api/v2/events" -d '{"action": "work_order_created",
  "creator": {"id": "usr_demo", "name": "Demo User"}, "subject": {"type": "WorkOrder", "id": "wo_demo"},
  "work_order": {"id": "wo_demo", "title": "Replace pump seal", "priority": 2}}' | json '["id"]')
for _ in $(seq 1 100); do
  grep -q "$EVENT" "$RECEIVED" && break
  sleep 0.1
done
grep -q "$EVENT" "$RECEIVED" || { echo "no delivery of $EVENT arrived within 10 s; see $WEIR_DATA_DIR/demo-receiver.log" >&2; exit 1; }

python3 - "$CREDS" "$BASE" "$RECEIVED" "$EVENT" "$WEBHOOK_ID" "$RECEIVER_ADDR" "$STARTED" <<'PY'
import json, sys, time
creds, base, received, event_id, webhook_id, receiver, started = sys.argv[1:8]
creds = json.load(open(creds))
line = next(json.loads(l) for l in open(received) if event_id in l)
a, p = creds["admin"], creds["publisher"]
headers = "\n".join(f"    {k}: {v}" for k, v in sorted(line["headers"].items()))
body = json.dumps(line["event"], indent=2).replace("\n", "\n    ")
print(f"""
The example subscriber on {receiver} received event {event_id} and verified its
{line['verified']} header ({time.time() - float(started):.1f} s after this script started):

  POST /hooks
{headers}

    {body}

Weir is running at {base} (Ctrl-C stops it). Demo organisation: {creds['org']['id']} (plan pro)

  admin client:      {a['client_id']}
  admin secret:      {a['client_secret']}
  publisher client:  {p['client_id']}
  publisher secret:  {p['client_secret']}
  demo webhook:      {webhook_id} -> http://{receiver}/hooks

Next:

  TOKEN=$(curl -s -X POST {base}/oauth/token \\
      -d grant_type=client_credentials -d client_id={a['client_id']} -d client_secret={a['client_secret']} \\
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
  curl -s -H "Authorization: Bearer $TOKEN" "{base}/api/v2/webhook_deliveries?webhook_id={webhook_id}"
  curl -s -H "Authorization: Bearer $TOKEN" {base}/api/v2/openapi.json

  Deliveries the subscriber verified: tail -f {received}
  Settings > Webhooks: {base}/settings/login  (email {creds['user']['email']}, password {creds['password']})
  A scripted tour of the API (plugins, exports, retries): ./examples/tour.sh
  (credentials are kept in {sys.argv[1]})
""", flush=True)
PY
wait $SERVE_PID
