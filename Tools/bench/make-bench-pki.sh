#!/usr/bin/env bash
# A benchmark signing chain shaped like Tools/pki's main chain (P-384 root -> P-384 intermediate
# with the Apple WWDR OID -> P-256 leaf with the Apple receipt-signing OID, ecdsa-with-SHA384,
# valid 2024-01-01 .. 2036-01-01), with ONE difference: the leaf carries an Authority Key
# Identifier.
#
# Why: Apple's Python app-store-server-library verifies chains with X509_V_FLAG_X509_STRICT, and
# OpenSSL >= 3.0 in strict mode refuses a non-self-issued certificate without an AKID
# (error 85 at depth 0, X509_V_ERR_MISSING_AUTHORITY_KEY_IDENTIFIER). Tools/pki's leaves have none
# (like the leaves of Apple's own test vectors, which Apple's own test suite verifies with strict
# checks turned off), so the peer rejects every Tools/pki-signed payload. With this chain both
# SeatLedger and the peer verify the very same bytes with every check on.
#
#   Tools/bench/make-bench-pki.sh OUT_DIR    writes root.pem root.der intermediate.pem leaf.pem leaf.key
set -euo pipefail
OUT="${1:?usage: make-bench-pki.sh OUT_DIR}"
mkdir -p "$OUT"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

cat >"$WORK/ca.cnf" <<'CNF'
[ ca ]
default_ca = bench_ca

[ bench_ca ]
dir             = ${ENV::CA_DIR}
database        = $dir/index.txt
new_certs_dir   = $dir/newcerts
serial          = $dir/serial
policy          = policy_any
unique_subject  = no
copy_extensions = none
email_in_dn     = no

[ policy_any ]
countryName            = optional
organizationName       = optional
organizationalUnitName = optional
commonName             = supplied

[ req ]
distinguished_name = req_dn
prompt             = no
[ req_dn ]
CN = placeholder

[ v3_root ]
basicConstraints     = critical, CA:true
keyUsage             = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash

[ v3_intermediate ]
basicConstraints       = critical, CA:true, pathlen:0
keyUsage               = critical, keyCertSign, cRLSign
subjectKeyIdentifier   = hash
authorityKeyIdentifier = keyid
1.2.840.113635.100.6.2.1 = DER:0500

# The one difference from Tools/pki: the leaf names its issuer's key (AKID).
[ v3_leaf ]
basicConstraints       = critical, CA:false
keyUsage               = critical, digitalSignature
subjectKeyIdentifier   = none
authorityKeyIdentifier = keyid
1.2.840.113635.100.6.11.1 = DER:0500
CNF

SERIAL=8192
newkey() { openssl genpkey -algorithm EC -pkeyopt "ec_paramgen_curve:$1" -pkeyopt ec_param_enc:named_curve -out "$2" 2>/dev/null; }
# issue NAME SUBJECT CURVE EXT ISSUER|self
issue() {
    local name=$1 subject=$2 curve=$3 ext=$4 issuer=$5
    local ca="$WORK/ca-$name"
    mkdir -p "$ca/newcerts"
    : >"$ca/index.txt"
    SERIAL=$((SERIAL + 1))
    printf '%X\n' "$SERIAL" >"$ca/serial"
    newkey "$curve" "$WORK/$name.key"
    CA_DIR="$ca" openssl req -new -config "$WORK/ca.cnf" -key "$WORK/$name.key" -subj "$subject" -out "$WORK/$name.csr"
    local signer=()
    if [[ $issuer == self ]]; then signer=(-selfsign -keyfile "$WORK/$name.key"); else signer=(-cert "$WORK/$issuer.pem" -keyfile "$WORK/$issuer.key"); fi
    CA_DIR="$ca" openssl ca -batch -notext -preserveDN -config "$WORK/ca.cnf" -extensions "$ext" -md sha384 \
        -startdate 20240101000000Z -enddate 20360101000000Z "${signer[@]}" -in "$WORK/$name.csr" -out "$WORK/$name.pem" 2>/dev/null
}

issue root "/CN=SeatLedger Bench Root CA/OU=Test Certification Authority/O=SeatLedger Test/C=US" secp384r1 v3_root self
issue intermediate "/CN=SeatLedger Bench Intermediate CA/OU=Test Certification Authority/O=SeatLedger Test/C=US" secp384r1 v3_intermediate root
issue leaf "/CN=SeatLedger Bench Signing Leaf/OU=Test App Store/O=SeatLedger Test/C=US" prime256v1 v3_leaf intermediate

# Strict verification (what the peer does) must pass before anything is written.
at=$(date -d 2026-10-01 +%s)
openssl verify -x509_strict -attime "$at" -CAfile "$WORK/root.pem" -untrusted "$WORK/intermediate.pem" "$WORK/leaf.pem" >/dev/null
for c in root intermediate leaf; do openssl x509 -in "$WORK/$c.pem" -out "$OUT/$c.pem"; done
openssl x509 -in "$WORK/root.pem" -outform DER -out "$OUT/root.der"
openssl pkcs8 -topk8 -nocrypt -in "$WORK/leaf.key" -out "$OUT/leaf.key"
