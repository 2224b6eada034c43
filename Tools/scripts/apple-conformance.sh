#!/usr/bin/env bash
# Runs Apple's own signed test vectors (../shared/fixtures/apple-test-vectors, never copied into
# this repository) through `seatledger check` and compares each verdict with the results the
# fixture README lists. Prints one line per vector and "N passed, N failed"; exits 1 on a mismatch.
set -uo pipefail
bin="${1:?usage: apple-conformance.sh PATH/TO/seatledger}"
here="$(cd "$(dirname "$0")/../.." && pwd)"
vectors="${SEATLEDGER_SHARED:-$here/../shared}/fixtures/apple-test-vectors"
root_g3="${SEATLEDGER_SHARED:-$here/../shared}/fixtures/apple-roots/AppleRootCA-G3.cer"
[ -d "$vectors" ] || { echo "apple-conformance: $vectors not found" >&2; exit 2; }
trust=(--root-cert "$vectors/certs/testCA.der" --bundle-id com.example --environment Sandbox)

passed=0; failed=0
expect() { # name kind expected-code(or "verified") [extra args…]
  local name="$1" kind="$2" want="$3"; shift 3
  local out code
  out="$("$bin" check --json --kind "$kind" "$@" "$vectors/mock_signed_data/$name" 2>&1)"
  if printf '%s' "$out" | grep -q '"verified": true'; then code=verified
  else code="$(printf '%s' "$out" | sed -n 's/.*"errorCode": "\([a-z_0-9]*\)".*/\1/p' | head -n1)"; fi
  if [ "$code" = "$want" ]; then echo "ok    $name ($kind): $code"; passed=$((passed+1))
  else echo "FAIL  $name ($kind): expected $want, got ${code:-<nothing>}: $out"; failed=$((failed+1)); fi
}
expect testNotification notification verified "${trust[@]}"
expect transactionInfo transaction verified "${trust[@]}"
expect renewalInfo renewal verified "${trust[@]}"
expect wrongBundleId notification bundle_mismatch "${trust[@]}"
expect missingX5CHeaderClaim notification missing_x5c "${trust[@]}"
expect legacyTransaction notification not_jws "${trust[@]}"
expect testNotification notification chain_not_trusted --root-cert "$root_g3" --bundle-id com.example --environment Sandbox
echo "conformance: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
