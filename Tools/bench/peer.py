#!/usr/bin/env python3
"""Peer benchmark: Apple's app-store-server-library (PyPI) verifying and decoding the same
notifications SeatLedger ingests: for every line, verify_and_decode_notification on the
signedPayload, then verify_and_decode_signed_transaction and verify_and_decode_renewal_info on
the nested JWS. Single process, single thread (what a team running the library gets).

Prints one JSON object: peer_notifications, peer_seconds, peer_notifications_per_s, peer_failures,
peer_first_failure (status, cause, traceback), peer_status ("ok" or why not), ...
"""
import argparse
import json
import sys
import time
import traceback


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ndjson")
    ap.add_argument("--root", required=True, help="root certificate (DER)")
    ap.add_argument("--bundle-id", default="com.example.reps")
    ap.add_argument("--limit", type=int, default=0, help="verify at most N notifications (0: all)")
    ap.add_argument("--warmup", type=int, default=20, help="verify the first N once, untimed, before the timed pass")
    ap.add_argument("--prefix", default="peer_", help="prefix of the output keys")
    args = ap.parse_args()

    from importlib.metadata import version
    from appstoreserverlibrary.models.Environment import Environment
    from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier, VerificationException

    with open(args.root, "rb") as f:
        root = f.read()
    verifier = SignedDataVerifier([root], False, Environment.SANDBOX, args.bundle_id)

    payloads = []
    with open(args.ndjson, "rb") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            obj = json.loads(line)
            if "signedPayload" not in obj:
                continue
            payloads.append(obj["signedPayload"])
            if args.limit and len(payloads) >= args.limit:
                break

    def verify_one(signed):
        n = verifier.verify_and_decode_notification(signed)
        count = 1
        data = n.data
        if data is not None and data.signedTransactionInfo:
            verifier.verify_and_decode_signed_transaction(data.signedTransactionInfo)
            count += 1
        if data is not None and data.signedRenewalInfo:
            verifier.verify_and_decode_renewal_info(data.signedRenewalInfo)
            count += 1
        return count

    # Warm-up (imports, cattrs converters), untimed; failures here are counted in the timed pass.
    for signed in payloads[: args.warmup]:
        try:
            verify_one(signed)
        except VerificationException:
            pass

    failures = 0
    first_failure = None
    jws = 0
    started = time.perf_counter()
    for signed in payloads:
        try:
            jws += verify_one(signed)
        except VerificationException as e:
            failures += 1
            if first_failure is None:
                cause = e.__cause__
                first_failure = {
                    "status": str(e.status),
                    "cause": repr(cause) if cause is not None else None,
                    "traceback": "".join(traceback.format_exception(cause)) if cause is not None else None,
                }
    seconds = time.perf_counter() - started
    ok = len(payloads) - failures
    result = {
        "peer_library": "app-store-server-library " + version("app-store-server-library"),
        "peer_python": sys.version.split()[0],
        "peer_notifications": len(payloads),
        "peer_verified": ok,
        "peer_jws_verified": jws,
        "peer_failures": failures,
        "peer_first_failure": first_failure,
        "peer_seconds": round(seconds, 3),
        "peer_notifications_per_s": round(ok / seconds, 1) if seconds > 0 and ok > 0 else None,
        "peer_status": "ok" if failures == 0 and ok > 0 else
                       "REJECTED %d of %d: %s" % (failures, len(payloads), first_failure["cause"] if first_failure else "nothing to verify"),
    }
    print(json.dumps({args.prefix + k[len("peer_"):]: v for k, v in result.items()}))

if __name__ == "__main__":
    main()
