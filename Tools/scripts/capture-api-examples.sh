#!/usr/bin/env bash
# Captures the OpenAPI document's examples from a real `seatledger serve` on the demo ledger and
# prints them as one JSON object (name → body), the text of APIExamples.captured in
# Sources/SeatLedgerService/APIExamples.swift:
#
#   bash Tools/scripts/capture-api-examples.sh "$(swift build --show-bin-path)/seatledger" > /tmp/examples.json
#
# The demo ledger holds every sample stream but one (its first signed notification is posted, so
# the webhook's three answers are real: appended, then duplicate; garbage is quarantined; its
# first apiResponse envelope is recorded through POST /v1/api-responses, twice, then for the
# wrong environment, then cut short). The clock is pinned (SEATLEDGER_NOW) so the bodies do not
# depend on the day they were captured.
set -euo pipefail
bin="${1:?usage: capture-api-examples.sh BIN}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d /tmp/seatledger-examples.XXXXXX)"
serve_pid=""
cleanup() { if [ -n "$serve_pid" ]; then kill "$serve_pid" 2>/dev/null || true; wait "$serve_pid" 2>/dev/null || true; fi; rm -rf "$work"; }
trap cleanup EXIT

held="$root/Events/scenarios/guide-10-9-6.ndjson"
mkdir "$work/scenarios"
for file in "$root"/Events/scenarios/*.ndjson; do [ "$file" = "$held" ] || cp "$file" "$work/scenarios/"; done
"$bin" demo --scenarios "$work/scenarios" --keep "$work/demo.sqlite" > /dev/null
token="$("$bin" token add examples --scope read --scope record --db "$work/demo.sqlite" 2> /dev/null)"
app_token="$("$bin" token add examples-app-server --scope link --db "$work/demo.sqlite" 2> /dev/null)"
export SEATLEDGER_NOW="2026-12-01T00:00:00Z"
"$bin" serve --db "$work/demo.sqlite" --listen 127.0.0.1:0 2> "$work/serve.log" &
serve_pid=$!
port=""
for _ in $(seq 1 100); do
  port="$(grep -m1 '"event":"start"' "$work/serve.log" 2>/dev/null | sed -E 's/.*"address":"[^"]*:([0-9]+)".*/\1/' || true)"
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || { cat "$work/serve.log" >&2; exit 1; }
base="http://127.0.0.1:$port"
auth=(-H "Authorization: Bearer $token")
group="$(curl -sf "${auth[@]}" "$base/v1/groups?limit=1000" | python3 -c 'import json,sys; g=json.load(sys.stdin)["groups"]; print(next((x["groupKey"] for x in g if x["apple"]), g[0]["groupKey"]))')"
member="$(curl -sf "${auth[@]}" "$base/v1/groups/$group" | python3 -c 'import json,sys; m=json.load(sys.stdin)["members"]; print(next(x["appTransactionId"] or x["originalTransactionId"] for x in m))')"
line="$(grep -m1 signedPayload "$held")"
envelope="$(grep -m1 apiResponse "$held")"
printf '%s' "$envelope" > "$work/envelope.line"

capture() { # name method path [curl args…]
  local name="$1" method="$2" path="$3"; shift 3
  curl -s -X "$method" "$@" "$base$path" > "$work/$name.json"
  echo "$name" >> "$work/names"
}
capture appended POST /notifications --data-binary "$line"
capture duplicate POST /notifications --data-binary "$line"
capture quarantined POST /notifications --data-binary '{"signedPayload": "not a JWS"}'
capture health GET /healthz
capture ready GET /readyz
capture groupsPage GET "/v1/groups?limit=1" "${auth[@]}"
capture changes GET "/v1/changes?after=0&limit=2" "${auth[@]}"
capture cursorPastHead GET "/v1/changes?after=999999" "${auth[@]}"
capture group GET "/v1/groups/$group" "${auth[@]}"
capture member GET "/v1/members/$member" "${auth[@]}"
capture entitlements GET "/v1/entitlements/$member?asOf=2026-10-15T00:00:00Z" "${auth[@]}"
capture replay GET "/v1/groups/$group/replay?from=2026-10-01&to=2026-10-03" "${auth[@]}"
capture diffKnownAt GET "/v1/groups/$group/diff?knownAt=2026-10-01&knownAt=now" "${auth[@]}"
capture diffApple GET "/v1/groups/$group/diff?against=apple" "${auth[@]}"
capture audit GET "/v1/groups/$group/audit" "${auth[@]}"
capture notFound GET "/v1/groups/no-such-group" "${auth[@]}"
capture unknownParameter GET "/v1/groups/$group?asof=2026-11-01" "${auth[@]}"
capture epochSeconds GET "/v1/groups/$group?asOf=1730000000" "${auth[@]}"
capture unauthorized GET "/v1/groups/$group"
capture forbidden POST "/v1/groups/$group/seats" "${auth[@]}" --data-binary '{"memberRef": "member-42"}'
capture recordAppended POST /v1/api-responses "${auth[@]}" --data-binary "$envelope"
capture recordDuplicate POST /v1/api-responses "${auth[@]}" --data-binary "$envelope"
capture recordEnvironmentMismatch POST /v1/api-responses "${auth[@]}" --data-binary "${envelope/\"environment\":\"Sandbox\"/\"environment\":\"Production\"}"
capture recordMalformed POST /v1/api-responses "${auth[@]}" --data-binary '{"apiResponse": {"endpoint": "ClaimSeat"'
# Last, so the captures above do not see its event: the held stream's first transaction, as the
# app would send it to its server (the same signed value the webhook's notification carried).
storekit="$(python3 - "$line" <<'PY'
import base64, json, sys
jws = json.loads(sys.argv[1])["signedPayload"]
part = jws.split(".")[1]
payload = json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
print(json.dumps({"storeKit": {"userId": "u-42", "signedTransaction": payload["data"]["signedTransactionInfo"]}}))
PY
)"
capture storeKitAppended POST /v1/storekit -H "Authorization: Bearer $app_token" --data-binary "$storekit"
capture storeKitDuplicate POST /v1/storekit -H "Authorization: Bearer $app_token" --data-binary "$storekit"
capture storeKitRefused POST /v1/storekit -H "Authorization: Bearer $app_token" --data-binary '{"storeKit": {"userId": "", "signedTransaction": "eyJ…"}}'

python3 - "$work" <<'PY'
import json, sys, pathlib
work = pathlib.Path(sys.argv[1])
names = (work / "names").read_text().split()
examples = {name: json.loads((work / f"{name}.json").read_text()) for name in names}
examples["health"]["commit"] = "0000000"
examples["recordEnvelope"] = json.loads((work / "envelope.line").read_text())
print(json.dumps(examples, indent=2, sort_keys=True, ensure_ascii=False))
PY
