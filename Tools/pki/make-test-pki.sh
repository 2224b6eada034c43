#!/usr/bin/env bash
# Generates SeatLedger's test PKI, shaped like Apple's App Store signing chain.
#
#   Tools/pki/make-test-pki.sh [output-dir]      (default: the directory of this script)
#
# Layout (file names are fixed; key material is fresh on every run):
#   main chain     root (P-384, self-signed, SHA-384) -> intermediate (P-384, Apple WWDR OID)
#                  -> leaf (P-256, Apple receipt-signing OID), valid 2024-01-01 .. 2036-01-01
#   no-leaf-oid-   leaf under the main intermediate without 1.2.840.113635.100.6.11.1
#   no-int-oid-    intermediate under the main root without 1.2.840.113635.100.6.2.1, plus a leaf
#   expired-       leaf under the main intermediate valid only 2024-01-01 .. 2024-06-01
#   rogue-         untrusted impostor root/intermediate/leaf with the same subject names and OIDs
#   p256-          root and intermediate with P-256 keys, everything signed with SHA-256
# Only leaf private keys are kept (PKCS#8 PEM); CA keys live in a temp dir and are discarded.
set -euo pipefail

OUT="${1:-$(cd "$(dirname "$0")" && pwd)}"
command -v openssl >/dev/null || { echo "openssl not found" >&2; exit 1; }
mkdir -p "$OUT"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

START=20240101000000Z
END=20360101000000Z
SERIAL=4096

cat >"$WORK/ca.cnf" <<'EOF'
[ ca ]
default_ca = test_ca

[ test_ca ]
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

[ v3_intermediate_no_oid ]
basicConstraints       = critical, CA:true, pathlen:0
keyUsage               = critical, keyCertSign, cRLSign
subjectKeyIdentifier   = hash
authorityKeyIdentifier = keyid

# Like Apple's leaves: no subject/authority key identifiers.
[ v3_leaf ]
basicConstraints = critical, CA:false
keyUsage         = critical, digitalSignature
subjectKeyIdentifier   = none
authorityKeyIdentifier = none
1.2.840.113635.100.6.11.1 = DER:0500

[ v3_leaf_no_oid ]
basicConstraints = critical, CA:false
keyUsage         = critical, digitalSignature
subjectKeyIdentifier   = none
authorityKeyIdentifier = none
EOF

newkey() { # curve outfile
    openssl genpkey -algorithm EC -pkeyopt "ec_paramgen_curve:$1" -pkeyopt ec_param_enc:named_curve -out "$2" 2>/dev/null
}

# issue NAME SUBJECT CURVE EXT DIGEST START END ISSUER_NAME|self
# Writes $WORK/NAME.key and $WORK/NAME.pem.
issue() {
    local name=$1 subject=$2 curve=$3 ext=$4 md=$5 start=$6 end=$7 issuer=$8
    local ca="$WORK/ca-$name"
    mkdir -p "$ca/newcerts"
    : >"$ca/index.txt"
    SERIAL=$((SERIAL + 1))
    printf '%X\n' "$SERIAL" >"$ca/serial"
    newkey "$curve" "$WORK/$name.key"
    CA_DIR="$ca" openssl req -new -config "$WORK/ca.cnf" -key "$WORK/$name.key" -subj "$subject" -out "$WORK/$name.csr"
    local signer=()
    if [[ $issuer == self ]]; then
        signer=(-selfsign -keyfile "$WORK/$name.key")
    else
        signer=(-cert "$WORK/$issuer.pem" -keyfile "$WORK/$issuer.key")
    fi
    CA_DIR="$ca" openssl ca -batch -notext -preserveDN -config "$WORK/ca.cnf" -extensions "$ext" -md "$md" \
        -startdate "$start" -enddate "$end" "${signer[@]}" -in "$WORK/$name.csr" -out "$WORK/$name.pem" 2>/dev/null
}

ROOT_DN="/CN=SeatLedger Test Root CA/OU=Test Certification Authority/O=SeatLedger Test/C=US"
INT_DN="/CN=SeatLedger Test Intermediate CA/OU=Test Certification Authority/O=SeatLedger Test/C=US"
LEAF_DN="/CN=SeatLedger Test Signing Leaf/OU=Test App Store/O=SeatLedger Test/C=US"

# Main chain.
issue root "$ROOT_DN" secp384r1 v3_root sha384 $START $END self
issue intermediate "$INT_DN" secp384r1 v3_intermediate sha384 $START $END root
issue leaf "$LEAF_DN" prime256v1 v3_leaf sha384 $START $END intermediate
# (a) leaf without the Apple leaf OID.
issue no-leaf-oid-leaf "/CN=SeatLedger Test Leaf Without OID/O=SeatLedger Test/C=US" prime256v1 v3_leaf_no_oid sha384 $START $END intermediate
# (b) intermediate without the Apple intermediate OID, and a proper leaf under it.
issue no-int-oid-intermediate "/CN=SeatLedger Test Intermediate Without OID/O=SeatLedger Test/C=US" secp384r1 v3_intermediate_no_oid sha384 $START $END root
issue no-int-oid-leaf "/CN=SeatLedger Test Leaf Under Intermediate Without OID/O=SeatLedger Test/C=US" prime256v1 v3_leaf sha384 $START $END no-int-oid-intermediate
# (c) leaf valid only for the first five months of 2024.
issue expired-leaf "/CN=SeatLedger Test Short-Lived Leaf/O=SeatLedger Test/C=US" prime256v1 v3_leaf sha384 $START 20240601000000Z intermediate
# (d) impostor chain: same names and OIDs, unrelated keys.
issue rogue-root "$ROOT_DN" secp384r1 v3_root sha384 $START $END self
issue rogue-intermediate "$INT_DN" secp384r1 v3_intermediate sha384 $START $END rogue-root
issue rogue-leaf "$LEAF_DN" prime256v1 v3_leaf sha384 $START $END rogue-intermediate
# (e) all-P-256 chain signed with SHA-256.
issue p256-root "/CN=SeatLedger Test P-256 Root CA/O=SeatLedger Test/C=US" prime256v1 v3_root sha256 $START $END self
issue p256-intermediate "/CN=SeatLedger Test P-256 Intermediate CA/O=SeatLedger Test/C=US" prime256v1 v3_intermediate sha256 $START $END p256-root
issue p256-leaf "/CN=SeatLedger Test P-256 Signing Leaf/O=SeatLedger Test/C=US" prime256v1 v3_leaf sha256 $START $END p256-intermediate

# Sanity: every chain must verify (at a 2025 date) before anything is written.
at=$(date -d 2025-06-01 +%s)
openssl verify -attime "$at" -CAfile "$WORK/root.pem" -untrusted "$WORK/intermediate.pem" "$WORK/leaf.pem" >/dev/null
openssl verify -attime "$at" -CAfile "$WORK/p256-root.pem" -untrusted "$WORK/p256-intermediate.pem" "$WORK/p256-leaf.pem" >/dev/null
openssl verify -attime "$at" -CAfile "$WORK/rogue-root.pem" -untrusted "$WORK/rogue-intermediate.pem" "$WORK/rogue-leaf.pem" >/dev/null

certs=(root intermediate leaf no-leaf-oid-leaf no-int-oid-intermediate no-int-oid-leaf expired-leaf
       rogue-root rogue-intermediate rogue-leaf p256-root p256-intermediate p256-leaf)
for c in "${certs[@]}"; do
    openssl x509 -in "$WORK/$c.pem" -out "$OUT/$c.pem"
done
for c in root rogue-root p256-root; do
    openssl x509 -in "$WORK/$c.pem" -outform DER -out "$OUT/$c.der"
done
for c in leaf no-leaf-oid-leaf no-int-oid-leaf expired-leaf rogue-leaf p256-leaf; do
    openssl pkcs8 -topk8 -nocrypt -in "$WORK/$c.key" -out "$OUT/$c.key"
done
# A throwaway P-256 key encrypted with the passphrase "x": what a key loader must refuse
# (without prompting for a passphrase), unlike App Store Connect's unencrypted .p8.
openssl ecparam -name prime256v1 -genkey -noout -out "$WORK/encrypted.key"
openssl pkcs8 -topk8 -in "$WORK/encrypted.key" -out "$OUT/encrypted-p256-key.p8" -passout pass:x

# README with the facts of this generation.
fp() { openssl x509 -in "$OUT/$1.pem" -outform DER | openssl dgst -sha256 -r | cut -d' ' -f1; }
{
    cat <<'EOF'
# SeatLedger test PKI

Generated by `Tools/pki/make-test-pki.sh` (bash + OpenSSL CLI). **Test material only** — never
configure these roots in production. Regenerate (fresh keys, same names and validity) with:

```sh
Tools/pki/make-test-pki.sh            # writes into Tools/pki/
```

Shaped like Apple's App Store chain: leaf certificates carry the receipt-signing extension
1.2.840.113635.100.6.11.1 and intermediates 1.2.840.113635.100.6.2.1 (both non-critical, value
ASN.1 NULL); leaves have no subject/authority key identifiers, like Apple's. Only leaf private
keys (PKCS#8 PEM, unencrypted) are kept. `JWSSigner.loadTestPKI(directory:prefix:)` reads
`<prefix>leaf.key`, `<prefix>leaf.pem`, `<prefix>intermediate.pem` and `<prefix>root.pem`,
falling back to the unprefixed intermediate/root when the prefixed file does not exist.

| prefix | files | chain | keys / signatures | validity |
|---|---|---|---|---|
| (none) | `root.pem` `root.der` `intermediate.pem` `leaf.pem` `leaf.key` | root → intermediate (OID) → leaf (OID) | P-384 / P-384 / P-256 leaf, ecdsa-with-SHA384 | 2024-01-01 – 2036-01-01 |
| `no-leaf-oid-` | `no-leaf-oid-leaf.pem` `no-leaf-oid-leaf.key` | main root → main intermediate → leaf **without** leaf OID | P-256 leaf, SHA-384 | 2024-01-01 – 2036-01-01 |
| `no-int-oid-` | `no-int-oid-intermediate.pem` `no-int-oid-leaf.pem` `no-int-oid-leaf.key` | main root → intermediate **without** intermediate OID → leaf (OID) | P-384 / P-256, SHA-384 | 2024-01-01 – 2036-01-01 |
| `expired-` | `expired-leaf.pem` `expired-leaf.key` | main root → main intermediate → short-lived leaf (OID) | P-256 leaf, SHA-384 | leaf **2024-01-01 – 2024-06-01** |
| `rogue-` | `rogue-root.pem` `rogue-root.der` `rogue-intermediate.pem` `rogue-leaf.pem` `rogue-leaf.key` | impostor: same subject names and OIDs as the main chain, unrelated keys — untrusted | P-384 / P-384 / P-256, SHA-384 | 2024-01-01 – 2036-01-01 |
| `p256-` | `p256-root.pem` `p256-root.der` `p256-intermediate.pem` `p256-leaf.pem` `p256-leaf.key` | P-256 root → P-256 intermediate (OID) → leaf (OID) | all P-256, ecdsa-with-SHA256 | 2024-01-01 – 2036-01-01 |
| `encrypted-` | `encrypted-p256-key.p8` | a P-256 key alone, PKCS#8 **encrypted** (passphrase `x`): key loaders must refuse it without prompting | P-256 | — |

Validity instants are 00:00:00 UTC.

## Fingerprints of this generation (SHA-256 of the DER certificate)

| certificate | SHA-256 |
|---|---|
EOF
    for c in root intermediate leaf rogue-root p256-root; do
        echo "| \`$c\` | \`$(fp "$c")\` |"
    done
    echo
    echo "Subjects:"
    echo
    for c in root intermediate leaf; do
        echo "- \`$c\`: $(openssl x509 -in "$OUT/$c.pem" -noout -subject -nameopt RFC2253,-dn_rev | sed 's/^subject=//')"
    done
} >"$OUT/README.md"

echo "test PKI written to $OUT"
