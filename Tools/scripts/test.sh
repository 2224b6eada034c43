#!/usr/bin/env bash
# The whole suite (what `make test` runs): system packages, build, `swift test`, then Apple's own
# signed test vectors through the CLI. Exit status 0 only when every step passed.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash Tools/scripts/install-system-packages.sh test

echo "== swift build"
swift build 2>&1 | tail -n 3
test "${PIPESTATUS[0]}" -eq 0

echo "== swift test (full log: ${TMPDIR:-/tmp}/seatledger-swift-test.log)"
log="${TMPDIR:-/tmp}/seatledger-swift-test.log"
set +e
swift test 2>&1 | tee "$log" | grep -E "^(Test Suite|Executed|✔ Test run|✘ Test run|.*error:)|recorded an issue|failed"
status="${PIPESTATUS[0]}"
set -e
test "$status" -eq 0

echo "== conformance: Apple's test vectors through the CLI"
bash Tools/scripts/apple-conformance.sh "$(swift build --show-bin-path)/seatledger"
