#!/usr/bin/env bash
# The whole suite (what `make test` runs): system packages, build, the Python reference receiver
# for webhook signatures, `swift test`, then Apple's own signed test vectors through the CLI.
# Exit status 0 only when every step passed.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash Tools/scripts/install-system-packages.sh test

echo "== swift build"
swift build 2>&1 | tail -n 3
test "${PIPESTATUS[0]}" -eq 0

# The reference implementation of Standard Webhooks (PyPI `standardwebhooks`, pinned) for
# StandardWebhooksTests and WebhookDeliveryTests (Tools/scripts/webhook-receiver.py), in a venv
# reused between runs; the tests make the same venv themselves when run without
# SEATLEDGER_STANDARDWEBHOOKS_PYTHON.
standardwebhooks_version=1.0.0  # the pin of StandardWebhooksPython.version in the tests
echo "== standardwebhooks $standardwebhooks_version from PyPI (reference receiver for the webhook signature tests)"
standardwebhooks_venv="${SEATLEDGER_STANDARDWEBHOOKS_VENV:-/tmp/seatledger-standardwebhooks-venv}"
if ! "$standardwebhooks_venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('standardwebhooks') != '$standardwebhooks_version')" 2>/dev/null; then
  python3 -m venv "$standardwebhooks_venv"
  "$standardwebhooks_venv/bin/pip" install --quiet --disable-pip-version-check "standardwebhooks==$standardwebhooks_version"
fi
export SEATLEDGER_STANDARDWEBHOOKS_PYTHON="$standardwebhooks_venv/bin/python"

echo "== swift test (full log: ${TMPDIR:-/tmp}/seatledger-swift-test.log)"
log="${TMPDIR:-/tmp}/seatledger-swift-test.log"
set +e
swift test 2>&1 | tee "$log" | grep -E "^(Test Suite|Executed|✔ Test run|✘ Test run|.*error:)|recorded an issue|failed"
status="${PIPESTATUS[0]}"
set -e
test "$status" -eq 0

echo "== conformance: Apple's test vectors through the CLI"
bash Tools/scripts/apple-conformance.sh "$(swift build --show-bin-path)/seatledger"
