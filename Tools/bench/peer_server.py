"""The Python peer receiver (Tools/bench/run step 2b): the webhook a team would write instead of
`seatledger serve`. A minimal WSGI app, served by gunicorn (see Tools/bench/README.md for why
gunicorn and how many workers):

  POST /notifications  {"signedPayload": "..."}  as Apple posts it
    1. verify and decode with Apple's app-store-server-library (SignedDataVerifier, every check on,
       online checks off as in peer.py): the notification, then its nested signed transaction
       and renewal info;
    2. insert the raw body and the decoded fields into SQLite (WAL, synchronous=FULL, one
       transaction per request: it must be durable before the 200); a notification already
       stored (same notificationUUID, Apple's retry) is not stored twice;
    3. answer 200 (400 when the body is not a verifiable notification).

Settings come from the environment: PEER_DB (the SQLite file), PEER_ROOT (the root certificate,
DER), PEER_BUNDLE_ID (default com.example.reps). `python peer_server.py --init DB` creates the
schema before the workers start, so they do not race to create it.
"""
import json
import os
import sqlite3
import sys
import time

SCHEMA = """
CREATE TABLE IF NOT EXISTS notifications (
    id                      INTEGER PRIMARY KEY,
    notification_uuid       TEXT NOT NULL UNIQUE,
    notification_type       TEXT,
    subtype                 TEXT,
    signed_date             INTEGER,
    environment             TEXT,
    bundle_id               TEXT,
    original_transaction_id TEXT,
    transaction_id          TEXT,
    product_id              TEXT,
    purchase_date           INTEGER,
    expires_date            INTEGER,
    quantity                INTEGER,
    auto_renew_status       INTEGER,
    auto_renew_product_id   TEXT,
    received_at             REAL NOT NULL,
    raw                     BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS notifications_original_transaction_id ON notifications (original_transaction_id);
"""

INSERT = """
INSERT OR IGNORE INTO notifications (notification_uuid, notification_type, subtype, signed_date, environment,
    bundle_id, original_transaction_id, transaction_id, product_id, purchase_date, expires_date, quantity,
    auto_renew_status, auto_renew_product_id, received_at, raw)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""

MAX_BODY = 1 << 20


def connect(path):
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = FULL")
    db.execute("PRAGMA busy_timeout = 30000")     # the other workers' commits
    return db


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "--init":
    connect(sys.argv[2]).executescript(SCHEMA)
    sys.exit(0)

from appstoreserverlibrary.models.Environment import Environment                      # noqa: E402
from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier, VerificationException  # noqa: E402

with open(os.environ["PEER_ROOT"], "rb") as root_file:
    _root = root_file.read()
verifier = SignedDataVerifier([_root], False, Environment.SANDBOX, os.environ.get("PEER_BUNDLE_ID", "com.example.reps"))
# One SQLite connection per worker process, opened in the worker: with gunicorn's --preload this
# module is imported in the master before it forks, and a SQLite connection must not cross a fork.
_db = None
_db_pid = None


def database():
    global _db, _db_pid
    if _db is None or _db_pid != os.getpid():
        _db, _db_pid = connect(os.environ["PEER_DB"]), os.getpid()
    return _db


def answer(start_response, status, obj):
    body = json.dumps(obj).encode()
    start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
    return [body]


def app(environ, start_response):
    if environ.get("PATH_INFO") != "/notifications":
        return answer(start_response, "404 Not Found", {"error": "no route " + environ.get("PATH_INFO", "")})
    if environ.get("REQUEST_METHOD") != "POST":
        return answer(start_response, "405 Method Not Allowed", {"error": "use POST"})
    try:
        length = int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = -1
    if length < 0 or length > MAX_BODY:
        return answer(start_response, "413 Payload Too Large", {"error": "body over %d bytes" % MAX_BODY})
    raw = environ["wsgi.input"].read(length)
    try:
        notification = verifier.verify_and_decode_notification(json.loads(raw)["signedPayload"])
        data = notification.data
        tx = renewal = None
        if data is not None and data.signedTransactionInfo:
            tx = verifier.verify_and_decode_signed_transaction(data.signedTransactionInfo)
        if data is not None and data.signedRenewalInfo:
            renewal = verifier.verify_and_decode_renewal_info(data.signedRenewalInfo)
    except (ValueError, KeyError, TypeError, VerificationException) as e:
        return answer(start_response, "400 Bad Request", {"error": "not a verifiable notification: %r" % e})
    row = (
        notification.notificationUUID, notification.rawNotificationType, notification.rawSubtype, notification.signedDate,
        data.rawEnvironment if data else None, data.bundleId if data else None,
        tx.originalTransactionId if tx else None, tx.transactionId if tx else None, tx.productId if tx else None,
        tx.purchaseDate if tx else None, tx.expiresDate if tx else None, tx.quantity if tx else None,
        renewal.rawAutoRenewStatus if renewal else None, renewal.autoRenewProductId if renewal else None,
        time.time(), raw,
    )
    # Durable before the 200: one transaction, committed (WAL fsync, synchronous=FULL).
    db = database()
    db.execute("BEGIN IMMEDIATE")
    try:
        stored = db.execute(INSERT, row).rowcount
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return answer(start_response, "200 OK", {"result": "appended" if stored else "duplicate"})
