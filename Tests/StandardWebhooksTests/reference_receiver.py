"""A receiver written with the reference implementation (`standardwebhooks` from PyPI, pinned by
the test setup), judging messages our signer produced. Used by ReferenceImplementationTests.swift.

    python reference_receiver.py MESSAGES.json

MESSAGES.json: {"receiverSecrets": [whsec_...], "messages": [{"id", "timestamp", "body",
"headers", "tamperedBody", "oldHeaders", "newHeaders", "wrongSecretHeaders"}, ...]}.
Prints one JSON object: the library's version and, per message (in order), what the library
said for each case: "accepted" or the WebhookVerificationError's message.
"""
import importlib.metadata
import json
import sys
from datetime import datetime, timezone

from standardwebhooks.webhooks import Webhook, WebhookVerificationError


def judge(webhook, body, headers):
    try:
        webhook.verify(body, headers)
        return "accepted"
    except WebhookVerificationError as error:
        return str(error)


document = json.load(open(sys.argv[1], encoding="utf-8"))
receivers = [Webhook(secret) for secret in document["receiverSecrets"]]
results = []
for message in document["messages"]:
    body = message["body"]
    first = receivers[0]
    results.append({
        "id": message["id"],
        # The reference library's own signature for the same id, timestamp and body.
        "referenceSignature": first.sign(message["id"], datetime.fromtimestamp(message["timestamp"], tz=timezone.utc), body),
        "valid": [judge(receiver, body, message["headers"]) for receiver in receivers],
        "tamperedBody": [judge(receiver, message["tamperedBody"], message["headers"]) for receiver in receivers],
        "old": [judge(receiver, body, message["oldHeaders"]) for receiver in receivers],
        "new": [judge(receiver, body, message["newHeaders"]) for receiver in receivers],
        "wrongSecret": [judge(receiver, body, message["wrongSecretHeaders"]) for receiver in receivers],
    })
print(json.dumps({"version": importlib.metadata.version("standardwebhooks"), "results": results}))
