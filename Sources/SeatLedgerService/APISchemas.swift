import AppStoreModels

/// The component schemas of the OpenAPI document (``OpenAPIDocument``).
///
/// ``fromEventSchemas`` are the definitions of `Events/schemas/group-state.schema.json` (the root
/// as `GroupState`) and `Events/schemas/reports.schema.json` (`diff` as `GroupDiff`), each `$ref`
/// pointed at `#/components/schemas/<Name>`: a test (`OpenAPIDocumentTests`) fails when they
/// drift from those files. ``ofTheService`` are the bodies only the service answers.
enum APISchemas {
    /// Every component schema, by name.
    static let all: JSONValue = {
        var schemas: [String: JSONValue] = [:]
        for text in [fromEventSchemas, ofTheService] {
            guard case .object(let members)? = try? JSONValue.parse(bytes: Array(text.utf8)) else { continue }
            schemas.merge(members) { first, _ in first }
        }
        return .object(schemas)
    }()

    /// The definitions of `Events/schemas/group-state.schema.json` and `reports.schema.json`.
    static let fromEventSchemas = #"""
{
  "Action": {
    "additionalProperties": true,
    "properties": {
      "code": {
        "examples": [
          "unclaim_now",
          "unclaim_before_renewal",
          "assigned_guards",
          "backfill",
          "reconcile",
          "check_claims",
          "check_delivery"
        ],
        "type": "string"
      },
      "text": {
        "type": "string"
      }
    },
    "required": [
      "code",
      "text"
    ],
    "type": "object"
  },
  "AgainstApple": {
    "additionalProperties": true,
    "description": "seatledger diff REF --against-apple --json",
    "properties": {
      "appleObservedAt": {
        "$ref": "#/components/schemas/IsoTimeOrNull"
      },
      "changes": {
        "items": {
          "$ref": "#/components/schemas/StateChange"
        },
        "type": "array"
      },
      "differences": {
        "type": "boolean"
      },
      "groupKey": {
        "type": "string"
      },
      "mode": {
        "const": "against-apple"
      },
      "olderSide": {
        "enum": [
          "apple",
          "ours",
          "none"
        ]
      },
      "oursLatestAt": {
        "$ref": "#/components/schemas/IsoTimeOrNull"
      }
    },
    "required": [
      "mode",
      "groupKey",
      "differences",
      "changes",
      "appleObservedAt",
      "oursLatestAt",
      "olderSide"
    ],
    "type": "object"
  },
  "Anomaly": {
    "additionalProperties": true,
    "properties": {
      "code": {
        "examples": [
          "missed_notification",
          "claim_without_subscription",
          "over_capacity",
          "unknown_unclaim",
          "late_event",
          "unusual_signing_chain",
          "drift",
          "seat_refund_without_member_change"
        ],
        "type": "string"
      },
      "eventIds": {
        "items": {
          "type": "string"
        },
        "type": "array"
      },
      "text": {
        "type": "string"
      }
    },
    "required": [
      "code",
      "text",
      "eventIds"
    ],
    "type": "object"
  },
  "DiffPoint": {
    "additionalProperties": true,
    "properties": {
      "asOf": {
        "$ref": "#/components/schemas/IsoTime"
      },
      "knownAt": {
        "$ref": "#/components/schemas/IsoTimeOrNull"
      }
    },
    "required": [
      "asOf",
      "knownAt"
    ],
    "type": "object"
  },
  "ExplainingEvent": {
    "additionalProperties": true,
    "properties": {
      "eventId": {
        "type": "string"
      },
      "occurredAt": {
        "$ref": "#/components/schemas/IsoTime"
      },
      "origin": {
        "type": "string"
      },
      "position": {
        "type": "integer"
      },
      "recordedAt": {
        "$ref": "#/components/schemas/IsoTime"
      },
      "what": {
        "type": "string"
      }
    },
    "required": [
      "eventId",
      "position",
      "what",
      "occurredAt",
      "recordedAt",
      "origin"
    ],
    "type": "object"
  },
  "GroupAudit": {
    "additionalProperties": true,
    "description": "seatledger audit group REF --format json",
    "properties": {
      "anomalies": {
        "items": {
          "$ref": "#/components/schemas/Anomaly"
        },
        "type": "array"
      },
      "generatedAt": {
        "$ref": "#/components/schemas/IsoTime"
      },
      "group": {
        "$ref": "#/components/schemas/GroupState"
      },
      "recommendedActions": {
        "items": {
          "$ref": "#/components/schemas/Action"
        },
        "type": "array"
      },
      "report": {
        "const": "group-audit"
      },
      "timeline": {
        "items": {
          "$ref": "#/components/schemas/ReplayEntry"
        },
        "type": "array"
      }
    },
    "required": [
      "report",
      "generatedAt",
      "group",
      "timeline",
      "anomalies",
      "recommendedActions"
    ],
    "type": "object"
  },
  "GroupDiff": {
    "additionalProperties": true,
    "description": "seatledger diff REF (--known-at A --known-at B | --as-of A --as-of B) --json",
    "properties": {
      "after": {
        "$ref": "#/components/schemas/DiffPoint"
      },
      "before": {
        "$ref": "#/components/schemas/DiffPoint"
      },
      "changes": {
        "items": {
          "$ref": "#/components/schemas/StateChange"
        },
        "type": "array"
      },
      "differences": {
        "type": "boolean"
      },
      "explainingEvents": {
        "items": {
          "$ref": "#/components/schemas/ExplainingEvent"
        },
        "type": "array"
      },
      "groupKey": {
        "type": "string"
      },
      "mode": {
        "enum": [
          "known-at",
          "as-of"
        ]
      }
    },
    "required": [
      "mode",
      "groupKey",
      "before",
      "after",
      "differences",
      "changes",
      "explainingEvents"
    ],
    "type": "object"
  },
  "GroupState": {
    "additionalProperties": true,
    "description": "One group's state at (asOf, knownAt): GroupState.json in Sources/Projections/GroupState.swift. Every key is always present; optional values are null. Timestamps are ISO 8601 UTC strings with milliseconds. See Events/projections.md.",
    "properties": {
      "apple": {
        "oneOf": [
          {
            "type": "null"
          },
          {
            "additionalProperties": true,
            "properties": {
              "assignedSeatClaimIds": {
                "items": {
                  "type": "string"
                },
                "type": "array"
              },
              "availableSeatCount": {
                "type": [
                  "integer",
                  "null"
                ]
              },
              "observedAt": {
                "$ref": "#/components/schemas/IsoTime"
              },
              "totalSeatCount": {
                "type": [
                  "integer",
                  "null"
                ]
              }
            },
            "required": [
              "totalSeatCount",
              "availableSeatCount",
              "assignedSeatClaimIds",
              "observedAt"
            ],
            "type": "object"
          }
        ]
      },
      "asOf": {
        "$ref": "#/components/schemas/IsoTime"
      },
      "drift": {
        "items": {
          "additionalProperties": true,
          "properties": {
            "apple": {},
            "field": {
              "examples": [
                "total",
                "available",
                "assignedSeatClaimIds"
              ],
              "type": "string"
            },
            "ours": {}
          },
          "required": [
            "field",
            "ours",
            "apple"
          ],
          "type": "object"
        },
        "type": "array"
      },
      "groupIds": {
        "items": {
          "type": "string"
        },
        "type": "array"
      },
      "groupKey": {
        "type": "string"
      },
      "invitationManagement": {
        "type": [
          "string",
          "null"
        ]
      },
      "knownAt": {
        "$ref": "#/components/schemas/IsoTimeOrNull"
      },
      "members": {
        "items": {
          "$ref": "#/components/schemas/Member"
        },
        "type": "array"
      },
      "productId": {
        "type": [
          "string",
          "null"
        ]
      },
      "purchaserOriginalTransactionId": {
        "type": [
          "string",
          "null"
        ]
      },
      "seats": {
        "additionalProperties": true,
        "properties": {
          "assigned": {
            "type": "integer"
          },
          "available": {
            "type": [
              "integer",
              "null"
            ]
          },
          "claimed": {
            "type": "integer"
          },
          "overCapacity": {
            "type": "integer"
          },
          "refunded": {
            "type": "integer"
          },
          "renewalOverCapacity": {
            "type": "integer"
          },
          "renewalTotal": {
            "type": [
              "integer",
              "null"
            ]
          },
          "total": {
            "type": [
              "integer",
              "null"
            ]
          }
        },
        "required": [
          "total",
          "renewalTotal",
          "refunded",
          "claimed",
          "assigned",
          "available",
          "overCapacity",
          "renewalOverCapacity"
        ],
        "type": "object"
      },
      "status": {
        "examples": [
          "ACTIVE",
          "GRACE_PERIOD",
          "BILLING_RETRY",
          "EXPIRED",
          "REVOKED",
          "UNKNOWN"
        ],
        "type": "string"
      }
    },
    "required": [
      "groupKey",
      "purchaserOriginalTransactionId",
      "groupIds",
      "productId",
      "invitationManagement",
      "status",
      "asOf",
      "knownAt",
      "seats",
      "members",
      "apple",
      "drift"
    ],
    "title": "seatledger group show --json",
    "type": "object"
  },
  "Groups": {
    "description": "seatledger groups --json",
    "items": {
      "$ref": "#/components/schemas/GroupState"
    },
    "type": "array"
  },
  "IsoTime": {
    "pattern": "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$",
    "type": "string"
  },
  "IsoTimeOrNull": {
    "oneOf": [
      {
        "$ref": "#/components/schemas/IsoTime"
      },
      {
        "type": "null"
      }
    ]
  },
  "Member": {
    "additionalProperties": true,
    "properties": {
      "accessSince": {
        "$ref": "#/components/schemas/IsoTimeOrNull"
      },
      "accessUntil": {
        "$ref": "#/components/schemas/IsoTimeOrNull"
      },
      "appTransactionId": {
        "type": [
          "string",
          "null"
        ]
      },
      "hasAccess": {
        "type": "boolean"
      },
      "memberRef": {
        "type": [
          "string",
          "null"
        ]
      },
      "originalTransactionId": {
        "type": [
          "string",
          "null"
        ]
      },
      "revocation": {
        "oneOf": [
          {
            "type": "null"
          },
          {
            "$ref": "#/components/schemas/Revocation"
          }
        ]
      },
      "role": {
        "examples": [
          "PURCHASER",
          "ASSIGNED",
          "CLAIM"
        ],
        "type": "string"
      },
      "seatClaimId": {
        "type": [
          "string",
          "null"
        ]
      }
    },
    "required": [
      "role",
      "originalTransactionId",
      "appTransactionId",
      "seatClaimId",
      "memberRef",
      "hasAccess",
      "accessSince",
      "accessUntil",
      "revocation"
    ],
    "type": "object"
  },
  "MemberAudit": {
    "additionalProperties": true,
    "description": "seatledger audit member ID --format json",
    "properties": {
      "generatedAt": {
        "$ref": "#/components/schemas/IsoTime"
      },
      "groups": {
        "items": {
          "additionalProperties": true,
          "properties": {
            "chain": {
              "items": {
                "$ref": "#/components/schemas/ReplayEntry"
              },
              "type": "array"
            },
            "evidence": {
              "items": {
                "type": "string"
              },
              "type": "array"
            },
            "groupKey": {
              "type": "string"
            },
            "member": {
              "$ref": "#/components/schemas/Member"
            },
            "status": {
              "type": "string"
            },
            "verdict": {
              "type": "string"
            }
          },
          "required": [
            "groupKey",
            "status",
            "member",
            "verdict",
            "evidence",
            "chain"
          ],
          "type": "object"
        },
        "type": "array"
      },
      "identifier": {
        "type": "string"
      },
      "report": {
        "const": "member-audit"
      }
    },
    "required": [
      "report",
      "identifier",
      "generatedAt",
      "groups"
    ],
    "type": "object"
  },
  "MemberShow": {
    "description": "seatledger member show ID --json",
    "items": {
      "additionalProperties": true,
      "properties": {
        "asOf": {
          "$ref": "#/components/schemas/IsoTime"
        },
        "groupKey": {
          "type": "string"
        },
        "member": {
          "$ref": "#/components/schemas/Member"
        },
        "status": {
          "type": "string"
        }
      },
      "required": [
        "groupKey",
        "status",
        "asOf",
        "member"
      ],
      "type": "object"
    },
    "type": "array"
  },
  "Replay": {
    "additionalProperties": true,
    "description": "seatledger replay REF --json",
    "properties": {
      "entries": {
        "items": {
          "$ref": "#/components/schemas/ReplayEntry"
        },
        "type": "array"
      },
      "reference": {
        "type": "string"
      }
    },
    "required": [
      "reference",
      "entries"
    ],
    "type": "object"
  },
  "ReplayEntry": {
    "additionalProperties": true,
    "properties": {
      "after": {
        "$ref": "#/components/schemas/StateSummary"
      },
      "backfill": {
        "type": "boolean"
      },
      "changes": {
        "items": {
          "$ref": "#/components/schemas/StateChange"
        },
        "type": "array"
      },
      "duplicateArrivals": {
        "type": "integer"
      },
      "effectiveAt": {
        "$ref": "#/components/schemas/IsoTime"
      },
      "eventId": {
        "type": [
          "string",
          "null"
        ]
      },
      "late": {
        "type": "boolean"
      },
      "origin": {
        "type": [
          "string",
          "null"
        ]
      },
      "position": {
        "type": [
          "integer",
          "null"
        ]
      },
      "recordedAt": {
        "$ref": "#/components/schemas/IsoTimeOrNull"
      },
      "retractedBy": {
        "description": "the retraction (seatledger retract) that withdrew this event: it changes nothing; null otherwise",
        "oneOf": [
          {
            "type": "null"
          },
          {
            "properties": {
              "eventId": {
                "type": "string"
              },
              "position": {
                "type": "integer"
              },
              "recordedAt": {
                "$ref": "#/components/schemas/IsoTime"
              }
            },
            "required": [
              "eventId",
              "position",
              "recordedAt"
            ],
            "type": "object"
          }
        ]
      },
      "synthetic": {
        "type": "boolean"
      },
      "what": {
        "type": "string"
      }
    },
    "required": [
      "effectiveAt",
      "eventId",
      "position",
      "what",
      "recordedAt",
      "late",
      "origin",
      "backfill",
      "duplicateArrivals",
      "synthetic",
      "changes",
      "after"
    ],
    "type": "object"
  },
  "Revocation": {
    "additionalProperties": true,
    "properties": {
      "at": {
        "$ref": "#/components/schemas/IsoTime"
      },
      "eventId": {
        "type": "string"
      },
      "reason": {
        "examples": [
          "ASSIGNMENT_REVOKE",
          "REFUND_FULL",
          "REFUND_PRORATED",
          "FAMILY_REVOKE",
          "SEAT_REFUND",
          "UNCLAIMED_BY_DEVELOPER",
          "UNCLAIMED_BY_APP_STORE",
          "EXPIRED",
          "GRACE_PERIOD_EXPIRED",
          "GROUP_EXPIRED",
          "GROUP_REVOKED",
          "REVOKED"
        ],
        "type": "string"
      }
    },
    "required": [
      "reason",
      "at",
      "eventId"
    ],
    "type": "object"
  },
  "StateChange": {
    "additionalProperties": true,
    "properties": {
      "after": {},
      "before": {},
      "field": {
        "examples": [
          "status",
          "seats.total",
          "seats.renewalTotal",
          "seats.refunded",
          "seats.overCapacity",
          "seats.renewalOverCapacity",
          "member.added",
          "member.access",
          "member.revocation",
          "member.appTransactionId",
          "member.removed",
          "apple",
          "groupIds",
          "total",
          "available",
          "assignedSeatClaimIds",
          "groupMembers"
        ],
        "type": "string"
      },
      "member": {
        "type": [
          "string",
          "null"
        ]
      },
      "text": {
        "type": "string"
      }
    },
    "required": [
      "field",
      "member",
      "before",
      "after",
      "text"
    ],
    "type": "object"
  },
  "StateSummary": {
    "additionalProperties": true,
    "properties": {
      "held": {
        "type": "integer"
      },
      "seats": {
        "type": [
          "integer",
          "null"
        ]
      },
      "status": {
        "type": "string"
      },
      "withAccess": {
        "type": "integer"
      }
    },
    "required": [
      "status",
      "seats",
      "held",
      "withAccess"
    ],
    "type": "object"
  }
}
"""#

    /// The bodies of the service's own answers: errors, the webhook's receipt, probes, pages, the
    /// change feed, seat operations and their requests.
    static let ofTheService = #"""
{
  "APIResponseEnvelope": {
    "description": "POST /v1/api-responses: one App Store Server API call and its response, as `seatledger record` takes it (Events/schemas/api-response-envelope.schema.json). endpoint, status and respondedAt are required (else invalid_envelope); environment, when present, must be the ledger's (else environment_mismatch). The event id is the SHA-256 of the canonical envelope (keys sorted, no whitespace).",
    "type": "object",
    "required": ["apiResponse"],
    "properties": {
      "apiResponse": {
        "type": "object",
        "required": ["endpoint", "status", "respondedAt"],
        "properties": {
          "endpoint": { "minLength": 1, "description": "Apple's endpoint name, a non-empty string (open set), stored as the event's type; another type is invalid_envelope, but a number is read as its digits.", "examples": ["ClaimSeat", "UnclaimSeat", "AssociateSeat", "GetSeatInfo", "GetTransactionInfo"] },
          "method": { "description": "The HTTP method called, a string (`GET`, `POST`, `DELETE`); stored as given." },
          "path": { "description": "Path and query as called, a string, host omitted; identifiers are read from its segments (another type carries none)." },
          "requestBody": { "description": "The JSON request body, or null; requestIdentifier and appTransactionId are indexed." },
          "status": { "type": ["integer", "string"], "description": "Apple's HTTP status, a whole number (a string is read as the number it spells, else invalid_envelope); 2xx is a success." },
          "body": { "description": "Apple's JSON response body, or null; signed data in it is verified." },
          "respondedAt": { "type": ["string", "number"], "description": "When Apple answered: ISO 8601 or epoch milliseconds (a fraction is cut), in the years 0001 to 9999." },
          "environment": { "description": "`Sandbox` or `Production`: when a string or number, it must be the ledger's (else environment_mismatch)." },
          "context": { "description": "Your notes, not Apple's: an object whose string memberRef names the member; stored as given." }
        },
        "additionalProperties": true
      }
    },
    "additionalProperties": false
  },
  "AssociateRequest": {
    "description": "POST /v1/groups/{ref}/seats/{seatClaimId}/associate",
    "type": "object",
    "required": ["appTransactionId"],
    "properties": {
      "appTransactionId": { "type": "string", "minLength": 1, "maxLength": 256, "description": "Plain text (no control characters)." }
    },
    "additionalProperties": true
  },
  "Change": {
    "description": "One committed event of the change feed, with the keys of the groups that hold any identifier it mentions.",
    "type": "object",
    "required": ["position", "eventId", "kind", "type", "subtype", "occurredAt", "recordedAt", "groupKeys"],
    "properties": {
      "position": { "type": "integer", "minimum": 1 },
      "eventId": { "type": "string" },
      "kind": { "type": "string", "examples": ["notification", "apiResponse", "decision"] },
      "type": { "type": ["string", "null"] },
      "subtype": { "type": ["string", "null"] },
      "occurredAt": { "$ref": "#/components/schemas/IsoTimeOrNull" },
      "recordedAt": { "$ref": "#/components/schemas/IsoTime" },
      "groupKeys": { "type": "array", "items": { "type": "string" } }
    },
    "additionalProperties": true
  },
  "Changes": {
    "description": "GET /v1/changes: `next` is the cursor for the next call, `head` the ledger's head when the page was read.",
    "type": "object",
    "required": ["changes", "next", "head"],
    "properties": {
      "changes": { "type": "array", "items": { "$ref": "#/components/schemas/Change" } },
      "next": { "type": "integer", "minimum": 0 },
      "head": { "type": "integer", "minimum": 0 }
    },
    "additionalProperties": true
  },
  "AccessChangedMessage": {
    "description": "The body of an `access.changed` webhook delivery.",
    "type": "object",
    "required": ["type", "version", "sequence", "timestamp", "data"],
    "properties": {
      "type": { "const": "access.changed" },
      "version": { "const": 1 },
      "sequence": { "type": "integer", "minimum": 1, "description": "The transition's feed position (`seq` of GET /v1/access-changes)." },
      "timestamp": { "type": "string", "format": "date-time", "description": "When the ledger learned the change (`data.learnedAt`)." },
      "data": { "type": "object", "description": "The transition: `id`, `kind`, `subject`, `productId`, `bundleId`, `environment`, `effectiveAt`, `learnedAt`, `before`, `after`, `cause`, `corrects` (Events/api/access-transitions.md)." }
    },
    "additionalProperties": true
  },
  "AppleNotificationBody": {
    "description": "Apple's App Store Server Notification V2 body, as it was POSTed.",
    "type": "object",
    "required": ["signedPayload"],
    "properties": { "signedPayload": { "type": "string" } },
    "additionalProperties": true
  },
  "AccessChanges": {
    "description": "GET /v1/access-changes: `next` is the cursor for the next call, `last` the feed's last position, `derived` how far derivation stands (events through `position` of `head`, time through `horizon`).",
    "type": "object",
    "required": ["changes", "next", "last", "derived"],
    "properties": {
      "changes": { "type": "array", "items": { "type": "object", "required": ["seq", "transition"],
                   "properties": { "seq": { "type": "integer", "minimum": 1 }, "transition": { "type": "object" } } } },
      "next": { "type": "integer", "minimum": 0 },
      "last": { "type": "integer", "minimum": 0 },
      "derived": { "type": "object" }
    },
    "additionalProperties": true
  },
  "ClaimRequest": {
    "description": "POST /v1/groups/{ref}/seats",
    "type": "object",
    "required": ["memberRef"],
    "properties": {
      "memberRef": { "type": "string", "minLength": 1, "maxLength": 256, "description": "Your member id; plain text (no control characters)." },
      "appTransactionId": { "type": ["string", "null"], "minLength": 1, "maxLength": 256, "description": "The member's app transaction id, if known." },
      "requestId": { "type": ["string", "null"], "format": "uuid", "description": "A UUID, sent to Apple as the requestIdentifier; the same one again answers the same claim." }
    },
    "additionalProperties": true
  },
  "Diff": {
    "description": "GET /v1/groups/{ref}/diff: `diff --json` (knownAt or asOf twice) or `diff --against-apple --json`.",
    "oneOf": [ { "$ref": "#/components/schemas/GroupDiff" }, { "$ref": "#/components/schemas/AgainstApple" } ]
  },
  "Error": {
    "description": "Every error answer: a stable code and a human reason naming the input, with extra fields for some codes (`parameter`, `value`, `didYouMean` of a clock parameter; `head` of `cursor_past_head`; `seats`, `status` of a refused claim; `appleStatus`, `appleErrorCode`, `appleErrorMessage`, `attempts`, `requestId` of Apple's answers; `quarantineId` of a refused StoreKit input or API response, kept in quarantine).",
    "type": "object",
    "required": ["error", "message"],
    "properties": {
      "error": { "type": "string", "examples": ["bad_parameter", "unauthorized", "forbidden", "not_found", "method_not_allowed", "cursor_past_head", "ledger_unavailable"] },
      "message": { "type": "string" },
      "parameter": { "type": "string" },
      "value": { "type": "string" },
      "didYouMean": { "type": "string" },
      "head": { "type": "integer" },
      "quarantineId": { "type": "integer" }
    },
    "additionalProperties": true
  },
  "GroupsPage": {
    "description": "GET /v1/groups: a page of `group show --json`, by group key.",
    "type": "object",
    "required": ["groups", "nextCursor"],
    "properties": {
      "groups": { "type": "array", "items": { "$ref": "#/components/schemas/GroupState" } },
      "nextCursor": { "type": ["string", "null"], "description": "The `cursor` of the next page; null on the last." }
    },
    "additionalProperties": true
  },
  "Entitlement": {
    "description": "One product's entitlement: `through` is the source giving access that lasts longest (else the one that ended last), `alsoThrough` the others, entitled first.",
    "type": "object",
    "required": ["productId", "entitled", "since", "until", "bundleId", "environment", "through", "reason", "alsoThrough"],
    "properties": {
      "productId": { "type": ["string", "null"] },
      "entitled": { "type": "boolean" },
      "since": { "type": ["string", "null"], "format": "date-time" },
      "until": { "type": ["string", "null"], "format": "date-time", "description": "Entitled: when it ends without news; else when it ended." },
      "bundleId": { "type": "string" },
      "environment": { "type": "string" },
      "through": { "oneOf": [{ "$ref": "#/components/schemas/EntitlementSource" }, { "type": "null" }] },
      "reason": { "oneOf": [{ "$ref": "#/components/schemas/Revocation" }, { "type": "null" }] },
      "alsoThrough": { "type": "array", "items": { "$ref": "#/components/schemas/EntitlementSource" } }
    },
    "additionalProperties": true
  },
  "EntitlementSource": {
    "description": "One way the person holds the product: a group membership or an individual subscription.",
    "type": "object",
    "required": ["source", "entitled", "since", "until", "status", "groupKey", "purchaserOriginalTransactionId", "originalTransactionId",
                 "appTransactionId", "seatClaimId", "memberRef", "revocation"],
    "properties": {
      "source": { "type": "string", "examples": ["PURCHASED", "FAMILY_SHARED", "ASSIGNED_SEAT", "DEVELOPER_CLAIM"] },
      "entitled": { "type": "boolean" },
      "since": { "type": ["string", "null"], "format": "date-time" },
      "until": { "type": ["string", "null"], "format": "date-time" },
      "status": { "type": "string" },
      "groupKey": { "type": ["string", "null"], "description": "null for an individual subscription" },
      "purchaserOriginalTransactionId": { "type": ["string", "null"] },
      "originalTransactionId": { "type": ["string", "null"] },
      "appTransactionId": { "type": ["string", "null"] },
      "seatClaimId": { "type": ["string", "null"] },
      "memberRef": { "type": ["string", "null"] },
      "revocation": { "oneOf": [{ "$ref": "#/components/schemas/Revocation" }, { "type": "null" }] }
    },
    "additionalProperties": true
  },
  "Entitlements": {
    "description": "GET /v1/entitlements/{id}, as `seatledger entitlements ID --json`.",
    "type": "object",
    "required": ["identifier", "asOf", "knownAt", "bundleId", "environment", "person", "entitlements"],
    "properties": {
      "identifier": { "type": "string" },
      "asOf": { "type": "string", "format": "date-time" },
      "knownAt": { "type": ["string", "null"], "format": "date-time" },
      "bundleId": { "type": ["string", "null"], "description": "The app of the answer; null when merged from ledgers of several apps (each entry names its own)." },
      "environment": { "type": ["string", "null"], "description": "The environment of the answer; null when merged from both (each entry names its own)." },
      "person": {
        "type": "object",
        "required": ["userIds", "identifiers", "links", "conflicts"],
        "properties": {
          "userIds": { "type": "array", "items": { "type": "string" } },
          "identifiers": { "type": "array", "items": { "type": "string" } },
          "links": { "type": "array", "items": { "type": "object", "required": ["userId", "eventId", "recordedAt"], "additionalProperties": true } },
          "conflicts": { "type": "array", "items": { "type": "object", "required": ["kind", "subject", "linkedTo"], "additionalProperties": true } }
        },
        "additionalProperties": true
      },
      "entitlements": { "type": "array", "items": { "$ref": "#/components/schemas/Entitlement" } }
    },
    "additionalProperties": true
  },
  "Health": {
    "type": "object",
    "required": ["status", "version", "commit"],
    "properties": {
      "status": { "const": "ok" },
      "version": { "type": "string" },
      "commit": { "type": "string" }
    },
    "additionalProperties": true
  },
  "MemberAccess": {
    "description": "GET /v1/members/{id}: `hasAccess` is true when any membership gives access. From several ledgers, each membership adds `ledger` (name, bundleId, environment).",
    "type": "object",
    "required": ["identifier", "hasAccess", "memberships"],
    "properties": {
      "identifier": { "type": "string" },
      "hasAccess": { "type": "boolean" },
      "memberships": { "$ref": "#/components/schemas/MemberShow" }
    },
    "additionalProperties": true
  },
  "NotificationReceipt": {
    "description": "What became of a posted notification, once durable.",
    "oneOf": [
      {
        "type": "object",
        "required": ["result", "positions"],
        "properties": { "result": { "const": "appended" }, "positions": { "type": "array", "items": { "type": "integer" } } },
        "additionalProperties": true
      },
      {
        "type": "object",
        "required": ["result", "existingPosition"],
        "properties": { "result": { "const": "duplicate" }, "existingPosition": { "type": "integer" } },
        "additionalProperties": true
      },
      {
        "type": "object",
        "required": ["result", "quarantineId", "errorCode", "reason"],
        "properties": {
          "result": { "const": "quarantined" },
          "quarantineId": { "type": "integer" },
          "errorCode": { "type": "string" },
          "reason": { "type": "string" }
        },
        "additionalProperties": true
      }
    ]
  },
  "Ready": {
    "description": "Each ledger's readiness; `degraded` when some (not all) are not ready. `headPosition` is given when one ledger is reported (a service of one, or `?ledger=`).",
    "type": "object",
    "required": ["status", "ledgers"],
    "properties": {
      "status": { "enum": ["ready", "degraded"] },
      "headPosition": { "type": "integer", "minimum": 0 },
      "ledgers": {
        "type": "array",
        "items": {
          "type": "object",
          "required": ["name", "bundleId", "environment", "status"],
          "properties": {
            "name": { "type": "string" },
            "bundleId": { "type": "string" },
            "environment": { "type": "string" },
            "status": { "enum": ["ready", "not_ready"] },
            "headPosition": { "type": "integer", "minimum": 0 },
            "identifierFilter": { "enum": ["ready", "building"], "description": "A service of several ledgers: whether searches already skip this ledger for ids it does not know (`building` at start-up, while its identifiers are read)." },
            "message": { "type": "string" }
          },
          "additionalProperties": true
        }
      }
    },
    "additionalProperties": true
  },
  "RecordReceipt": {
    "description": "What became of a recorded API response: appended (201) or recorded before (200). `eventId` is the envelope's event id, the SHA-256 of its canonical form.",
    "oneOf": [
      {
        "type": "object",
        "required": ["outcome", "positions", "eventId", "carriedDuplicates"],
        "properties": {
          "outcome": { "const": "appended" },
          "positions": { "type": "array", "items": { "type": "integer" }, "description": "The envelope's event first, then the notification-history items it carried that were new." },
          "eventId": { "type": "string" },
          "carriedDuplicates": { "type": "integer", "minimum": 0, "description": "Carried notification-history items already in the ledger." }
        },
        "additionalProperties": true
      },
      {
        "type": "object",
        "required": ["outcome", "existingPosition", "eventId"],
        "properties": { "outcome": { "const": "duplicate" }, "existingPosition": { "type": "integer" }, "eventId": { "type": "string" } },
        "additionalProperties": true
      }
    ]
  },
  "SeatResult": {
    "description": "A seat operation's result with the group's state after it.",
    "type": "object",
    "required": ["result", "seatClaimId", "notes", "group"],
    "properties": {
      "result": { "enum": ["claimed", "unclaimed", "associated"] },
      "seatClaimId": { "type": "string" },
      "requestId": { "type": ["string", "null"] },
      "resumed": { "type": "boolean" },
      "replayed": { "type": "boolean" },
      "appTransactionId": { "type": "string" },
      "notes": { "type": "array", "items": { "type": "string" } },
      "group": { "$ref": "#/components/schemas/GroupState" }
    },
    "additionalProperties": true
  },
  "StoreKitInput": {
    "description": "POST /v1/storekit: what the app sent its server after the person signed in or bought, with the app's user id for them. Any other body is refused (400) and quarantined.",
    "type": "object",
    "required": ["storeKit"],
    "properties": {
      "storeKit": {
        "type": "object",
        "properties": {
          "userId": { "type": "string", "minLength": 1, "maxLength": 256, "description": "The app's own id of the person (at most 256 Unicode scalars); optional." },
          "signedTransaction": { "type": "string", "description": "A StoreKit transaction's `jwsRepresentation` (a compact JWS)." },
          "signedAppTransaction": { "type": "string", "description": "A signed `AppTransaction`'s `jwsRepresentation` (a compact JWS)." }
        },
        "oneOf": [ { "required": ["signedTransaction"] }, { "required": ["signedAppTransaction"] } ],
        "additionalProperties": false
      }
    },
    "additionalProperties": false
  },
  "StoreKitReceipt": {
    "description": "What became of a posted StoreKit input, once durable: appended (201, `positions`) or already appended (200, `existingPosition`), with the identities it links (absent ones omitted).",
    "type": "object",
    "required": ["outcome", "eventId", "linked"],
    "properties": {
      "outcome": { "enum": ["appended", "duplicate"] },
      "eventId": { "type": "string", "description": "The SHA-256 (hex) of the canonical input: the same input always names the same event." },
      "positions": { "type": "array", "items": { "type": "integer" } },
      "existingPosition": { "type": "integer" },
      "linked": {
        "type": "object",
        "properties": {
          "userId": { "type": "string" },
          "appTransactionId": { "type": "string" },
          "originalTransactionId": { "type": "string" },
          "appAccountToken": { "type": "string" }
        },
        "additionalProperties": false
      }
    },
    "additionalProperties": true
  },
  "SignedNotification": {
    "description": "Apple's body, `{\"signedPayload\": \"<JWS>\"}`. Any other bytes are taken too and quarantined (200), so the schema accepts any JSON.",
    "examples": [ { "signedPayload": "eyJhbGciOiJFUzI1NiIsIng1YyI6WyJ…" } ]
  }
}
"""#
}
