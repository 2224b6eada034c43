#!/usr/bin/env python3
"""A real Standard Webhooks receiver for SeatLedger's outgoing webhooks (issue #47), for tests and
for trying `seatledger webhook` by hand. It verifies every delivery with the reference
implementation, the PyPI package `standardwebhooks` (1.0.0; Tools/scripts/test.sh makes a venv with
it, at $SEATLEDGER_STANDARDWEBHOOKS_PYTHON or /tmp/seatledger-standardwebhooks-venv/bin/python),
and listens on 127.0.0.1 only.

    $SEATLEDGER_STANDARDWEBHOOKS_PYTHON Tools/scripts/webhook-receiver.py \\
        --secret-file secrets.txt --port 0 --port-file port.txt \\
        --record deliveries.ndjson --refusals refusals.ndjson

Once listening it prints `listening PORT` on standard output (and writes PORT to --port-file).
Any POST, at any path, is judged (any other method is refused with 405 and logged to --refusals):

- verified by one of the secrets (signature, and a timestamp within the library's 5 minutes):
  answered 204 and one JSON line appended to --record:
  {"webhookId", "timestamp", "receivedAt" (epoch ms), "body" (the parsed JSON), "contentType",
  "userAgent"};
- refused: answered 400 with the reason as text, and one JSON line appended to --refusals:
  {"reason", "webhookId" (or null), "receivedAt"}.

Each line is written and flushed before the answer is sent, so a sender that got its answer
finds the line already there. Only deliveries answered 2xx are recorded.

Options:
  --secret whsec_...      a secret to accept (repeatable; rotation: give both)
  --secret-file F         secrets, one per line (blank lines and # comments skipped); preferred,
                          so secrets are not visible in `ps`
  --port N                the port (0: an ephemeral one; the default)
  --port-file F           write the bound port to F (atomically) once listening
  --record F              append one JSON line per verified delivery answered 2xx
  --refusals F            append one JSON line per refused request
  --status N              answer every request N (verification still runs and is logged);
                          a verified delivery is recorded only if N is 2xx
  --delay-ms N            wait N ms before answering each request
  --redirect URL          answer every request 302 with `location: URL` (nothing recorded)
  --chaos SEED            misbehave at random (seeded): per verified delivery, one draw decides
  --fail-rate R             answer 500 with probability R,
  --timeout-rate R          or hang for --hang-seconds (past the sender's timeout) then close,
  --close-rate R            or close the connection without answering
  --hang-seconds S        how long a chaos timeout hangs (default 60)
  --verbose               log each request to standard error

Stop it with SIGTERM or SIGINT.
"""
import argparse
import json
import os
import random
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook


def parse_arguments():
    parser = argparse.ArgumentParser(description="Standard Webhooks receiver (see the docstring).")
    parser.add_argument("--secret", action="append", default=[])
    parser.add_argument("--secret-file")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file")
    parser.add_argument("--record")
    parser.add_argument("--refusals")
    parser.add_argument("--status", type=int)
    parser.add_argument("--delay-ms", type=int, default=0)
    parser.add_argument("--redirect")
    parser.add_argument("--chaos", type=int)
    parser.add_argument("--fail-rate", type=float, default=0.0)
    parser.add_argument("--timeout-rate", type=float, default=0.0)
    parser.add_argument("--close-rate", type=float, default=0.0)
    parser.add_argument("--hang-seconds", type=float, default=60.0)
    parser.add_argument("--verbose", action="store_true")
    arguments = parser.parse_args()
    secrets = list(arguments.secret)
    if arguments.secret_file:
        with open(arguments.secret_file, encoding="utf-8") as file:
            secrets += [line.strip() for line in file if line.strip() and not line.strip().startswith("#")]
    if not secrets:
        parser.error("give at least one --secret or --secret-file")
    arguments.secrets = secrets
    if arguments.fail_rate + arguments.timeout_rate + arguments.close_rate > 1:
        parser.error("--fail-rate, --timeout-rate and --close-rate add up to more than 1")
    return arguments


class JSONLines:
    """An append-only JSON lines file, one line written and flushed per call, thread-safe."""

    def __init__(self, path):
        self.lock = threading.Lock()
        self.file = open(path, "a", encoding="utf-8") if path else None

    def append(self, value):
        if self.file is None:
            return
        with self.lock:
            self.file.write(json.dumps(value, ensure_ascii=False) + "\n")
            self.file.flush()


class Chaos:
    """One seeded draw per verified delivery: "fail", "timeout", "close" or None."""

    def __init__(self, seed, fail_rate, timeout_rate, close_rate):
        self.random = random.Random(seed) if seed is not None else None
        self.lock = threading.Lock()
        self.fail_rate, self.timeout_rate, self.close_rate = fail_rate, timeout_rate, close_rate

    def draw(self):
        if self.random is None:
            return None
        with self.lock:
            value = self.random.random()
        if value < self.fail_rate:
            return "fail"
        if value < self.fail_rate + self.timeout_rate:
            return "timeout"
        if value < self.fail_rate + self.timeout_rate + self.close_rate:
            return "close"
        return None


def now_ms():
    return int(time.time() * 1000)


def make_handler(arguments, receivers, record, refusals, chaos):
    class Handler(BaseHTTPRequestHandler):
        server_version = "webhook-receiver/1"

        def log_message(self, format, *args):
            if arguments.verbose:
                sys.stderr.write("%s %s\n" % (self.address_string(), format % args))

        def answer(self, status, text="", headers=()):
            data = text.encode("utf-8")
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            if status != 204:
                self.send_header("content-type", "text/plain; charset=utf-8")
                self.send_header("content-length", str(len(data)))
            self.end_headers()
            if status != 204 and data and self.command != "HEAD":
                self.wfile.write(data)

        def judge(self, body):
            """(parsed body, None) when one secret verifies the delivery, else (None, reason)."""
            headers = {name: value for name, value in self.headers.items()}
            reason = None
            for receiver in receivers:
                try:
                    return receiver.verify(body, headers), None
                except Exception as error:  # WebhookVerificationError, or a body that is not UTF-8 JSON
                    reason = str(error) or type(error).__name__
            return None, reason

        def do_POST(self):
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length > 0 else b""
            if arguments.delay_ms > 0:
                time.sleep(arguments.delay_ms / 1000)
            if arguments.redirect:
                self.answer(302, "moved\n", [("location", arguments.redirect)])
                return
            parsed, reason = self.judge(body)
            webhook_id = self.headers.get("webhook-id")
            if reason is not None:
                refusals.append({"reason": reason, "webhookId": webhook_id, "receivedAt": now_ms()})
                self.answer(arguments.status or 400, reason + "\n")
                return
            status = arguments.status or 204
            action = chaos.draw()
            if action == "fail":
                self.answer(500, "chaos: failing on purpose\n")
                return
            if action == "timeout":
                time.sleep(arguments.hang_seconds)
                self.close_connection = True
                return
            if action == "close":
                self.close_connection = True
                return
            if 200 <= status < 300:
                timestamp = self.headers.get("webhook-timestamp")
                record.append({"webhookId": webhook_id, "timestamp": int(timestamp), "receivedAt": now_ms(), "body": parsed,
                               "contentType": self.headers.get("content-type"), "userAgent": self.headers.get("user-agent")})
            self.answer(status, "" if status == 204 else "status %d from webhook-receiver.py\n" % status)

        def refuse_method(self):
            reason = "method %s: only POST is accepted" % self.command
            refusals.append({"reason": reason, "webhookId": self.headers.get("webhook-id"), "receivedAt": now_ms()})
            self.answer(405, reason + "\n")

        do_GET = do_PUT = do_DELETE = do_PATCH = do_HEAD = refuse_method

    return Handler


def main():
    arguments = parse_arguments()
    receivers = [Webhook(secret) for secret in arguments.secrets]
    record = JSONLines(arguments.record)
    refusals = JSONLines(arguments.refusals)
    chaos = Chaos(arguments.chaos, arguments.fail_rate, arguments.timeout_rate, arguments.close_rate)
    server = ThreadingHTTPServer(("127.0.0.1", arguments.port), make_handler(arguments, receivers, record, refusals, chaos))
    server.daemon_threads = True
    port = server.server_address[1]
    if arguments.port_file:
        temporary = arguments.port_file + ".tmp"
        with open(temporary, "w", encoding="utf-8") as file:
            file.write("%d\n" % port)
        os.replace(temporary, arguments.port_file)
    # A parent may start us with signals blocked (Foundation's Process, launched from a
    # libdispatch thread, passes its mask on): unblock them so SIGTERM and SIGINT stop us.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM, signal.SIGINT])
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    signal.signal(signal.SIGINT, lambda *_: sys.exit(0))
    print("listening %d" % port, flush=True)
    try:
        server.serve_forever()
    except (KeyboardInterrupt, SystemExit):
        pass


if __name__ == "__main__":
    main()
