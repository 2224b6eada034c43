#!/usr/bin/env bash
# Regenerates Events/scenarios/<name>.ndjson and <name>.expected.json for every built-in
# lifecycle of seatledger-sim (seed 0, start 2026-10-01T00:00:00Z, each built-in in its own
# identifier block). Streams are compared by decoded content, so an unchanged lifecycle keeps
# its committed bytes even though ECDSA signatures differ on every run.
#
#   Tools/scripts/regenerate-scenarios.sh            # rewrite what changed
#   Tools/scripts/regenerate-scenarios.sh --check    # exit 1 if anything drifted
set -euo pipefail
cd "$(dirname "$0")/../.."
mode=--regenerate
if [[ "${1:-}" == "--check" ]]; then mode=--check; fi
exec swift run ${SCRATCH_PATH:+--scratch-path "$SCRATCH_PATH"} seatledger-sim "$mode" Events/scenarios
