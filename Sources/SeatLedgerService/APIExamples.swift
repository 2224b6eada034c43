import AppStoreModels

/// Examples of the OpenAPI document (``OpenAPIDocument``), captured from a real `serve` on the
/// demo ledger by `Tools/scripts/capture-api-examples.sh` (which prints ``captured``).
enum APIExamples {
    /// The captured bodies, by name (the script's output as it printed it).
    static let captured = #"""
{
  "appended": {
    "positions": [
      160
    ],
    "result": "appended"
  },
  "audit": {
    "anomalies": [
      {
        "code": "missed_notification",
        "eventIds": [],
        "text": "the billing period ended at 2026-10-31T00:00:00.000Z with no DID_RENEW, EXPIRED or DID_FAIL_TO_RENEW notification: suspected missed notification"
      }
    ],
    "generatedAt": "2026-12-01T00:00:00.000Z",
    "group": {
      "apple": {
        "assignedSeatClaimIds": [
          "0c20e22a-c2e6-4017-a89f-78cf8d66533a",
          "17f14316-462a-4789-8d98-44ddf0bc383f",
          "6311d4e8-362d-4309-ba39-fa8b03149722"
        ],
        "availableSeatCount": 4,
        "observedAt": "2026-10-01T05:00:30.000Z",
        "totalSeatCount": 8
      },
      "asOf": "2026-12-01T00:00:00.000Z",
      "drift": [],
      "groupIds": [],
      "groupKey": "2000004000000001",
      "invitationManagement": "DEVELOPER",
      "knownAt": null,
      "members": [
        {
          "accessSince": "2026-10-01T00:00:00.000Z",
          "accessUntil": "2026-10-31T00:00:00.000Z",
          "appTransactionId": "704000004000000001",
          "hasAccess": false,
          "memberRef": null,
          "originalTransactionId": "2000004000000001",
          "revocation": {
            "at": "2026-10-31T00:00:00.000Z",
            "eventId": "8da74203-1b37-4db3-aacf-c44145ebf8aa",
            "reason": "EXPIRED"
          },
          "role": "PURCHASER",
          "seatClaimId": null
        },
        {
          "accessSince": "2026-10-01T04:00:30.000Z",
          "accessUntil": "2026-10-31T00:00:00.000Z",
          "appTransactionId": null,
          "hasAccess": false,
          "memberRef": "m3",
          "originalTransactionId": null,
          "revocation": {
            "at": "2026-10-31T00:00:00.000Z",
            "cause": {
              "at": "2026-10-31T00:00:00.000Z",
              "eventId": "8da74203-1b37-4db3-aacf-c44145ebf8aa",
              "reason": "EXPIRED"
            },
            "eventId": "8da74203-1b37-4db3-aacf-c44145ebf8aa",
            "reason": "GROUP_EXPIRED"
          },
          "role": "CLAIM",
          "seatClaimId": "0c20e22a-c2e6-4017-a89f-78cf8d66533a"
        },
        {
          "accessSince": "2026-10-01T01:00:00.000Z",
          "accessUntil": "2026-10-31T00:00:00.000Z",
          "appTransactionId": "704000004000000002",
          "hasAccess": false,
          "memberRef": "m1",
          "originalTransactionId": null,
          "revocation": {
            "at": "2026-10-31T00:00:00.000Z",
            "cause": {
              "at": "2026-10-31T00:00:00.000Z",
              "eventId": "8da74203-1b37-4db3-aacf-c44145ebf8aa",
              "reason": "EXPIRED"
            },
            "eventId": "8da74203-1b37-4db3-aacf-c44145ebf8aa",
            "reason": "GROUP_EXPIRED"
          },
          "role": "CLAIM",
          "seatClaimId": "17f14316-462a-4789-8d98-44ddf0bc383f"
        },
        {
          "accessSince": "2026-10-01T02:00:00.000Z",
          "accessUntil": "2026-10-31T00:00:00.000Z",
          "appTransactionId": "704000004000000003",
          "hasAccess": false,
          "memberRef": "m2",
          "originalTransactionId": null,
          "revocation": {
            "at": "2026-10-31T00:00:00.000Z",
            "cause": {
              "at": "2026-10-31T00:00:00.000Z",
              "eventId": "8da74203-1b37-4db3-aacf-c44145ebf8aa",
              "reason": "EXPIRED"
            },
            "eventId": "8da74203-1b37-4db3-aacf-c44145ebf8aa",
            "reason": "GROUP_EXPIRED"
          },
          "role": "CLAIM",
          "seatClaimId": "6311d4e8-362d-4309-ba39-fa8b03149722"
        }
      ],
      "productId": "com.example.reps.team.monthly",
      "purchaserOriginalTransactionId": "2000004000000001",
      "seats": {
        "assigned": 0,
        "available": 4,
        "claimed": 3,
        "overCapacity": 0,
        "refunded": 0,
        "renewalOverCapacity": 0,
        "renewalTotal": 8,
        "total": 8
      },
      "status": "EXPIRED"
    },
    "recommendedActions": [
      {
        "code": "backfill",
        "text": "run a backfill from Get Notification History for 2026-11-01T00:00:00.000Z – 2026-11-02T00:00:00.000Z: `seatledger backfill --since 2026-11-01T00:00:00.000Z`. Apple's notification history reaches back 30 days in Sandbox (to 2026-11-01T00:00:00.000Z); the suspected gap starts before that, so the part before 2026-11-01T00:00:00.000Z can only be recovered from Get Transaction History / Get All Subscription Statuses (`seatledger reconcile 2000004000000001`)"
      }
    ],
    "report": "group-audit",
    "timeline": [
      {
        "after": {
          "held": 0,
          "seats": 8,
          "status": "ACTIVE",
          "withAccess": 1
        },
        "backfill": false,
        "changes": [
          {
            "after": "ACTIVE",
            "before": null,
            "field": "status",
            "member": null,
            "text": "group subscription active"
          },
          {
            "after": 8,
            "before": null,
            "field": "seats.total",
            "member": null,
            "text": "seats 8"
          },
          {
            "after": {
              "accessSince": "2026-10-01T00:00:00.000Z",
              "accessUntil": "2026-10-31T00:00:00.000Z",
              "appTransactionId": "704000004000000001",
              "hasAccess": true,
              "memberRef": null,
              "originalTransactionId": "2000004000000001",
              "revocation": null,
              "role": "PURCHASER",
              "seatClaimId": null
            },
            "before": null,
            "field": "member.added",
            "member": "app-tx 704000004000000001",
            "text": "member purchaser 2000004000000001 joined with access"
          }
        ],
        "duplicateArrivals": 0,
        "effectiveAt": "2026-10-01T00:00:00.000Z",
        "eventId": "8da74203-1b37-4db3-aacf-c44145ebf8aa",
        "late": false,
        "origin": "file",
        "position": 53,
        "recordedAt": "2026-10-01T00:00:01.000Z",
        "retractedBy": null,
        "signedAt": "2026-10-01T00:00:00.000Z",
        "synthetic": false,
        "what": "SUBSCRIBED / INITIAL_BUY"
      },
      {
        "after": {
          "held": 1,
          "seats": 8,
          "status": "ACTIVE",
          "withAccess": 2
        },
        "backfill": false,
        "changes": [
          {
            "after": {
              "accessSince": "2026-10-01T01:00:00.000Z",
              "accessUntil": "2026-10-31T00:00:00.000Z",
              "appTransactionId": "704000004000000002",
              "hasAccess": true,
              "memberRef": "m1",
              "originalTransactionId": null,
              "revocation": null,
              "role": "CLAIM",
              "seatClaimId": "17f14316-462a-4789-8d98-44ddf0bc383f"
            },
            "before": null,
            "field": "member.added",
            "member": "m1",
            "text": "member m1 (claim 17f14316…) joined with access"
          }
        ],
        "duplicateArrivals": 0,
        "effectiveAt": "2026-10-01T01:00:00.000Z",
        "eventId": "003caaaab158936f11fb315db7027fe4005504cfb5b732a4ef0071b7af1f6a01",
        "late": false,
        "origin": "file",
        "position": 54,
        "recordedAt": "2026-10-01T01:00:01.000Z",
        "retractedBy": null,
        "signedAt": "2026-10-01T01:00:00.000Z",
        "synthetic": false,
        "what": "ClaimSeat → 200"
      },
      {
        "after": {
          "held": 2,
          "seats": 8,
          "status": "ACTIVE",
          "withAccess": 3
        },
        "backfill": false,
        "changes": [
          {
            "after": {
              "accessSince": "2026-10-01T02:00:00.000Z",
              "accessUntil": "2026-10-31T00:00:00.000Z",
              "appTransactionId": null,
              "hasAccess": true,
              "memberRef": "m2",
              "originalTransactionId": null,
              "revocation": null,
              "role": "CLAIM",
              "seatClaimId": "6311d4e8-362d-4309-ba39-fa8b03149722"
            },
            "before": null,
            "field": "member.added",
            "member": "m2",
            "text": "member m2 (claim 6311d4e8…) joined with access"
          }
        ],
        "duplicateArrivals": 0,
        "effectiveAt": "2026-10-01T02:00:00.000Z",
        "eventId": "6181ef57b2630c7caad173a9f08510fbb011838d6394155c7eaf5747bb32ae31",
        "late": false,
        "origin": "file",
        "position": 55,
        "recordedAt": "2026-10-01T02:00:01.000Z",
        "retractedBy": null,
        "signedAt": "2026-10-01T02:00:00.000Z",
        "synthetic": false,
        "what": "ClaimSeat → 200"
      },
      {
        "after": {
          "held": 2,
          "seats": 8,
          "status": "ACTIVE",
          "withAccess": 3
        },
        "backfill": false,
        "changes": [],
        "duplicateArrivals": 0,
        "effectiveAt": "2026-10-01T02:00:30.000Z",
        "eventId": "62e5d80cc3e2ca6a02ae9396e26546ea41ddd2711d0cc7f8fa73d89d867e6126",
        "late": false,
        "origin": "file",
        "position": 56,
        "recordedAt": "2026-10-01T02:00:31.000Z",
        "retractedBy": null,
        "signedAt": "2026-10-01T02:00:30.000Z",
        "synthetic": false,
        "what": "ClaimSeat → 200"
      },
      {
        "after": {
          "held": 2,
          "seats": 8,
          "status": "ACTIVE",
          "withAccess": 3
        },
        "backfill": false,
        "changes": [
          {
            "after": "704000004000000003",
            "before": null,
            "field": "member.appTransactionId",
            "member": "m2",
            "text": "member m2 (claim 6311d4e8…) associated with app transaction 704000004000000003 (access unchanged)"
          }
        ],
        "duplicateArrivals": 0,
        "effectiveAt": "2026-10-01T03:00:30.000Z",
        "eventId": "24700904e91bb0c32d098c5590003e76b35589bcecda8bd737b896d8f80ce9fd",
        "late": false,
        "origin": "file",
        "position": 57,
        "recordedAt": "2026-10-01T03:00:31.000Z",
        "retractedBy": null,
        "signedAt": "2026-10-01T03:00:30.000Z",
        "synthetic": false,
        "what": "AssociateSeat → 200"
      },
      {
        "after": {
          "held": 3,
          "seats": 8,
          "status": "ACTIVE",
          "withAccess": 4
        },
        "backfill": false,
        "changes": [
          {
            "after": {
              "accessSince": "2026-10-01T04:00:30.000Z",
              "accessUntil": "2026-10-31T00:00:00.000Z",
              "appTransactionId": null,
              "hasAccess": true,
              "memberRef": "m3",
              "originalTransactionId": null,
              "revocation": null,
              "role": "CLAIM",
              "seatClaimId": "0c20e22a-c2e6-4017-a89f-78cf8d66533a"
            },
            "before": null,
            "field": "member.added",
            "member": "m3",
            "text": "member m3 (claim 0c20e22a…) joined with access"
          }
        ],
        "duplicateArrivals": 0,
        "effectiveAt": "2026-10-01T04:00:30.000Z",
        "eventId": "010533c0e8f06b55ca906a9635c100c44e82706851a3ef2fbe522f2e3155b37f",
        "late": false,
        "origin": "file",
        "position": 58,
        "recordedAt": "2026-10-01T04:00:31.000Z",
        "retractedBy": null,
        "signedAt": "2026-10-01T04:00:30.000Z",
        "synthetic": false,
        "what": "ClaimSeat → 200"
      },
      {
        "after": {
          "held": 3,
          "seats": 8,
          "status": "ACTIVE",
          "withAccess": 4
        },
        "backfill": false,
        "changes": [
          {
            "after": {
              "availableSeatCount": 4,
              "totalSeatCount": 8
            },
            "before": null,
            "field": "apple",
            "member": null,
            "text": "Apple reports 8 seats, 4 available, 3 claim(s)"
          }
        ],
        "duplicateArrivals": 0,
        "effectiveAt": "2026-10-01T05:00:30.000Z",
        "eventId": "5cb579758e577639cd43239c141a0c58cba4047914fcac93bbf01a113f937635",
        "late": false,
        "origin": "file",
        "position": 59,
        "recordedAt": "2026-10-01T05:00:31.000Z",
        "retractedBy": null,
        "signedAt": "2026-10-01T05:00:30.000Z",
        "synthetic": false,
        "what": "GetSeatInfo → 200"
      },
      {
        "after": {
          "held": 3,
          "seats": 8,
          "status": "EXPIRED",
          "withAccess": 0
        },
        "backfill": false,
        "changes": [
          {
            "after": "EXPIRED",
            "before": "ACTIVE",
            "field": "status",
            "member": null,
            "text": "group subscription expired: everyone loses access"
          },
          {
            "after": false,
            "before": true,
            "field": "member.access",
            "member": "app-tx 704000004000000001",
            "text": "member purchaser 2000004000000001 lost access: subscription expired"
          },
          {
            "after": false,
            "before": true,
            "field": "member.access",
            "member": "m3",
            "text": "member m3 (claim 0c20e22a…) lost access: group subscription expired, caused by EXPIRED (subscription expired), the same event"
          },
          {
            "after": false,
            "before": true,
            "field": "member.access",
            "member": "m1",
            "text": "member m1 (claim 17f14316…) lost access: group subscription expired, caused by EXPIRED (subscription expired), the same event"
          },
          {
            "after": false,
            "before": true,
            "field": "member.access",
            "member": "m2",
            "text": "member m2 (claim 6311d4e8…) lost access: group subscription expired, caused by EXPIRED (subscription expired), the same event"
          }
        ],
        "duplicateArrivals": 0,
        "effectiveAt": "2026-10-31T00:00:00.000Z",
        "eventId": null,
        "late": false,
        "origin": null,
        "position": null,
        "recordedAt": null,
        "retractedBy": null,
        "signedAt": null,
        "synthetic": true,
        "what": "time passed (no event)"
      }
    ]
  },
  "changes": {
    "changes": [
      {
        "eventId": "dbbd1af9-0cf7-4c28-a7f5-093304973988",
        "groupKeys": [
          "2000001000000001"
        ],
        "kind": "notification",
        "occurredAt": "2026-10-01T00:00:00.000Z",
        "position": 1,
        "recordedAt": "2026-10-01T00:00:01.000Z",
        "subtype": "INITIAL_BUY",
        "type": "SUBSCRIBED"
      },
      {
        "eventId": "df48fff6-b247-4b02-ab84-8016fe2c66e5",
        "groupKeys": [
          "2000001000000001"
        ],
        "kind": "notification",
        "occurredAt": "2026-10-01T01:00:00.000Z",
        "position": 2,
        "recordedAt": "2026-10-01T01:00:01.000Z",
        "subtype": "INITIAL_BUY",
        "type": "SUBSCRIBED"
      }
    ],
    "head": 160,
    "next": 2
  },
  "cursorPastHead": {
    "error": "cursor_past_head",
    "head": 160,
    "message": "after=999999 is past the ledger's head, position 160: this cursor was not given by this ledger as it is (restored from a backup?); read again from a position at or before 160"
  },
  "diffApple": {
    "appleObservedAt": "2026-10-01T05:00:30.000Z",
    "changes": [],
    "differences": false,
    "groupKey": "2000004000000001",
    "mode": "against-apple",
    "olderSide": "ours",
    "oursLatestAt": "2026-10-01T04:00:30.000Z"
  },
  "diffKnownAt": {
    "after": {
      "asOf": "2026-12-01T00:00:00.000Z",
      "knownAt": "2026-12-01T00:00:00.000Z"
    },
    "before": {
      "asOf": "2026-12-01T00:00:00.000Z",
      "knownAt": "2026-10-01T00:00:00.000Z"
    },
    "changes": [
      {
        "after": "EXPIRED",
        "before": "UNKNOWN",
        "field": "status",
        "member": null,
        "text": "group subscription expired: everyone loses access"
      },
      {
        "after": 8,
        "before": null,
        "field": "seats.total",
        "member": null,
        "text": "seats 8"
      },
      {
        "after": {
          "accessSince": "2026-10-01T00:00:00.000Z",
          "accessUntil": "2026-10-31T00:00:00.000Z",
          "appTransactionId": "704000004000000001",
          "hasAccess": false,
          "memberRef": null,
          "originalTransactionId": "2000004000000001",
          "revocation": {
            "at": "2026-10-31T00:00:00.000Z",
            "eventId": "8da74203-1b37-4db3-aacf-c44145ebf8aa",
            "reason": "EXPIRED"
          },
          "role": "PURCHASER",
          "seatClaimId": null
        },
        "before": null,
        "field": "member.added",
        "member": "app-tx 704000004000000001",
        "text": "member purchaser 2000004000000001 recorded without access"
      },
      {
        "after": {
          "accessSince": "2026-10-01T04:00:30.000Z",
          "accessUntil": "2026-10-31T00:00:00.000Z",
          "appTransactionId": null,
          "hasAccess": false,
          "memberRef": "m3",
          "originalTransactionId": null,
          "revocation": {
            "at": "2026-10-31T00:00:00.000Z",
            "cause": {
              "at": "2026-10-31T00:00:00.000Z",
              "eventId": "8da74203-1b37-4db3-aacf-c44145ebf8aa",
              "reason": "EXPIRED"
            },
            "eventId": "8da74203-1b37-4db3-aacf-c44145ebf8aa",
            "reason": "GROUP_EXPIRED"
          },
          "role": "CLAIM",
          "seatClaimId": "0c20e22a-c2e6-4017-a89f-78cf8d66533a"
        },
        "before": null,
        "field": "member.added",
        "member": "m3",
        "text": "member m3 (claim 0c20e22a…) recorded without access"
      },
      {
        "after": {
          "accessSince": "2026-10-01T01:00:00.000Z",
          "accessUntil": "2026-10-31T00:00:00.000Z",
          "appTransactionId": "704000004000000002",
          "hasAccess": false,
          "memberRef": "m1",
          "originalTransactionId": null,
          "revocation": {
            "at": "2026-10-31T00:00:00.000Z",
            "cause": {
              "at": "2026-10-31T00:00:00.000Z",
              "eventId": "8da74203-1b37-4db3-aacf-c44145ebf8aa",
              "reason": "EXPIRED"
            },
            "eventId": "8da74203-1b37-4db3-aacf-c44145ebf8aa",
            "reason": "GROUP_EXPIRED"
          },
          "role": "CLAIM",
          "seatClaimId": "17f14316-462a-4789-8d98-44ddf0bc383f"
        },
        "before": null,
        "field": "member.added",
        "member": "m1",
        "text": "member m1 (claim 17f14316…) recorded without access"
      },
      {
        "after": {
          "accessSince": "2026-10-01T02:00:00.000Z",
          "accessUntil": "2026-10-31T00:00:00.000Z",
          "appTransactionId": "704000004000000003",
          "hasAccess": false,
          "memberRef": "m2",
          "originalTransactionId": null,
          "revocation": {
            "at": "2026-10-31T00:00:00.000Z",
            "cause": {
              "at": "2026-10-31T00:00:00.000Z",
              "eventId": "8da74203-1b37-4db3-aacf-c44145ebf8aa",
              "reason": "EXPIRED"
            },
            "eventId": "8da74203-1b37-4db3-aacf-c44145ebf8aa",
            "reason": "GROUP_EXPIRED"
          },
          "role": "CLAIM",
          "seatClaimId": "6311d4e8-362d-4309-ba39-fa8b03149722"
        },
        "before": null,
        "field": "member.added",
        "member": "m2",
        "text": "member m2 (claim 6311d4e8…) recorded without access"
      },
      {
        "after": {
          "availableSeatCount": 4,
          "totalSeatCount": 8
        },
        "before": null,
        "field": "apple",
        "member": null,
        "text": "Apple reports 8 seats, 4 available, 3 claim(s)"
      }
    ],
    "differences": true,
    "explainingEvents": [
      {
        "eventId": "8da74203-1b37-4db3-aacf-c44145ebf8aa",
        "occurredAt": "2026-10-01T00:00:00.000Z",
        "origin": "file",
        "position": 53,
        "recordedAt": "2026-10-01T00:00:01.000Z",
        "what": "SUBSCRIBED / INITIAL_BUY"
      },
      {
        "eventId": "003caaaab158936f11fb315db7027fe4005504cfb5b732a4ef0071b7af1f6a01",
        "occurredAt": "2026-10-01T01:00:00.000Z",
        "origin": "file",
        "position": 54,
        "recordedAt": "2026-10-01T01:00:01.000Z",
        "what": "ClaimSeat → 200"
      },
      {
        "eventId": "6181ef57b2630c7caad173a9f08510fbb011838d6394155c7eaf5747bb32ae31",
        "occurredAt": "2026-10-01T02:00:00.000Z",
        "origin": "file",
        "position": 55,
        "recordedAt": "2026-10-01T02:00:01.000Z",
        "what": "ClaimSeat → 200"
      },
      {
        "eventId": "62e5d80cc3e2ca6a02ae9396e26546ea41ddd2711d0cc7f8fa73d89d867e6126",
        "occurredAt": "2026-10-01T02:00:30.000Z",
        "origin": "file",
        "position": 56,
        "recordedAt": "2026-10-01T02:00:31.000Z",
        "what": "ClaimSeat → 200"
      },
      {
        "eventId": "24700904e91bb0c32d098c5590003e76b35589bcecda8bd737b896d8f80ce9fd",
        "occurredAt": "2026-10-01T03:00:30.000Z",
        "origin": "file",
        "position": 57,
        "recordedAt": "2026-10-01T03:00:31.000Z",
        "what": "AssociateSeat → 200"
      },
      {
        "eventId": "010533c0e8f06b55ca906a9635c100c44e82706851a3ef2fbe522f2e3155b37f",
        "occurredAt": "2026-10-01T04:00:30.000Z",
        "origin": "file",
        "position": 58,
        "recordedAt": "2026-10-01T04:00:31.000Z",
        "what": "ClaimSeat → 200"
      },
      {
        "eventId": "5cb579758e577639cd43239c141a0c58cba4047914fcac93bbf01a113f937635",
        "occurredAt": "2026-10-01T05:00:30.000Z",
        "origin": "file",
        "position": 59,
        "recordedAt": "2026-10-01T05:00:31.000Z",
        "what": "GetSeatInfo → 200"
      }
    ],
    "groupKey": "2000004000000001",
    "mode": "known-at"
  },
  "duplicate": {
    "existingPosition": 160,
    "result": "duplicate"
  },
  "entitlements": {
    "asOf": "2026-10-15T00:00:00.000Z",
    "bundleId": "com.example.reps",
    "entitlements": [
      {
        "alsoThrough": [],
        "bundleId": "com.example.reps",
        "entitled": true,
        "environment": "Sandbox",
        "productId": "com.example.reps.team.monthly",
        "reason": null,
        "since": "2026-10-01T00:00:00.000Z",
        "through": {
          "appTransactionId": "704000004000000001",
          "entitled": true,
          "groupKey": "2000004000000001",
          "memberRef": null,
          "originalTransactionId": "2000004000000001",
          "purchaserOriginalTransactionId": "2000004000000001",
          "revocation": null,
          "seatClaimId": null,
          "since": "2026-10-01T00:00:00.000Z",
          "source": "PURCHASED",
          "status": "ACTIVE",
          "until": "2026-10-31T00:00:00.000Z"
        },
        "until": "2026-10-31T00:00:00.000Z"
      }
    ],
    "environment": "Sandbox",
    "identifier": "704000004000000001",
    "knownAt": null,
    "person": {
      "conflicts": [],
      "identifiers": [
        "704000004000000001"
      ],
      "links": [],
      "userIds": []
    }
  },
  "epochSeconds": {
    "didYouMean": "2024-10-27T03:33:20.000Z",
    "error": "bad_parameter",
    "message": "query parameter asOf=1730000000 is ambiguous: as epoch seconds it is 2024-10-27T03:33:20.000Z, as milliseconds 1970-01-21T00:33:20.000Z; give milliseconds (1730000000000) or ISO 8601",
    "parameter": "asOf",
    "value": "1730000000"
  },
  "forbidden": {
    "error": "forbidden",
    "message": "token examples has scopes read, record; this endpoint needs scope seats"
  },
  "group": {
    "apple": {
      "assignedSeatClaimIds": [
        "0c20e22a-c2e6-4017-a89f-78cf8d66533a",
        "17f14316-462a-4789-8d98-44ddf0bc383f",
        "6311d4e8-362d-4309-ba39-fa8b03149722"
      ],
      "availableSeatCount": 4,
      "observedAt": "2026-10-01T05:00:30.000Z",
      "totalSeatCount": 8
    },
    "asOf": "2026-12-01T00:00:00.000Z",
    "drift": [],
    "groupIds": [],
    "groupKey": "2000004000000001",
    "invitationManagement": "DEVELOPER",
    "knownAt": null,
    "members": [
      {
        "accessSince": "2026-10-01T00:00:00.000Z",
        "accessUntil": "2026-10-31T00:00:00.000Z",
        "appTransactionId": "704000004000000001",
        "hasAccess": false,
        "memberRef": null,
        "originalTransactionId": "2000004000000001",
        "revocation": {
          "at": "2026-10-31T00:00:00.000Z",
          "eventId": "8da74203-1b37-4db3-aacf-c44145ebf8aa",
          "reason": "EXPIRED"
        },
        "role": "PURCHASER",
        "seatClaimId": null
      },
      {
        "accessSince": "2026-10-01T04:00:30.000Z",
        "accessUntil": "2026-10-31T00:00:00.000Z",
        "appTransactionId": null,
        "hasAccess": false,
        "memberRef": "m3",
        "originalTransactionId": null,
        "revocation": {
          "at": "2026-10-31T00:00:00.000Z",
          "cause": {
            "at": "2026-10-31T00:00:00.000Z",
            "eventId": "8da74203-1b37-4db3-aacf-c44145ebf8aa",
            "reason": "EXPIRED"
          },
          "eventId": "8da74203-1b37-4db3-aacf-c44145ebf8aa",
          "reason": "GROUP_EXPIRED"
        },
        "role": "CLAIM",
        "seatClaimId": "0c20e22a-c2e6-4017-a89f-78cf8d66533a"
      },
      {
        "accessSince": "2026-10-01T01:00:00.000Z",
        "accessUntil": "2026-10-31T00:00:00.000Z",
        "appTransactionId": "704000004000000002",
        "hasAccess": false,
        "memberRef": "m1",
        "originalTransactionId": null,
        "revocation": {
          "at": "2026-10-31T00:00:00.000Z",
          "cause": {
            "at": "2026-10-31T00:00:00.000Z",
            "eventId": "8da74203-1b37-4db3-aacf-c44145ebf8aa",
            "reason": "EXPIRED"
          },
          "eventId": "8da74203-1b37-4db3-aacf-c44145ebf8aa",
          "reason": "GROUP_EXPIRED"
        },
        "role": "CLAIM",
        "seatClaimId": "17f14316-462a-4789-8d98-44ddf0bc383f"
      },
      {
        "accessSince": "2026-10-01T02:00:00.000Z",
        "accessUntil": "2026-10-31T00:00:00.000Z",
        "appTransactionId": "704000004000000003",
        "hasAccess": false,
        "memberRef": "m2",
        "originalTransactionId": null,
        "revocation": {
          "at": "2026-10-31T00:00:00.000Z",
          "cause": {
            "at": "2026-10-31T00:00:00.000Z",
            "eventId": "8da74203-1b37-4db3-aacf-c44145ebf8aa",
            "reason": "EXPIRED"
          },
          "eventId": "8da74203-1b37-4db3-aacf-c44145ebf8aa",
          "reason": "GROUP_EXPIRED"
        },
        "role": "CLAIM",
        "seatClaimId": "6311d4e8-362d-4309-ba39-fa8b03149722"
      }
    ],
    "productId": "com.example.reps.team.monthly",
    "purchaserOriginalTransactionId": "2000004000000001",
    "seats": {
      "assigned": 0,
      "available": 4,
      "claimed": 3,
      "overCapacity": 0,
      "refunded": 0,
      "renewalOverCapacity": 0,
      "renewalTotal": 8,
      "total": 8
    },
    "status": "EXPIRED"
  },
  "groupsPage": {
    "groups": [
      {
        "apple": null,
        "asOf": "2026-12-01T00:00:00.000Z",
        "drift": [],
        "groupIds": [
          "810000000000000001"
        ],
        "groupKey": "2000000000000001",
        "invitationManagement": "APPLE",
        "knownAt": null,
        "members": [
          {
            "accessSince": "2026-10-01T00:00:00.000Z",
            "accessUntil": "2026-10-31T00:00:00.000Z",
            "appTransactionId": "704000000000000001",
            "hasAccess": false,
            "memberRef": null,
            "originalTransactionId": "2000000000000001",
            "revocation": {
              "at": "2026-10-31T00:00:00.000Z",
              "eventId": "55e67b4c-e7f0-4ee1-923a-cdf2de04c44d",
              "reason": "EXPIRED"
            },
            "role": "PURCHASER",
            "seatClaimId": null
          }
        ],
        "productId": "com.example.reps.team.monthly",
        "purchaserOriginalTransactionId": "2000000000000001",
        "seats": {
          "assigned": 0,
          "available": 7,
          "claimed": 0,
          "overCapacity": 0,
          "refunded": 0,
          "renewalOverCapacity": 0,
          "renewalTotal": 8,
          "total": 8
        },
        "status": "EXPIRED"
      }
    ],
    "nextCursor": "2000000000000001"
  },
  "health": {
    "commit": "0000000",
    "status": "ok",
    "version": "0.1.0-dev"
  },
  "member": {
    "hasAccess": false,
    "identifier": "704000004000000001",
    "memberships": [
      {
        "asOf": "2026-12-01T00:00:00.000Z",
        "groupKey": "2000004000000001",
        "member": {
          "accessSince": "2026-10-01T00:00:00.000Z",
          "accessUntil": "2026-10-31T00:00:00.000Z",
          "appTransactionId": "704000004000000001",
          "hasAccess": false,
          "memberRef": null,
          "originalTransactionId": "2000004000000001",
          "revocation": {
            "at": "2026-10-31T00:00:00.000Z",
            "eventId": "8da74203-1b37-4db3-aacf-c44145ebf8aa",
            "reason": "EXPIRED"
          },
          "role": "PURCHASER",
          "seatClaimId": null
        },
        "status": "EXPIRED"
      }
    ]
  },
  "notFound": {
    "error": "not_found",
    "message": "no group or member matches no-such-group (try a purchaser originalTransactionId, a groupId, an appTransactionId, a transaction id or a seatClaimId)"
  },
  "quarantined": {
    "errorCode": "not_jws",
    "quarantineId": 1,
    "reason": "not a JWS: expected 3 dot-separated parts, found 1",
    "result": "quarantined"
  },
  "ready": {
    "headPosition": 160,
    "ledgers": [
      {
        "bundleId": "com.example.reps",
        "environment": "Sandbox",
        "headPosition": 160,
        "name": "default",
        "status": "ready"
      }
    ],
    "status": "ready"
  },
  "recordAppended": {
    "carriedDuplicates": 0,
    "eventId": "afc1fd46672277dd681aefa2994888dea3012926b125ff51feb6bc5641faaeb8",
    "outcome": "appended",
    "positions": [
      161
    ]
  },
  "recordDuplicate": {
    "eventId": "afc1fd46672277dd681aefa2994888dea3012926b125ff51feb6bc5641faaeb8",
    "existingPosition": 161,
    "outcome": "duplicate"
  },
  "recordEnvelope": {
    "apiResponse": {
      "body": {
        "seatClaimId": "6ff243d4-6a07-4c98-a614-1bcdc125356d"
      },
      "context": {
        "memberRef": "m1"
      },
      "endpoint": "ClaimSeat",
      "environment": "Sandbox",
      "method": "POST",
      "path": "/groups/v1/transactions/2000010000000001/seats",
      "requestBody": {
        "requestIdentifier": "81fa4e8c-3529-422a-839a-543e3077ec0e"
      },
      "respondedAt": "2026-10-01T01:00:00.000Z",
      "status": 200
    }
  },
  "recordEnvironmentMismatch": {
    "error": "environment_mismatch",
    "message": "environment mismatch: apiResponse names \"Production\", ledger expects \"Sandbox\" (kept in quarantine as #2: `seatledger quarantine show 2`)",
    "quarantineId": 2
  },
  "recordMalformed": {
    "error": "malformed_json",
    "message": "malformed JSON: unterminated object at end of input (byte 40) (kept in quarantine as #3: `seatledger quarantine show 3`)",
    "quarantineId": 3
  },
  "replay": {
    "entries": [
      {
        "after": {
          "held": 0,
          "seats": 8,
          "status": "ACTIVE",
          "withAccess": 1
        },
        "backfill": false,
        "changes": [
          {
            "after": "ACTIVE",
            "before": null,
            "field": "status",
            "member": null,
            "text": "group subscription active"
          },
          {
            "after": 8,
            "before": null,
            "field": "seats.total",
            "member": null,
            "text": "seats 8"
          },
          {
            "after": {
              "accessSince": "2026-10-01T00:00:00.000Z",
              "accessUntil": "2026-10-31T00:00:00.000Z",
              "appTransactionId": "704000004000000001",
              "hasAccess": true,
              "memberRef": null,
              "originalTransactionId": "2000004000000001",
              "revocation": null,
              "role": "PURCHASER",
              "seatClaimId": null
            },
            "before": null,
            "field": "member.added",
            "member": "app-tx 704000004000000001",
            "text": "member purchaser 2000004000000001 joined with access"
          }
        ],
        "duplicateArrivals": 0,
        "effectiveAt": "2026-10-01T00:00:00.000Z",
        "eventId": "8da74203-1b37-4db3-aacf-c44145ebf8aa",
        "late": false,
        "origin": "file",
        "position": 53,
        "recordedAt": "2026-10-01T00:00:01.000Z",
        "retractedBy": null,
        "signedAt": "2026-10-01T00:00:00.000Z",
        "synthetic": false,
        "what": "SUBSCRIBED / INITIAL_BUY"
      },
      {
        "after": {
          "held": 1,
          "seats": 8,
          "status": "ACTIVE",
          "withAccess": 2
        },
        "backfill": false,
        "changes": [
          {
            "after": {
              "accessSince": "2026-10-01T01:00:00.000Z",
              "accessUntil": "2026-10-31T00:00:00.000Z",
              "appTransactionId": "704000004000000002",
              "hasAccess": true,
              "memberRef": "m1",
              "originalTransactionId": null,
              "revocation": null,
              "role": "CLAIM",
              "seatClaimId": "17f14316-462a-4789-8d98-44ddf0bc383f"
            },
            "before": null,
            "field": "member.added",
            "member": "m1",
            "text": "member m1 (claim 17f14316…) joined with access"
          }
        ],
        "duplicateArrivals": 0,
        "effectiveAt": "2026-10-01T01:00:00.000Z",
        "eventId": "003caaaab158936f11fb315db7027fe4005504cfb5b732a4ef0071b7af1f6a01",
        "late": false,
        "origin": "file",
        "position": 54,
        "recordedAt": "2026-10-01T01:00:01.000Z",
        "retractedBy": null,
        "signedAt": "2026-10-01T01:00:00.000Z",
        "synthetic": false,
        "what": "ClaimSeat → 200"
      },
      {
        "after": {
          "held": 2,
          "seats": 8,
          "status": "ACTIVE",
          "withAccess": 3
        },
        "backfill": false,
        "changes": [
          {
            "after": {
              "accessSince": "2026-10-01T02:00:00.000Z",
              "accessUntil": "2026-10-31T00:00:00.000Z",
              "appTransactionId": null,
              "hasAccess": true,
              "memberRef": "m2",
              "originalTransactionId": null,
              "revocation": null,
              "role": "CLAIM",
              "seatClaimId": "6311d4e8-362d-4309-ba39-fa8b03149722"
            },
            "before": null,
            "field": "member.added",
            "member": "m2",
            "text": "member m2 (claim 6311d4e8…) joined with access"
          }
        ],
        "duplicateArrivals": 0,
        "effectiveAt": "2026-10-01T02:00:00.000Z",
        "eventId": "6181ef57b2630c7caad173a9f08510fbb011838d6394155c7eaf5747bb32ae31",
        "late": false,
        "origin": "file",
        "position": 55,
        "recordedAt": "2026-10-01T02:00:01.000Z",
        "retractedBy": null,
        "signedAt": "2026-10-01T02:00:00.000Z",
        "synthetic": false,
        "what": "ClaimSeat → 200"
      },
      {
        "after": {
          "held": 2,
          "seats": 8,
          "status": "ACTIVE",
          "withAccess": 3
        },
        "backfill": false,
        "changes": [],
        "duplicateArrivals": 0,
        "effectiveAt": "2026-10-01T02:00:30.000Z",
        "eventId": "62e5d80cc3e2ca6a02ae9396e26546ea41ddd2711d0cc7f8fa73d89d867e6126",
        "late": false,
        "origin": "file",
        "position": 56,
        "recordedAt": "2026-10-01T02:00:31.000Z",
        "retractedBy": null,
        "signedAt": "2026-10-01T02:00:30.000Z",
        "synthetic": false,
        "what": "ClaimSeat → 200"
      },
      {
        "after": {
          "held": 2,
          "seats": 8,
          "status": "ACTIVE",
          "withAccess": 3
        },
        "backfill": false,
        "changes": [
          {
            "after": "704000004000000003",
            "before": null,
            "field": "member.appTransactionId",
            "member": "m2",
            "text": "member m2 (claim 6311d4e8…) associated with app transaction 704000004000000003 (access unchanged)"
          }
        ],
        "duplicateArrivals": 0,
        "effectiveAt": "2026-10-01T03:00:30.000Z",
        "eventId": "24700904e91bb0c32d098c5590003e76b35589bcecda8bd737b896d8f80ce9fd",
        "late": false,
        "origin": "file",
        "position": 57,
        "recordedAt": "2026-10-01T03:00:31.000Z",
        "retractedBy": null,
        "signedAt": "2026-10-01T03:00:30.000Z",
        "synthetic": false,
        "what": "AssociateSeat → 200"
      },
      {
        "after": {
          "held": 3,
          "seats": 8,
          "status": "ACTIVE",
          "withAccess": 4
        },
        "backfill": false,
        "changes": [
          {
            "after": {
              "accessSince": "2026-10-01T04:00:30.000Z",
              "accessUntil": "2026-10-31T00:00:00.000Z",
              "appTransactionId": null,
              "hasAccess": true,
              "memberRef": "m3",
              "originalTransactionId": null,
              "revocation": null,
              "role": "CLAIM",
              "seatClaimId": "0c20e22a-c2e6-4017-a89f-78cf8d66533a"
            },
            "before": null,
            "field": "member.added",
            "member": "m3",
            "text": "member m3 (claim 0c20e22a…) joined with access"
          }
        ],
        "duplicateArrivals": 0,
        "effectiveAt": "2026-10-01T04:00:30.000Z",
        "eventId": "010533c0e8f06b55ca906a9635c100c44e82706851a3ef2fbe522f2e3155b37f",
        "late": false,
        "origin": "file",
        "position": 58,
        "recordedAt": "2026-10-01T04:00:31.000Z",
        "retractedBy": null,
        "signedAt": "2026-10-01T04:00:30.000Z",
        "synthetic": false,
        "what": "ClaimSeat → 200"
      },
      {
        "after": {
          "held": 3,
          "seats": 8,
          "status": "ACTIVE",
          "withAccess": 4
        },
        "backfill": false,
        "changes": [
          {
            "after": {
              "availableSeatCount": 4,
              "totalSeatCount": 8
            },
            "before": null,
            "field": "apple",
            "member": null,
            "text": "Apple reports 8 seats, 4 available, 3 claim(s)"
          }
        ],
        "duplicateArrivals": 0,
        "effectiveAt": "2026-10-01T05:00:30.000Z",
        "eventId": "5cb579758e577639cd43239c141a0c58cba4047914fcac93bbf01a113f937635",
        "late": false,
        "origin": "file",
        "position": 59,
        "recordedAt": "2026-10-01T05:00:31.000Z",
        "retractedBy": null,
        "signedAt": "2026-10-01T05:00:30.000Z",
        "synthetic": false,
        "what": "GetSeatInfo → 200"
      }
    ],
    "reference": "2000004000000001"
  },
  "storeKitAppended": {
    "eventId": "9e0418415a73e8cc3816f7f1632364ba8aa239d2aa717323e61e9fea6a7306eb",
    "linked": {
      "appTransactionId": "704000010000000001",
      "originalTransactionId": "2000010000000001",
      "userId": "u-42"
    },
    "outcome": "appended",
    "positions": [
      162
    ]
  },
  "storeKitDuplicate": {
    "eventId": "9e0418415a73e8cc3816f7f1632364ba8aa239d2aa717323e61e9fea6a7306eb",
    "existingPosition": 162,
    "linked": {
      "appTransactionId": "704000010000000001",
      "originalTransactionId": "2000010000000001",
      "userId": "u-42"
    },
    "outcome": "duplicate"
  },
  "storeKitRefused": {
    "error": "invalid_user_id",
    "message": "invalid user id: storeKit.userId is empty; when present it is a non-empty string of at most 256 characters (Unicode scalars), the app's own id of the person",
    "quarantineId": 4
  },
  "unauthorized": {
    "error": "unauthorized",
    "message": "this endpoint needs an Authorization: Bearer <token> header (make one with `seatledger token add NAME --scope read`)"
  },
  "unknownParameter": {
    "error": "bad_parameter",
    "message": "unknown query parameter asof (did you mean asOf?): /v1/groups/{ref} takes ledger, asOf, knownAt"
  }
}
"""#

    private static let values: [String: JSONValue] = {
        guard case .object(let members)? = try? JSONValue.parse(bytes: Array(captured.utf8)) else { return [:] }
        return members
    }()

    private static func named(_ name: String) -> JSONValue { values[name] ?? .null }

    static var appended: JSONValue { named("appended") }
    static var duplicate: JSONValue { named("duplicate") }
    static var quarantined: JSONValue { named("quarantined") }
    static var health: JSONValue { named("health") }
    static var ready: JSONValue { named("ready") }
    static var groupsPage: JSONValue { named("groupsPage") }
    static var changes: JSONValue { named("changes") }
    static var cursorPastHead: JSONValue { named("cursorPastHead") }
    static var group: JSONValue { named("group") }
    static var member: JSONValue { named("member") }
    static var entitlements: JSONValue { named("entitlements") }
    static var replay: JSONValue { named("replay") }
    static var diffKnownAt: JSONValue { named("diffKnownAt") }
    static var diffApple: JSONValue { named("diffApple") }
    static var audit: JSONValue { named("audit") }
    static var notFound: JSONValue { named("notFound") }
    static var unknownParameter: JSONValue { named("unknownParameter") }
    static var epochSeconds: JSONValue { named("epochSeconds") }
    static var unauthorized: JSONValue { named("unauthorized") }
    static var forbidden: JSONValue { named("forbidden") }
    static var storeKitAppended: JSONValue { named("storeKitAppended") }
    static var storeKitDuplicate: JSONValue { named("storeKitDuplicate") }
    static var storeKitRefused: JSONValue { named("storeKitRefused") }

    /// The request of `POST /v1/storekit` (its JWS shortened, as the webhook's example is).
    static let storeKitRequest: JSONValue = ["storeKit": ["userId": "u-42", "signedTransaction": "eyJhbGciOiJFUzI1NiIsIng1YyI6WyJ…"]]
    static var recordEnvelope: JSONValue { named("recordEnvelope") }
    static var recordAppended: JSONValue { named("recordAppended") }
    static var recordDuplicate: JSONValue { named("recordDuplicate") }
    static var recordEnvironmentMismatch: JSONValue { named("recordEnvironmentMismatch") }
    static var recordMalformed: JSONValue { named("recordMalformed") }
}
