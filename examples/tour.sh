#!/usr/bin/env bash
# A scripted tour of Weir's API with curl, against `./scripts/demo.sh` running in another
# terminal: token → webhook → plugin upload and dry run → attach → publish → report export
# → deliveries list → retry. Run it from the repository root:
#
#     ./examples/tour.sh
#
# It can run again and again: it reuses its webhook (named "tour") and uploads its plugin as
# the next version of "tour-filter".
#
# Settings: WEIR_URL (default http://127.0.0.1:8080), WEIR_DATA_DIR (./weir-data, where the
# demo keeps its credentials), RECEIVER_PORT (9000, for the example subscriber it starts).
set -euo pipefail
cd "$(dirname "$0")/.."

URL="${WEIR_URL:-http://127.0.0.1:8080}"
CREDS="${WEIR_DATA_DIR:-./weir-data}/demo-credentials.json"
PORT="${RECEIVER_PORT:-9000}"
DOWNLOADS="$(mktemp -d)"
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print(eval('d' + sys.argv[1]))" "$1"; }
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
[ -s "$CREDS" ] || { echo "no $CREDS: start ./scripts/demo.sh first" >&2; exit 1; }

step "1. Tokens (OAuth 2.0 client credentials)"
ADMIN_ID=$(json '["admin"]["client_id"]' < "$CREDS"); ADMIN_SECRET=$(json '["admin"]["client_secret"]' < "$CREDS")
PUB_ID=$(json '["publisher"]["client_id"]' < "$CREDS"); PUB_SECRET=$(json '["publisher"]["client_secret"]' < "$CREDS")
ADMIN=$(curl -sf -X POST "$URL/oauth/token" -d grant_type=client_credentials -d "client_id=$ADMIN_ID" -d "client_secret=$ADMIN_SECRET" | json '["access_token"]')
PUB=$(curl -sf -X POST "$URL/oauth/token" -u "$PUB_ID:$PUB_SECRET" -d grant_type=client_credentials | json '["access_token"]')
echo "admin and publisher tokens issued"
api() { curl -sf -H "Authorization: Bearer $1" -H 'Content-Type: application/json' "${@:2}"; }

step "2. Upload the report-export-filter plugin and dry-run it"
PLUGIN=$(curl -sf -X POST "$URL/api/v2/plugins?name=tour-filter" -H "Authorization: Bearer $ADMIN" \
  -H 'Content-Type: application/wasm' --data-binary @target/wasm32-wasip2/release/report_export_filter.wasm | json '["id"]')
echo "plugin $PLUGIN"
CONFIG="{\"exportable_types\": [\"Form\"], \"exportable_ids\": [\"frm_tour\"], \"creator_ids\": [\"$ADMIN_ID\"]}"
api "$ADMIN" -X POST "$URL/api/v2/plugins/$PLUGIN/test" -d "{\"config\": $CONFIG, \"event\": {
  \"action\": \"report_export_completed\", \"creator\": {\"id\": \"someone-else\", \"name\": \"X\"},
  \"subject\": {\"type\": \"ReportExport\", \"id\": \"rex_dry\"},
  \"report_export\": {\"id\": \"rex_dry\", \"exportable\": {\"type\": \"Form\", \"id\": \"frm_tour\"}}}}" | json '["outcome"] + ": " + str(d["reason"])'

step "3. Subscribe a webhook (with the plugin attached) and start a subscriber"
SETTINGS="\"url\": \"http://127.0.0.1:$PORT/hook\",
  \"subscribed_actions\": [\"report_export_completed\", \"form_completed\"],
  \"plugins\": [{\"plugin_id\": \"$PLUGIN\", \"config\": $CONFIG}]"
EXISTING=$(api "$ADMIN" "$URL/api/v2/webhooks?limit=100" |
  python3 -c 'import json,sys; print(next((w["id"] for w in json.load(sys.stdin)["data"] if w["name"] == "tour"), ""))')
if [ -n "$EXISTING" ]; then
  WEBHOOK=$(api "$ADMIN" -X PATCH "$URL/api/v2/webhooks/$EXISTING" -d "{$SETTINGS, \"active\": true}")
else
  WEBHOOK=$(api "$ADMIN" -X POST "$URL/api/v2/webhooks" -d "{\"name\": \"tour\", $SETTINGS}")
fi
WEBHOOK_ID=$(echo "$WEBHOOK" | json '["id"]'); SECRET=$(echo "$WEBHOOK" | json '["signing_secret"]')
echo "webhook $WEBHOOK_ID"
# Earlier runs' versions of the plugin are detached now: remove them.
api "$ADMIN" "$URL/api/v2/plugins?name=tour-filter&limit=100" |
  python3 -c 'import json,sys; [print(p["id"]) for p in json.load(sys.stdin)["data"] if p["id"] != sys.argv[1]]' "$PLUGIN" |
  while read -r OLD; do curl -s -o /dev/null -X DELETE -H "Authorization: Bearer $ADMIN" "$URL/api/v2/plugins/$OLD"; done
cargo build -q -p weir-receiver
target/debug/weir-receiver --listen "127.0.0.1:$PORT" --secret "$SECRET" --download-dir "$DOWNLOADS" > "$DOWNLOADS/received.jsonl" 2>/dev/null &
RECEIVER=$!
trap 'kill $RECEIVER 2>/dev/null; rm -rf "$DOWNLOADS"' EXIT
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break; sleep 0.1; done

step "4. Publish events"
for FORM in frm_tour frm_other; do
  api "$PUB" -X POST "$URL/api/v2/events" -d "{\"action\": \"form_completed\",
    \"creator\": {\"id\": \"usr_1\", \"name\": \"Inspector\"}, \"subject\": {\"type\": \"Form\", \"id\": \"$FORM\"},
    \"form\": {\"id\": \"$FORM\", \"title\": \"Safety walk $FORM\", \"score\": 97}}" | json '["id"]'
done

step "5. Export both forms as PDF (only frm_tour passes the plugin)"
WANTED=$(api "$ADMIN" -X POST "$URL/api/v2/report_exports" -d '{"exportable": {"type": "Form", "id": "frm_tour"}, "format": "pdf"}' | json '["id"]')
api "$ADMIN" -X POST "$URL/api/v2/report_exports" -d '{"exportable": {"type": "Form", "id": "frm_other"}, "format": "pdf"}' | json '["id"]' >/dev/null
for _ in $(seq 100); do
  STATUS=$(api "$ADMIN" "$URL/api/v2/report_exports/$WANTED" | json '["status"]')
  [ "$STATUS" = completed ] && break; sleep 0.1
done
echo "export $WANTED: $STATUS"
for _ in $(seq 100); do grep -q downloaded "$DOWNLOADS/received.jsonl" 2>/dev/null && break; sleep 0.1; done
echo "the subscriber verified the signature and downloaded: $(ls "$DOWNLOADS"/*.pdf)"

step "6. Deliveries of the webhook (this run's four)"
sleep 0.5
api "$ADMIN" "$URL/api/v2/webhook_deliveries?webhook_id=$WEBHOOK_ID&limit=4" |
  python3 -c 'import json,sys; [print(d["id"], d["action"], d["status"], (d["plugins"][0].get("reason") or "") if d["plugins"] else "") for d in json.load(sys.stdin)["data"]]'

step "7. Retry the delivered export event"
DELIVERY=$(api "$ADMIN" "$URL/api/v2/webhook_deliveries?webhook_id=$WEBHOOK_ID&status=succeeded&action=report_export_completed" | json '["data"][0]["id"]')
api "$ADMIN" -X POST "$URL/api/v2/webhook_deliveries/$DELIVERY/retry" | json '["id"] + " " + d["status"]'
for _ in $(seq 100); do
  N=$(api "$ADMIN" "$URL/api/v2/webhook_deliveries/$DELIVERY" | json '[ "attempts"].__len__()')
  [ "$N" -ge 2 ] && break; sleep 0.1
done
echo "attempts: $N (the subscriber saw the same X-Webhook-Delivery again and ignored the duplicate)"
step "Tour complete"
