#!/usr/bin/env python3
"""A local stand-in for Apple's App Store Server API, for SeatLedger's tests only.

Serves, on 127.0.0.1, the endpoints SeatLedger calls, from a JSON state file built by the test
out of real signed payloads (the test PKI); checks every request's ES256 JWT (signature with the
given public key, header, claims, expiry) and answers 401 otherwise. Faults can be scripted: a
status with headers and body (429 + Retry-After, 500, error bodies) or a delay (timeouts), each
for a number of matching requests. See README.md beside this file.

Usage: standin.py --state FILE --public-key PEM --issuer-id ID --key-id KID --bundle-id BID
                  [--port 0] [--groups-prefix ""] [--log FILE]
Prints "LISTENING <port>" on stdout once it accepts connections. Exits when its parent exits.
Needs Debian's python3-cryptography.
"""

import argparse
import base64
import json
import os
import signal
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, utils

PLACEHOLDER_GROUP = "900000000000000000"
PLACEHOLDER_MEMBER = "700000000000000000"
AUDIENCE = "appstoreconnect-v1"

LOCK = threading.Lock()
STATE = {}
FAULTS = []
REQUESTS = []
CLAIMS_BY_REQUEST = {}  # requestIdentifier -> (originalTransactionId, seatClaimId)
ARGS = None
PUBLIC_KEY = None


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def b64url_encode(data):
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def jws_payload(jws):
    """The decoded payload of a compact JWS (no verification: the test signed it)."""
    try:
        return json.loads(b64url_decode(jws.split(".")[1]))
    except Exception:  # noqa: BLE001 - a bad fixture is the test's problem; treat as empty
        return {}


def now_ms():
    return int(STATE.get("now", time.time() * 1000))


def error(status, name, message, code=None):
    body = {"errorMessage": f"{name}: {message}"}
    if code is not None:
        body["errorCode"] = code
    return status, {}, body


# --- JWT ---------------------------------------------------------------------------------

def check_jwt(header_value):
    """None when the bearer token is valid, else the reason."""
    if not header_value or not header_value.startswith("Bearer "):
        return "no bearer token"
    parts = header_value[len("Bearer "):].split(".")
    if len(parts) != 3:
        return "not a compact JWT"
    try:
        header = json.loads(b64url_decode(parts[0]))
        claims = json.loads(b64url_decode(parts[1]))
        signature = b64url_decode(parts[2])
    except Exception:  # noqa: BLE001
        return "undecodable JWT"
    if header.get("alg") != "ES256":
        return "alg is not ES256"
    if header.get("kid") != ARGS.key_id:
        return "wrong kid"
    if header.get("typ") != "JWT":
        return "typ is not JWT"
    if len(signature) != 64:
        return "signature is not 64 bytes"
    r = int.from_bytes(signature[:32], "big")
    s = int.from_bytes(signature[32:], "big")
    try:
        PUBLIC_KEY.verify(utils.encode_dss_signature(r, s), (parts[0] + "." + parts[1]).encode(),
                          ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        return "bad signature"
    if claims.get("iss") != ARGS.issuer_id:
        return "wrong iss"
    if claims.get("aud") != AUDIENCE:
        return "wrong aud"
    if claims.get("bid") != ARGS.bundle_id:
        return "wrong bid"
    iat, exp = claims.get("iat"), claims.get("exp")
    if not isinstance(iat, int) or not isinstance(exp, int):
        return "iat/exp missing"
    now = time.time()
    if iat > now + 60:
        return "iat in the future"
    if exp <= now:
        return "expired"
    if exp - iat > 3600:
        return "lifetime over 60 minutes"
    return None


# --- endpoints ---------------------------------------------------------------------------

def page_token(data):
    return b64url_encode(json.dumps(data, sort_keys=True).encode())


def read_token(token):
    try:
        return json.loads(b64url_decode(token))
    except Exception:  # noqa: BLE001
        return None


def notification_history(query, body):
    if not isinstance(body, dict) or not isinstance(body.get("startDate"), int) or not isinstance(body.get("endDate"), int):
        return error(400, "InvalidRequestError", "startDate and endDate are required")
    start, end = body["startDate"], body["endDate"]
    if start >= end:
        return error(400, "InvalidEndDateError", "endDate must follow startDate")
    days = 180 if STATE.get("environment") == "Production" else 30
    if start < now_ms() - days * 86_400_000:
        return error(400, "InvalidStartDateError", f"startDate is older than {days} days")
    only_failures = bool(body.get("onlyFailures"))
    wanted_type = body.get("notificationType")
    items = []
    for entry in STATE.get("notifications", []):
        payload = jws_payload(entry["signedPayload"])
        signed = payload.get("signedDate", 0)
        if not start <= signed < end:
            continue
        attempts = entry.get("sendAttempts", [])
        if only_failures and any(a.get("sendAttemptResult") == "SUCCESS" for a in attempts):
            continue
        if wanted_type and payload.get("notificationType") != wanted_type:
            continue
        items.append((signed, payload.get("notificationUUID", ""), entry))
    items.sort(key=lambda item: (item[0], item[1]))
    key = [start, end, only_failures, wanted_type]
    offset = 0
    if "paginationToken" in query:
        token = read_token(query["paginationToken"][0])
        if not token or token.get("k") != key:
            return error(400, "InvalidPaginationTokenError", "pagination token does not match this request")
        offset = token["o"]
    size = STATE.get("historyPageSize", 20)
    page = items[offset:offset + size]
    result = {"notificationHistory": [{"signedPayload": e["signedPayload"], "sendAttempts": e.get("sendAttempts", [])}
                                      for _, _, e in page],
              "hasMore": offset + size < len(items)}
    if result["hasMore"]:
        result["paginationToken"] = page_token({"o": offset + size, "k": key})
    return 200, {}, result


def all_transactions():
    return [(jws, jws_payload(jws)) for jws in STATE.get("transactions", [])]


def original_of(transaction_id):
    for _, payload in all_transactions():
        if transaction_id in (payload.get("transactionId"), payload.get("originalTransactionId")):
            return payload.get("originalTransactionId")
    return None


def transaction_history(transaction_id, query):
    otid = original_of(transaction_id)
    if otid is None:
        return error(404, "TransactionIdNotFoundError", "Transaction id not found.", 4040010)
    matching = sorted((p.get("signedDate", 0), p.get("transactionId", ""), jws)
                      for jws, p in all_transactions() if p.get("originalTransactionId") == otid)
    if query.get("sort", ["ASCENDING"])[0] == "DESCENDING":
        matching.reverse()
    offset = int(query["revision"][0]) if "revision" in query and query["revision"][0].isdigit() else 0
    size = STATE.get("transactionPageSize", 20)
    page = matching[offset:offset + size]
    has_more = offset + size < len(matching)
    return 200, {}, {"signedTransactions": [jws for _, _, jws in page], "hasMore": has_more,
                     "revision": str(offset + len(page)), "bundleId": ARGS.bundle_id,
                     "environment": STATE.get("environment", "Sandbox")}


def transaction_info(transaction_id):
    for jws, payload in all_transactions():
        if payload.get("transactionId") == transaction_id:
            return 200, {}, {"signedTransactionInfo": jws}
    return error(404, "TransactionIdNotFoundError", "Transaction id not found.", 4040010)


def subscription_statuses(transaction_id):
    statuses = STATE.get("statuses", {})
    body = statuses.get(transaction_id) or statuses.get(original_of(transaction_id) or "")
    if body is None:
        return error(404, "TransactionIdNotFoundError", "Transaction id not found.", 4040010)
    return 200, {}, body


def seat_group(otid):
    group = STATE.get("seats", {}).get(otid)
    if group is None:
        return None, error(404, "OriginalTransactionIdNotFoundError", "no such original transaction")
    if group.get("invitationManagement", "DEVELOPER") != "DEVELOPER":
        return None, error(400, "TransactionNotDevManagedGroupError", "the group is not developer-managed")
    return group, None


def available(group):
    return max(0, group.get("totalSeatCount", 0) - 1 - len(group.get("assignedSeatClaimIds", [])))


def seat_info(otid):
    group, failure = seat_group(otid)
    if failure:
        return failure
    return 200, {}, {"totalSeatCount": group.get("totalSeatCount", 0), "availableSeatCount": available(group),
                     "assignedSeatClaimIds": list(group.get("assignedSeatClaimIds", []))}


def claim_seat(otid, body):
    request_id = body.get("requestIdentifier") if isinstance(body, dict) else None
    if not isinstance(request_id, str) or not request_id:
        return error(400, "InvalidRequestIdentifierError", "requestIdentifier is required")
    if request_id in CLAIMS_BY_REQUEST and CLAIMS_BY_REQUEST[request_id][0] == otid:
        return 200, {}, {"seatClaimId": CLAIMS_BY_REQUEST[request_id][1]}
    group, failure = seat_group(otid)
    if failure:
        return failure
    if group.get("status", "ACTIVE") != "ACTIVE":
        return error(403, "SubscriptionNotActiveError", "the subscription is not active")
    known = STATE.get("knownAppTransactionIds")
    app_tx = body.get("appTransactionId")
    if app_tx is not None and known is not None and app_tx not in known:
        return error(404, "AppTransactionIdNotFoundError", "appTransactionId not found")
    if available(group) <= 0:
        return error(400, "NoAvailableSeatsError", "No seats are available to claim.")
    claim = str(uuid.uuid4())
    group.setdefault("assignedSeatClaimIds", []).append(claim)
    CLAIMS_BY_REQUEST[request_id] = (otid, claim)
    return 200, {}, {"seatClaimId": claim}


def unclaim_seat(otid, claim):
    group, failure = seat_group(otid)
    if failure:
        return failure
    if claim not in group.get("assignedSeatClaimIds", []):
        return error(404, "SeatClaimIdNotFoundError", "seatClaimId not found")
    group["assignedSeatClaimIds"].remove(claim)
    return 204, {}, None


def associate_seat(otid, claim, body):
    group, failure = seat_group(otid)
    if failure:
        return failure
    if claim not in group.get("assignedSeatClaimIds", []):
        return error(404, "SeatClaimIdNotFoundError", "seatClaimId not found")
    if not isinstance(body, dict) or not body.get("appTransactionId"):
        return error(400, "InvalidAppTransactionIdError", "appTransactionId is required")
    group.setdefault("associations", {})[claim] = body["appTransactionId"]
    return 200, {}, None


def customer_groups(customer):
    groups = STATE.get("customerGroups", {}).get(customer)
    if groups is None:
        groups = [{"groupId": PLACEHOLDER_GROUP, "groupType": "ORGANIZATION",
                   "roles": [{"productId": "com.example.placeholder.one", "role": "ADMIN"},
                             {"productId": "com.example.placeholder.two", "role": "NONE"}]}]
    return 200, {}, {"groups": groups}


def group_members(group_id, query):
    limit_text = query.get("limit", ["100"])[0]
    if not limit_text.isdigit() or not 1 <= int(limit_text) <= 100:
        return error(400, "InvalidLimitError", "limit must be 1 to 100")
    limit = int(limit_text)
    if not group_id.isdigit():
        return error(400, "InvalidGroupIdError", "malformed groupId")
    if group_id == PLACEHOLDER_GROUP:
        members = [PLACEHOLDER_MEMBER]
    else:
        members = STATE.get("groupMembers", {}).get(group_id)
        if members is None:
            return error(404, "GroupNotFoundError", "no such group")
    offset = 0
    if "paginationToken" in query:
        token = read_token(query["paginationToken"][0])
        if not token or token.get("g") != group_id:
            return error(400, "InvalidPaginationTokenError", "bad pagination token")
        offset = token["o"]
    page = members[offset:offset + limit]
    result = {"members": [{"appTransactionId": m} for m in page], "hasMore": offset + limit < len(members)}
    if result["hasMore"]:
        result["paginationToken"] = page_token({"o": offset + limit, "g": group_id})
    return 200, {}, result


def route(method, path):
    """(endpoint name, handler(query, body)) for a request, or (None, None)."""
    segments = [unquote(s) for s in path.split("/") if s]
    prefix = [s for s in ARGS.groups_prefix.split("/") if s]
    if segments[:len(prefix) + 2] == prefix + ["groups", "v1"]:
        rest = segments[len(prefix) + 2:]
        if len(rest) == 3 and rest[0] == "transactions" and rest[2] == "seats":
            if method == "GET":
                return "GetSeatInfo", lambda q, b: seat_info(rest[1])
            if method == "POST":
                return "ClaimSeat", lambda q, b: claim_seat(rest[1], b)
        if len(rest) == 4 and rest[0] == "transactions" and rest[2] == "seats" and method == "DELETE":
            return "UnclaimSeat", lambda q, b: unclaim_seat(rest[1], rest[3])
        if len(rest) == 5 and rest[0] == "transactions" and rest[2] == "seats" and rest[4] == "associate" and method == "POST":
            return "AssociateSeat", lambda q, b: associate_seat(rest[1], rest[3], b)
        if len(rest) == 2 and rest[0] == "currentGroups" and method == "GET":
            return "GetCustomerGroups", lambda q, b: customer_groups(rest[1])
        if len(rest) == 2 and rest[0] == "group" and method == "GET":
            return "GetGroupMembers", lambda q, b: group_members(rest[1], q)
        return None, None
    if segments[:1] != ["inApps"]:
        return None, None
    rest = segments[1:]
    if rest == ["v1", "notifications", "history"] and method == "POST":
        return "GetNotificationHistory", notification_history
    if len(rest) == 3 and rest[:2] == ["v2", "history"] and method == "GET":
        return "GetTransactionHistory", lambda q, b: transaction_history(rest[2], q)
    if len(rest) == 3 and rest[:2] == ["v1", "subscriptions"] and method == "GET":
        return "GetAllSubscriptionStatuses", lambda q, b: subscription_statuses(rest[2])
    if len(rest) == 3 and rest[:2] == ["v1", "transactions"] and method == "GET":
        return "GetTransactionInfo", lambda q, b: transaction_info(rest[2])
    return None, None


def take_fault(endpoint):
    """The first scripted fault matching `endpoint` with uses left ("skip": let N matches pass first)."""
    for fault in FAULTS:
        if fault.get("endpoint") not in (None, endpoint) or fault.get("times", 1) <= 0:
            continue
        if fault.get("skip", 0) > 0:
            fault["skip"] -= 1
            return None
        fault["times"] = fault.get("times", 1) - 1
        return dict(fault)
    return None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, fmt, *args):  # quiet
        pass

    def send(self, status, headers, body):
        data = b"" if body is None else json.dumps(body).encode()
        try:
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            if data:
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if data:
                self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout test, killed process)

    def handle_any(self, method):
        split = urlsplit(self.path)
        query = parse_qs(split.query)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        if split.path.startswith("/_standin/"):
            return self.admin(method, split.path, body)
        endpoint, handler = route(method, split.path)
        token = self.headers.get("Authorization", "")
        auth = check_jwt(token)
        entry = {"method": method, "path": split.path, "query": split.query, "endpoint": endpoint, "body": body,
                 "auth": auth or "ok", "token": token[len("Bearer "):] if token.startswith("Bearer ") else None,
                 "time": time.time()}
        if auth:
            entry["status"] = 401
            with LOCK:
                REQUESTS.append(entry)
                write_log()
            return self.send(401, {"X-Standin-Reason": auth}, None)
        if handler is None:
            entry["status"] = 404
            with LOCK:
                REQUESTS.append(entry)
                write_log()
            return self.send(404, {}, {"errorMessage": f"no such endpoint: {method} {split.path}"})
        with LOCK:
            fault = take_fault(endpoint)
            if fault is None or "status" not in fault:
                status, headers, result = handler(query, body)
            else:
                status, headers, result = fault["status"], fault.get("headers", {}), fault.get("body")
            entry["status"] = status
            entry["fault"] = fault
            REQUESTS.append(entry)
            write_log()
        if fault and fault.get("delay"):
            time.sleep(fault["delay"])
        return self.send(status, headers, result)

    def admin(self, method, path, body):
        with LOCK:
            if path == "/_standin/requests" and method == "GET":
                return self.send(200, {}, REQUESTS)
            if path == "/_standin/state" and method == "GET":
                return self.send(200, {}, STATE)
            if path == "/_standin/state" and method == "POST" and isinstance(body, dict):
                STATE.update(body)
                return self.send(200, {}, {"ok": True})
            if path == "/_standin/faults" and method == "POST" and isinstance(body, list):
                FAULTS.extend(body)
                return self.send(200, {}, {"ok": True})
        return self.send(404, {}, {"errorMessage": "no such admin endpoint"})

    def do_GET(self):  # noqa: N802
        self.handle_any("GET")

    def do_POST(self):  # noqa: N802
        self.handle_any("POST")

    def do_PUT(self):  # noqa: N802
        self.handle_any("PUT")

    def do_DELETE(self):  # noqa: N802
        self.handle_any("DELETE")


def write_log():
    """Rewrites the request log (callers hold LOCK); atomic so readers never see half a file."""
    if ARGS.log:
        temporary = ARGS.log + ".tmp"
        with open(temporary, "w", encoding="utf-8") as handle:
            json.dump(REQUESTS, handle)
        os.replace(temporary, ARGS.log)


def watch_parent(parent):
    while True:
        if os.getppid() != parent:
            os._exit(0)
        time.sleep(0.3)


def main():
    global ARGS, PUBLIC_KEY, STATE
    parser = argparse.ArgumentParser(description="App Store Server API stand-in (tests only)")
    parser.add_argument("--state", required=True)
    parser.add_argument("--public-key", required=True)
    parser.add_argument("--issuer-id", required=True)
    parser.add_argument("--key-id", required=True)
    parser.add_argument("--bundle-id", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--groups-prefix", default="")
    parser.add_argument("--log")
    ARGS = parser.parse_args()
    # A parent may start us with signals blocked (Foundation's Process does): take SIGTERM normally.
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    with open(ARGS.public_key, "rb") as handle:
        PUBLIC_KEY = serialization.load_pem_public_key(handle.read())
    with open(ARGS.state, encoding="utf-8") as handle:
        STATE = json.load(handle)
    FAULTS.extend(STATE.pop("faults", []))
    server = ThreadingHTTPServer(("127.0.0.1", ARGS.port), Handler)
    server.daemon_threads = True
    threading.Thread(target=watch_parent, args=(os.getppid(),), daemon=True).start()
    print(f"LISTENING {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
