#!/usr/bin/env bash
# Runs Weir with a demo organisation: installs what is missing, builds, starts `weir serve`
# (with its own managed Redis under ./weir-data), creates the demo organisation and API
# clients once, prints working credentials and a first curl, and keeps serving until Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/setup.sh
./scripts/build-plugins.sh
cargo build --locked -p weir --bins
WEIR=target/debug/weir

export WEIR_DATA_DIR="${WEIR_DATA_DIR:-./weir-data}"
export WEIR_LISTEN="${WEIR_LISTEN:-127.0.0.1:8080}"
# The demo receiver runs on loopback; production installations keep loopback blocked.
export WEIR_ALLOW_PRIVATE_TARGETS="${WEIR_ALLOW_PRIVATE_TARGETS:-127.0.0.0/8}"
BASE="http://${WEIR_LISTEN}"

"$WEIR" serve &
SERVE_PID=$!
trap 'kill -TERM $SERVE_PID 2>/dev/null; wait $SERVE_PID 2>/dev/null' EXIT INT TERM

for _ in $(seq 1 100); do
  if curl -fsS "$BASE/readyz" >/dev/null 2>&1; then break; fi
  if ! kill -0 $SERVE_PID 2>/dev/null; then echo "weir serve exited; see the messages above" >&2; exit 1; fi
  sleep 0.2
done

CREDS="$WEIR_DATA_DIR/demo-credentials.json"
if [ ! -s "$CREDS" ]; then
  ORG=$("$WEIR" admin org create --name "Demo Organisation" --plan pro)
  ORG_ID=$(printf '%s' "$ORG" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
  ADMIN=$("$WEIR" admin client create --org "$ORG_ID" --name "demo admin" --admin)
  PUBLISHER=$("$WEIR" admin client create --org "$ORG_ID" --name "demo publisher" --publisher)
  PASSWORD=$(python3 -c 'import secrets; print(secrets.token_urlsafe(12))')
  USER=$(printf '%s\n' "$PASSWORD" | "$WEIR" admin user create --org "$ORG_ID" --email admin@demo.example --admin)
  printf '{"org": %s, "admin": %s, "publisher": %s, "user": %s, "password": "%s"}\n' \
    "$ORG" "$ADMIN" "$PUBLISHER" "$USER" "$PASSWORD" > "$CREDS"
  chmod 600 "$CREDS"
fi

python3 - "$CREDS" "$BASE" <<'PY'
import json, sys
creds, base = json.load(open(sys.argv[1])), sys.argv[2]
a, p = creds["admin"], creds["publisher"]
print(f"""
Weir is running at {base} (Ctrl-C stops it). Demo organisation: {creds['org']['id']} (plan pro)

  admin client:      {a['client_id']}
  admin secret:      {a['client_secret']}
  publisher client:  {p['client_id']}
  publisher secret:  {p['client_secret']}

Try it:

  TOKEN=$(curl -s -X POST {base}/oauth/token \\
      -d grant_type=client_credentials -d client_id={a['client_id']} -d client_secret={a['client_secret']} \\
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
  curl -s -H "Authorization: Bearer $TOKEN" {base}/api/v2/webhooks/events
  curl -s -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \\
    -d '{{"url": "https://example.com/hooks", "subscribed_actions": ["work_order_created"]}}' \\
    {base}/api/v2/webhooks

Settings > Webhooks: {base}/settings/login
  email {creds['user']['email']}, password {creds['password']}

A scripted tour of the API: ./examples/tour.sh
(credentials are kept in {sys.argv[1]})
""")
PY
wait $SERVE_PID
