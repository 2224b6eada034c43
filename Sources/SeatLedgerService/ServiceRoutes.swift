import AppStoreModels
import HTTPServer
import Projections

extension RouteTable {
    /// Every route of `seatledger serve`'s API listener, each declared once (the support desk's
    /// listener has its own pages: ``SupportDeskRoutes``). Matched in order; no two templates
    /// match the same path.
    static let service = RouteTable(routes: [
        .notifications, .ledgerNotifications, .healthz, .readyz, .metrics, .openAPI,
        .groups, .changes, .accessChanges, .group, .member, .entitlements, .replay, .diff, .audit,
        .claimSeat, .unclaimSeat, .associateSeat,
        .storeKit, .apiResponses,
    ])
}

/// The clock parameters' description (``ReadRoutes/clock(_:_:now:)``).
private let clockText = "ISO 8601 (`2026-11-02T00:00:00Z`, `2026-11-02`), epoch milliseconds, `now`, or relative to now (`7d`, `-1h`, `%2B2h`). "
    + "Epoch seconds and compact dates are a 400 whose `didYouMean` names the ISO form."

/// A regular expression matching any of `values` in any case (`[Aa][Cc]…`: JSON Schema patterns have no flags).
private func anyCase(_ values: Set<String>) -> String {
    let alternatives = values.sorted().map { value in
        value.map { character in
            let lower = character.lowercased(), upper = character.uppercased()
            return lower == upper ? String(character) : "[\(upper)\(lower)]"
        }.joined()
    }
    return "^(" + alternatives.joined(separator: "|") + ")$"
}

private func clock(_ name: String, _ meaning: String, times: Int = 1) -> QueryParameter {
    QueryParameter(name, times: times, schema: ["type": "string", "minLength": 1], "\(meaning). \(clockText)")
}

/// `ledger`: which ledger of the deployment a `/v1` request reads or writes.
private let ledgerParameter = QueryParameter("ledger", schema: ["type": "string", "minLength": 1],
                                             "The ledger to read or write, by its name in the deployment (`serve --config`); default every ledger the token opens "
                                                 + "(a page or a feed needs one when the token opens several)")

private let asOf = clock("asOf", "The valid time asked about (default now)")
private let knownAt = clock("knownAt", "The transaction time: only what the ledger had recorded by then (default everything)")
/// `limit` of a page (``ReadRoutes``: 1 … ``ServiceConfiguration/maxPageSize``, default 100).
private let limit = QueryParameter("limit", schema: ["type": "integer", "minimum": 1, "maximum": .int(Int64(ServiceConfiguration.defaultMaxPageSize))],
                                   "At most this many items (default 100)")

private let groupRef = ["ref": "A group key, `groupId`, or any original transaction id, app transaction id or seat claim id of the group"]
private let seatClaimId = "A seat claim id of the group (Apple's `seatClaimId`)"

private let notFound = ResponseDocument.error(404, "No group for the reference, or no route for the path", codes: ["not_found"],
                                              examples: ["unknown group": APIExamples.notFound])
private let unavailable = ResponseDocument.error(503, "The ledger could not answer", codes: ["ledger_unavailable"], headers: ["Retry-After"])

extension ServiceRoute {
    /// `POST /notifications`: Apple's webhook, verified and answered on the polling thread once durable.
    static let notifications = ServiceRoute(
        ["POST"], "/notifications", scope: .none, query: .unchecked,
        immediate: .handedOn { service, match in .later { respond in service.receiveNotification(match, respond: respond) } },
        document: RouteDocument(
            "App Store Server Notifications V2 (the webhook)",
            "The body is stored exactly as received and answered 200 only once the outcome is durable: appended, a duplicate of a stored notification, "
                + "or quarantined with its raw bytes (an unverifiable signature, a malformed body, an `apiResponse` envelope, a StoreKit input: "
                + "those go to `POST /v1/api-responses` and `POST /v1/storekit`). No token: the signature is the "
                + "authentication. A query string is ignored.",
            requestBody: RequestBodyDocument(description: "Apple's `{\"signedPayload\": \"<JWS>\"}`; any other bytes, none included, are quarantined.", required: false,
                                             media: [MediaDocument(type: "application/json", schema: .reference("SignedNotification"),
                                                                   examples: ["Apple's form": ["signedPayload": "eyJhbGciOiJFUzI1NiIsIng1YyI6WyJ…"]])]),
            responses: [
                .json(200, "Durable: appended, duplicate or quarantined", schema: "NotificationReceipt",
                      examples: ["appended": APIExamples.appended, "duplicate": APIExamples.duplicate, "quarantined": APIExamples.quarantined]),
                .error(413, "The body is over `--max-body`; nothing was stored", codes: ["body_too_large"]),
                .error(503, "Nothing could be stored; Apple retries", codes: ["not_stored"], headers: ["Retry-After"]),
            ])
    ) { service, match, fields in
        await service.receiveNotification(match, fields: &fields)
    }

    /// `POST /notifications/{ledger}`: Apple's webhook for one ledger of the deployment (the URL
    /// to paste in App Store Connect per app and environment).
    static let ledgerNotifications = ServiceRoute(
        ["POST"], "/notifications/{ledger}", scope: .none, query: .unchecked,
        immediate: .handedOn { service, match in .later { respond in service.receiveNotification(match, respond: respond) } },
        document: RouteDocument(
            "App Store Server Notifications V2 for one ledger",
            "As `POST /notifications`, appended to the ledger the path names (its name in `serve --config`): paste "
                + "`https://HOST/notifications/NAME` as the Production or Sandbox URL of the app that ledger records. A name the deployment "
                + "does not have is answered 200 and the body kept in quarantine (`no_ledger_for_notification`), never appended elsewhere.",
            pathParameters: ["ledger": "The ledger's name in the deployment"],
            requestBody: RequestBodyDocument(description: "Apple's `{\"signedPayload\": \"<JWS>\"}`; any other bytes, none included, are quarantined.", required: false,
                                             media: [MediaDocument(type: "application/json", schema: .reference("SignedNotification"),
                                                                   examples: ["Apple's form": ["signedPayload": "eyJhbGciOiJFUzI1NiIsIng1YyI6WyJ…"]])]),
            responses: [
                .json(200, "Durable: appended, duplicate or quarantined", schema: "NotificationReceipt",
                      examples: ["appended": APIExamples.appended, "quarantined": APIExamples.quarantined]),
                .error(413, "The body is over `--max-body`; nothing was stored", codes: ["body_too_large"]),
                .error(503, "Nothing could be stored in that ledger; Apple retries", codes: ["not_stored"], headers: ["Retry-After"]),
            ])
    ) { service, match, fields in
        await service.receiveNotification(match, fields: &fields)
    }

    /// `GET /healthz`: liveness.
    static let healthz = ServiceRoute(
        ["GET"], "/healthz", scope: .none, query: .unchecked,
        document: RouteDocument("Liveness", "The process answers; its version and commit.",
                                responses: [.json(200, "Alive", schema: "Health", examples: ["serve": APIExamples.health])])
    ) { service, _, _ in
        .json(["status": "ok", "version": .string(service.configuration.build.version), "commit": .string(service.configuration.build.commit)])
    }

    /// `GET /readyz`: readiness.
    static let readyz = ServiceRoute(
        ["GET"], "/readyz", scope: .none, query: .unchecked,
        document: RouteDocument(
            "Readiness",
            "A read answers, a write probe that changes nothing reaches the disk, and no notification failed to store in the last 30 s.",
            responses: [
                .json(200, "Ready", schema: "Ready", examples: ["demo ledger": APIExamples.ready]),
                .error(503, "Not ready; a load balancer should send Apple's retries elsewhere", codes: ["not_ready"], headers: ["Retry-After"]),
            ])
    ) { service, match, _ in
        try await service.readiness(match.request)
    }

    /// `GET /metrics`: Prometheus text.
    static let metrics = ServiceRoute(
        ["GET"], "/metrics", scope: .none, query: .unchecked,
        document: RouteDocument(
            "Prometheus metrics",
            "Notifications received / appended / duplicate / quarantined by reason, request counts and latency histograms by route template, "
                + "head position, newest event age, requests in flight, build info, process CPU and memory.",
            responses: [ResponseDocument(status: 200, description: "Prometheus text exposition format 0.0.4",
                                         media: [MediaDocument(type: "text/plain", schema: ["type": "string"])], headers: [])])
    ) { service, _, _ in
        try await service.metricsResponse()
    }

    /// `GET /openapi.json`: this API's OpenAPI 3.1 document (``OpenAPIDocument``).
    static let openAPI = ServiceRoute(
        ["GET"], "/openapi.json", scope: .none, query: .unchecked,
        document: RouteDocument(
            "This document",
            "The OpenAPI 3.1 document of every route, generated from the service's route table; the same file is `Events/api/openapi.json` in the repository.",
            responses: [ResponseDocument(status: 200, description: "The OpenAPI 3.1 document",
                                         media: [MediaDocument(type: "application/json", schema: ["type": "object"])], headers: [])])
    ) { _, _, _ in
        HTTPResponse(status: 200, contentType: "application/json", text: OpenAPIDocument.text)
    }

    /// `GET /v1/groups`: a page of groups.
    static let groups = ServiceRoute(
        ["GET"], "/v1/groups", scope: .read,
        query: .only([ledgerParameter, asOf, knownAt, limit,
                      QueryParameter("cursor", "The last `groupKey` of the previous page (its `nextCursor`)"),
                      QueryParameter("status", schema: ["type": "string", "pattern": .string(anyCase(GroupStatus.knownValues))],
                                     "Only groups with this status, in any case: " + GroupStatus.knownValues.sorted().joined(separator: ", ")),
                      QueryParameter("product", "Only groups of this product id")]),
        ledgers: .one,
        document: RouteDocument(
            "List groups", "Every group's `group show --json`, by group key, a page at a time.",
            responses: [.json(200, "A page of groups; `nextCursor` is null on the last page", schema: "GroupsPage",
                              examples: ["limit=1": APIExamples.groupsPage]), unavailable])
    ) { service, match, _ in
        let ledger = try service.single(match)
        return LedgerService.named(try await service.readRoutes(ledger).groups(match.request), by: ledger)
    }

    /// `GET /v1/changes`: the change feed.
    static let changes = ServiceRoute(
        ["GET"], "/v1/changes", scope: .read,
        query: .only([ledgerParameter, QueryParameter("after", schema: ["type": "integer", "minimum": 0, "maximum": .int(Int64.max)], "The cursor: events after this position (default 0)"),
                      limit,
                      QueryParameter("wait", schema: ["type": "integer", "minimum": 0, "maximum": .int(ServiceConfiguration.defaultMaxChangeWait.components.seconds)],
                                     "Seconds to wait for an event when there is none after `after` yet (default 0)")]),
        ledgers: .one,
        document: RouteDocument(
            "Change feed",
            "Committed events after position `after`, in position order, each with the keys of the groups it touched. Keep `next` as the cursor.",
            responses: [.json(200, "Events after the cursor", schema: "Changes", examples: ["after=0&limit=2": APIExamples.changes]),
                        .error(409, "The cursor is past the ledger's head (another ledger, or before a restore); the body has `head`",
                               codes: ["cursor_past_head"], examples: ["after=999999": APIExamples.cursorPastHead]),
                        unavailable])
    ) { service, match, _ in
        let ledger = try service.single(match)
        return LedgerService.named(try await service.readRoutes(ledger).changes(match.request), by: ledger)
    }

    /// `GET /v1/access-changes`: the access transitions feed (issue #47).
    static let accessChanges = ServiceRoute(
        ["GET"], "/v1/access-changes", scope: .read,
        query: .only([ledgerParameter, QueryParameter("after", schema: ["type": "integer", "minimum": 0, "maximum": .int(Int64.max)], "The cursor: transitions after this feed position (default 0)"),
                      limit,
                      QueryParameter("wait", schema: ["type": "integer", "minimum": 0, "maximum": .int(ServiceConfiguration.defaultMaxChangeWait.components.seconds)],
                                     "Seconds to wait for a transition when there is none after `after` yet (default 0)"),
                      QueryParameter("product", schema: ["type": "string", "minLength": 1], "Only transitions of this product id"),
                      QueryParameter("kind", schema: ["type": "string", "minLength": 1], "Only transitions of this kind (`GAINED`, `LOST`, `END_MOVED`, …)")]),
        ledgers: .one,
        document: RouteDocument(
            "Access changes",
            "Each change of a subject's entitlement to a product (gained, lost, its end moved, …), derived from the log and from time passing, in feed order. "
                + "Keep `next` as the cursor; folding `transition.after` by key in order gives the current entitlements. See `Events/api/access-transitions.md`.",
            responses: [.json(200, "Transitions after the cursor", schema: "AccessChanges"),
                        .error(409, "The cursor is past the feed's last position; the body has `last`", codes: ["cursor_past_head"]),
                        unavailable])
    ) { service, match, _ in
        let ledger = try service.single(match)
        return LedgerService.named(try await service.accessChanges(match.request, of: ledger), by: ledger)
    }

    /// `GET /v1/groups/{ref}`: `group show --json`, answered on the polling thread.
    static let group = ServiceRoute(
        ["GET"], "/v1/groups/{ref}", scope: .read, query: .only([ledgerParameter, asOf, knownAt]),
        immediate: .blockingRead { service, match in
            try service.searchingNow(match) { ledger in try service.readRoutes(ledger).groupNow(match.path("ref"), match.request) }
        },
        document: RouteDocument(
            "One group", "Exactly `seatledger group show REF --json`.", pathParameters: groupRef,
            responses: [.json(200, "The group's state", schema: "GroupState", examples: ["demo group": APIExamples.group]), notFound, unavailable])
    ) { service, match, _ in
        try await service.searching(match) { ledger in try await service.readRoutes(ledger).group(match.path("ref"), match.request) }
    }

    /// `GET /v1/members/{id}`: access of a member, answered on the polling thread.
    static let member = ServiceRoute(
        ["GET"], "/v1/members/{id}", scope: .read, query: .only([ledgerParameter, asOf, knownAt]),
        ledgers: .merged,
        immediate: .blockingRead { service, match in try service.members(match) },
        document: RouteDocument(
            "Does this member have access?", "`hasAccess` and `seatledger member show ID --json` as `memberships`.",
            pathParameters: ["id": "An app transaction id, original transaction id or member reference"],
            responses: [.json(200, "The member's memberships (none for an unknown id)", schema: "MemberAccess",
                              examples: ["demo member": APIExamples.member]), notFound, unavailable])
    ) { service, match, _ in
        try service.members(match)
    }

    /// `GET /v1/entitlements/{id}`: a person's entitlements per product (`seatledger entitlements ID --json`).
    static let entitlements = ServiceRoute(
        ["GET"], "/v1/entitlements/{id}", scope: .read,
        query: .only([ledgerParameter, asOf, knownAt,
                      QueryParameter("product", times: 16, schema: ["type": "string", "minLength": 1],
                                     "Only this product (give it up to 16 times for several)"),
                      QueryParameter("environment", schema: ["type": "string", "enum": .array(AppStoreEnvironment.knownValues.sorted().map(JSONValue.string))],
                                     "Only entitlements of this environment (this ledger's, else none)")]),
        ledgers: .merged,
        immediate: .blockingRead { service, match in try service.entitlementRoute.answerNow(match) },
        document: RouteDocument(
            "Is this person entitled to a product?",
            "For each product: entitled now (or at `asOf` / `knownAt`), since when, until when (the next moment it ends without news), "
                + "through what (an individual subscription, a group purchase, an assigned seat, a developer-hosted claim, Family Sharing; "
                + "the group and its purchaser), in which app and environment, and when not entitled the reason and its cause one level up. "
                + "Entitled products first. `ETag` changes when the answer does (`If-None-Match` gives a 304); `Cache-Control` allows caching "
                + "only while entitled and never past the earliest end of an entitled source.",
            pathParameters: ["id": "The app's user id (linked with `POST /v1/storekit`), an appTransactionId, an originalTransactionId, a transaction id, a seat claim id or a member reference"],
            responses: [.json(200, "The person's entitlements", schema: "Entitlements", examples: ["demo member": APIExamples.entitlements],
                              headers: ["ETag", "Cache-Control"]),
                        ResponseDocument(status: 304, description: "Not modified: `If-None-Match` names the current `ETag`", media: [],
                                         headers: ["ETag", "Cache-Control"]),
                        .error(404, "Nothing in the ledger names the identifier, or no route for the path", codes: ["not_found"]),
                        unavailable])
    ) { service, match, _ in
        try await service.entitlementRoute.answer(match)
    }

    /// `GET /v1/groups/{ref}/replay`: `replay --json`.
    static let replay = ServiceRoute(
        ["GET"], "/v1/groups/{ref}/replay", scope: .read,
        query: .only([ledgerParameter, clock("from", "The first moment replayed"), clock("to", "The last moment replayed"), knownAt]),
        document: RouteDocument(
            "Replay a group", "The group's changes over time, as `seatledger replay REF --json`.", pathParameters: groupRef,
            responses: [.json(200, "The replay", schema: "Replay", examples: ["demo group": APIExamples.replay]), notFound, unavailable])
    ) { service, match, _ in
        try await service.searching(match) { ledger in try await service.readRoutes(ledger).replay(match.path("ref"), match.request) }
    }

    /// `GET /v1/groups/{ref}/diff`: `diff --json`.
    static let diff = ServiceRoute(
        ["GET"], "/v1/groups/{ref}/diff", scope: .read,
        query: .only([ledgerParameter, clock("knownAt", "Two transaction times to compare (give it twice)", times: 2),
                      clock("asOf", "Two valid times to compare (give it twice), or the one moment of another comparison", times: 2),
                      QueryParameter("against", schema: ["type": "string", "enum": ["apple"]], "`apple`: the ledger against Apple's last recorded seat info")]),
        document: RouteDocument(
            "Diff a group", "`seatledger diff REF --json`: `knownAt` twice, `asOf` twice, or `against=apple` (with at most one `asOf`); "
                + "anything else is a 400.", pathParameters: groupRef,
            responses: [.json(200, "The difference", schema: "Diff",
                              examples: ["knownAt twice": APIExamples.diffKnownAt, "against=apple": APIExamples.diffApple]),
                        notFound, unavailable])
    ) { service, match, _ in
        try await service.searching(match) { ledger in try await service.readRoutes(ledger).diff(match.path("ref"), match.request) }
    }

    /// `GET /v1/groups/{ref}/audit`: `audit group`.
    static let audit = ServiceRoute(
        ["GET"], "/v1/groups/{ref}/audit", scope: .read,
        query: .only([ledgerParameter, QueryParameter("format", schema: ["type": "string", "enum": ["json", "markdown", "html", "text"]], "The report's format (default json)"),
                      asOf]),
        document: RouteDocument(
            "Audit a group", "`seatledger audit group REF` in the format asked for.", pathParameters: groupRef,
            responses: [ResponseDocument(status: 200, description: "The audit report", media: [
                MediaDocument(type: "application/json", schema: .reference("GroupAudit"), examples: ["demo group": APIExamples.audit]),
                MediaDocument(type: "text/markdown", schema: ["type": "string"]),
                MediaDocument(type: "text/html", schema: ["type": "string"]),
                MediaDocument(type: "text/plain", schema: ["type": "string"]),
            ], headers: []), notFound, unavailable])
    ) { service, match, _ in
        try await service.searching(match) { ledger in try await service.readRoutes(ledger).audit(match.path("ref"), match.request) }
    }

    /// The answers every seat operation may give besides its success.
    private static let seatFailures: [ResponseDocument] = [
        .error(400, "The body is not a JSON object of the fields asked for", codes: ["bad_body"]),
        notFound,
        .error(409, "Refused before any call: no available seat, not developer-hosted, not active; or the requestId conflicts",
               codes: ["no_available_seat", "not_developer_hosted", "not_active", "already_claimed", "no_purchaser", "request_conflict", "claim_pending"]),
        .error(429, "Apple is rate-limiting, after the retries", codes: ["apple_rate_limited"], headers: ["Retry-After"]),
        .error(502, "Apple answered 5xx, after the retries", codes: ["apple_unavailable", "apple_refused"]),
        .error(503, "The App Store Server API is not configured for serve, or the ledger could not answer",
               codes: ["api_not_configured", "ledger_unavailable"]),
        .error(504, "Apple did not answer", codes: ["apple_no_answer"]),
    ]

    /// `POST /v1/groups/{ref}/seats`: Claim Seat through Apple.
    static let claimSeat = ServiceRoute(
        ["POST"], "/v1/groups/{ref}/seats", scope: .seats, query: .only([ledgerParameter, ]),
        document: RouteDocument(
            "Claim a seat", "Claim Seat through the App Store Server API, as `seatledger seats claim`: the requestIdentifier is stored before the call "
                + "and the response recorded as an event. The same `requestId` again answers the same claim (200, no call). Apple's 4xx refusals keep "
                + "their status (`apple_refused`, with `appleErrorCode`).", pathParameters: groupRef,
            requestBody: RequestBodyDocument(description: "The member to give a seat", required: true,
                                             media: [MediaDocument(type: "application/json", schema: .reference("ClaimRequest"),
                                                                   examples: ["new claim": ["memberRef": "member-42", "requestId": "6f1c2b1e-7d0a-4c4e-9a43-3d5c0f7b2a10"]])]),
            responses: [.json(201, "Claimed", schema: "SeatResult"), .json(200, "The same claim again (resumed or replayed)", schema: "SeatResult")]
                + seatFailures)
    ) { service, match, fields in
        try await service.seatOperation(match, fields: &fields) { routes, fields in try await routes.claim(match.path("ref"), match.request, fields: &fields) }
    }

    /// `POST /v1/storekit`: the app server posts what the app sent it (``LedgerService/receiveStoreKit(_:fields:)``).
    static let storeKit = ServiceRoute(
        ["POST"], "/v1/storekit", scope: .link, query: .only([ledgerParameter, ]),
        ledgers: .one,
        document: RouteDocument(
            "Post a StoreKit input from the app",
            "What the app sent its server after the person signed in or bought: a transaction's `jwsRepresentation` or a signed "
                + "`AppTransaction`, with the app's user id for that person. The JWS is verified like any of Apple's (x5c chain to the "
                + "ledger's roots at the transaction's `signedDate`, the AppTransaction's `receiptCreationDate`; Apple's OIDs; the "
                + "ledger's bundle id and environment) and the body appended exactly as received as a `storeKit` event (origin "
                + "`app-server`, its source naming the token), indexed under the user id and the Apple identities it links. A group "
                + "purchaser's transaction forms the group and starts its seat count before any notification. The same body again is a "
                + "duplicate. A refused body is quarantined with its raw bytes (400, with its `quarantineId`). Only this route takes "
                + "StoreKit inputs: posted to `/notifications` they are quarantined (`storekit_not_accepted_here`).",
            requestBody: RequestBodyDocument(description: "`{\"storeKit\": {…}}`: `userId` (optional) and exactly one of `signedTransaction`, "
                                                 + "`signedAppTransaction`", required: true,
                                             media: [MediaDocument(type: "application/json", schema: .reference("StoreKitInput"),
                                                                   examples: ["a purchase": APIExamples.storeKitRequest])]),
            responses: [
                .json(201, "Appended: the event and the identities it links", schema: "StoreKitReceipt",
                      examples: ["appended": APIExamples.storeKitAppended]),
                .json(200, "The same input was already appended", schema: "StoreKitReceipt",
                      examples: ["duplicate": APIExamples.storeKitDuplicate]),
                .error(400, "Refused and quarantined with its raw bytes; the body adds `quarantineId` (`seatledger quarantine show ID`), and "
                           + "`error` is the rejection's code, one of these or any other in `Events/README.md`",
                       codes: ["not_storekit_input", "invalid_storekit", "unexpected_members", "invalid_user_id", "kind_mismatch",
                               "bad_signature", "chain_not_trusted", "certificate_expired", "bundle_mismatch", "environment_mismatch",
                               "missing_signed_date", "missing_transaction_id", "missing_app_transaction_id", "malformed_json"],
                       examples: ["empty user id": APIExamples.storeKitRefused]),
                .error(413, "The body is over `--max-body`; nothing was stored", codes: ["body_too_large"]),
                .error(503, "Nothing could be stored; retry", codes: ["not_stored"], headers: ["Retry-After"]),
            ])
    ) { service, match, fields in
        try await service.receiveStoreKit(match, fields: &fields)
    }

    /// `DELETE /v1/groups/{ref}/seats/{seatClaimId}`: Unclaim Seat through Apple.
    static let unclaimSeat = ServiceRoute(
        ["DELETE"], "/v1/groups/{ref}/seats/{seatClaimId}", scope: .seats, query: .only([ledgerParameter, ]),
        document: RouteDocument(
            "Unclaim a seat", "Unclaim Seat through the App Store Server API, recorded (revoke the member's access in your app too).",
            pathParameters: groupRef.merging(["seatClaimId": seatClaimId]) { $1 },
            responses: [.json(200, "Unclaimed", schema: "SeatResult")] + seatFailures)
    ) { service, match, fields in
        try await service.seatOperation(match, fields: &fields) { routes, fields in
            try await routes.unclaim(match.path("ref"), seatClaimId: match.path("seatClaimId"), fields: &fields)
        }
    }

    /// `POST /v1/groups/{ref}/seats/{seatClaimId}/associate`: Associate Seat through Apple.
    static let associateSeat = ServiceRoute(
        ["POST"], "/v1/groups/{ref}/seats/{seatClaimId}/associate", scope: .seats, query: .only([ledgerParameter, ]),
        document: RouteDocument(
            "Associate a seat", "Associate Seat through the App Store Server API, recorded; access unchanged.",
            pathParameters: groupRef.merging(["seatClaimId": seatClaimId]) { $1 },
            requestBody: RequestBodyDocument(description: "The app transaction to associate", required: true,
                                             media: [MediaDocument(type: "application/json", schema: .reference("AssociateRequest"),
                                                                   examples: ["associate": ["appTransactionId": "704000000000000002"]])]),
            responses: [.json(200, "Associated", schema: "SeatResult")] + seatFailures)
    ) { service, match, fields in
        try await service.seatOperation(match, fields: &fields) { routes, fields in
            try await routes.associate(match.path("ref"), seatClaimId: match.path("seatClaimId"), match.request, fields: &fields)
        }
    }

    /// `POST /v1/api-responses`: an App Store Server API response the app server got itself,
    /// recorded as `seatledger record` records it (``LedgerService/recordAPIResponse(_:fields:)``).
    static let apiResponses = ServiceRoute(
        ["POST"], "/v1/api-responses", scope: .record, query: .only([ledgerParameter, ]),
        ledgers: .one,
        document: RouteDocument(
            "Record an App Store Server API response",
            "For an app server that calls the App Store Server API itself (Claim Seat, Get Seat Info …): the `{\"apiResponse\": {…}}` "
                + "envelope `seatledger record` takes (Events/api/README.md), stored exactly as received with origin `app-server` and a "
                + "source naming the token. Signed data in the body is verified; notification-history items are appended as notifications. "
                + "Idempotent: the event id is the SHA-256 of the canonical envelope, so the same envelope again answers 200 `duplicate`. "
                + "A refused body (not JSON, not an envelope, another environment or bundle, a signature that does not verify) is a 400 "
                + "whose `error` is the refusal's code; its raw bytes are in quarantine (`quarantineId`, `seatledger quarantine list`). "
                + "The webhook never applies an envelope: posted to `/notifications` it is quarantined as `api_response_on_webhook`.",
            requestBody: RequestBodyDocument(description: "One `apiResponse` envelope, as `seatledger record` takes it", required: true,
                                             media: [MediaDocument(type: "application/json", schema: .reference("APIResponseEnvelope"),
                                                                   examples: ["Claim Seat": APIExamples.recordEnvelope])]),
            responses: [
                .json(201, "Appended: the envelope's event (and any notification-history items it carried)", schema: "RecordReceipt",
                      examples: ["appended": APIExamples.recordAppended]),
                .json(200, "Recorded before: nothing appended", schema: "RecordReceipt", examples: ["duplicate": APIExamples.recordDuplicate]),
                .error(400, "Refused and quarantined with its raw bytes (`quarantineId`); `error` is the refusal's code, and a signed item "
                            + "of the body that does not verify answers its verification code",
                       codes: ["not_an_api_response", "empty_message", "malformed_json", "unrecognized_message", "unexpected_members",
                               "invalid_envelope", "environment_mismatch", "bundle_mismatch", "bad_signature", "chain_not_trusted"],
                       examples: ["another environment": APIExamples.recordEnvironmentMismatch, "not JSON": APIExamples.recordMalformed]),
                .error(413, "The body is over `--max-body`; nothing was stored", codes: ["body_too_large"]),
                .error(503, "Nothing could be stored; retry", codes: ["not_stored"], headers: ["Retry-After"]),
            ])
    ) { service, match, fields in
        try await service.recordAPIResponse(match, fields: &fields)
    }
}
