#!/usr/bin/env bash
# The HTTP API against its OpenAPI document (Events/api/openapi.json, served at GET /openapi.json):
#   1. installs openapi-spec-validator and schemathesis (pinned) into a venv under /tmp;
#   2. builds the demo ledger, adds a token of scopes read and record, starts `serve` on a
#      loopback port 0 (the port is read from the JSON start line on stderr);
#   3. checks that the served document is the committed one and validates it (OpenAPI 3.1), and
#      that every example in it matches its schema;
#   4. runs schemathesis against the live service with a bounded number of examples and a time
#      limit, every check on: no 5xx, every status, content type, header and body as documented;
#   5. stops serve (SIGTERM; it must exit 0).
#
#   bash Tools/scripts/api-contract-check.sh "$(swift build --show-bin-path)/seatledger"
#
# One worker: with two, CPython 3.11 raised "SystemError: AST constructor recursion depth mismatch"
# inside schemathesis (a runtime error of the tool, not an answer of the service).
# SEATLEDGER_API_CHECK_VENV (default /tmp/seatledger-api-check-venv) is reused between runs;
# SEATLEDGER_API_CHECK_EXAMPLES (default 25 per operation) and SEATLEDGER_API_CHECK_SECONDS
# (default 90) bound the schemathesis run.
set -euo pipefail
bin="${1:?usage: api-contract-check.sh BIN}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
venv="${SEATLEDGER_API_CHECK_VENV:-/tmp/seatledger-api-check-venv}"
examples="${SEATLEDGER_API_CHECK_EXAMPLES:-25}"
seconds="${SEATLEDGER_API_CHECK_SECONDS:-90}"
work="$(mktemp -d /tmp/seatledger-api-check.XXXXXX)"
serve_pid=""
cleanup() {
  if [ -n "$serve_pid" ] && kill -0 "$serve_pid" 2>/dev/null; then kill -KILL "$serve_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

if [ ! -x "$venv/bin/schemathesis" ] || [ ! -x "$venv/bin/openapi-spec-validator" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "openapi-spec-validator==0.9.0" "schemathesis==4.32.5"
fi

"$bin" demo --keep "$work/demo.sqlite" > /dev/null
token="$("$bin" token add api-contract-check --scope read --scope link --scope record --db "$work/demo.sqlite" 2> /dev/null)"
"$bin" serve --db "$work/demo.sqlite" --listen 127.0.0.1:0 2> "$work/serve.log" &
serve_pid=$!
port=""
for _ in $(seq 1 300); do
  port="$(grep -m1 '"event":"start"' "$work/serve.log" 2>/dev/null | sed -E 's/.*"address":"[^"]*:([0-9]+)".*/\1/' || true)"
  [ -n "$port" ] && break
  kill -0 "$serve_pid" 2>/dev/null || break
  sleep 0.1
done
[ -n "$port" ] || { echo "serve did not start:" >&2; cat "$work/serve.log" >&2; exit 1; }
base="http://127.0.0.1:$port"
echo "serve on $base (pid $serve_pid)"

curl -sf "$base/openapi.json" -o "$work/openapi.json"
cmp "$work/openapi.json" "$root/Events/api/openapi.json" \
  || { echo "GET /openapi.json is not Events/api/openapi.json (regenerate: SEATLEDGER_UPDATE_GOLDEN=1 swift test --filter OpenAPIDocumentTests)" >&2; exit 1; }
"$venv/bin/openapi-spec-validator" "$work/openapi.json"
"$venv/bin/python" - "$work/openapi.json" <<'PY'
# Every example of a request or response body matches its schema (JSON Schema 2020-12, refs into the document).
import json, sys
from jsonschema import Draft202012Validator
from referencing import Registry
from referencing.jsonschema import DRAFT202012
document = json.load(open(sys.argv[1]))
registry = Registry().with_resource("urn:openapi", DRAFT202012.create_resource(document))
checked = 0
for path, item in document["paths"].items():
    for method, operation in item.items():
        bodies = [("request", operation.get("requestBody", {}))] + [(status, response) for status, response in operation["responses"].items()]
        for where, body in bodies:
            for media, content in body.get("content", {}).items():
                schema = json.loads(json.dumps(content["schema"]).replace('"#/components', '"urn:openapi#/components'))
                validator = Draft202012Validator(schema, registry=registry)
                for name, example in content.get("examples", {}).items():
                    errors = list(validator.iter_errors(example["value"]))
                    if errors:
                        sys.exit(f"{method.upper()} {path} {where} {media} example {name!r}: {errors[0].message} at {list(errors[0].absolute_path)}")
                    checked += 1
print(f"{checked} examples match their schemas")
PY

# Every check, positive and negative data; --max-examples bounds each operation, --max-time the run.
# The whole report: /tmp/seatledger-api-check.log.
set +e
cd "$work"  # schemathesis keeps its example database in ./.schemathesis
"$venv/bin/schemathesis" --config-file "$root/Tools/scripts/api-contract-check.toml" run "$base/openapi.json" \
  --checks all \
  --header "Authorization: Bearer $token" \
  --max-examples "$examples" \
  --max-time "$seconds" \
  --request-timeout 10 \
  --seed 50 \
  --workers 1 \
  --suppress-health-check all > /tmp/seatledger-api-check.log 2>&1
status=$?
cd "$root"
set -e
# The failures (each with its request and a curl line to reproduce it) and the summary.
sed -n '/^=* FAILURES =*$/,$p' /tmp/seatledger-api-check.log | head -n 400
grep -q '^=* FAILURES =*$' /tmp/seatledger-api-check.log || tail -n 30 /tmp/seatledger-api-check.log
if grep -qE '"status":5[0-9]{2}[,}]' "$work/serve.log"; then
  echo "serve answered a 5xx:" >&2; grep -E '"status":5[0-9]{2}[,}]' "$work/serve.log" | head -n 5 >&2; status=1
fi

kill -TERM "$serve_pid"
wait "$serve_pid" || { echo "serve did not exit 0 after SIGTERM" >&2; status=1; }
serve_pid=""
exit "$status"
