import AppStoreModels
import LedgerEvents
import LedgerStorage
import Projections

extension Ledger {
    /// Derives the access transitions of the events recorded since the last derivation, and the
    /// changes by time due through `horizon`, and stores them with the deliveries they make:
    /// ``planAccessChanges(through:cache:maxEvents:maxDueScopes:)`` in a read snapshot, then
    /// ``commitAccessChanges(_:holdingDeliveriesUntil:)`` in a write transaction, and keeps the
    /// plan's derivers in `cache` (see
    /// `Events/api/access-transitions.md`, "Storage and delivery").
    public func deriveAccessChanges(through horizon: EpochMillis, cache: AccessDeriverCache, maxEvents: Int = 2_000,
                                    maxDueScopes: Int = 2_000, holdingDeliveriesUntil leaseUntil: EpochMillis? = nil) throws -> AccessDerivation {
        let plan = try planAccessChanges(through: horizon, cache: cache, maxEvents: maxEvents, maxDueScopes: maxDueScopes)
        let derivation = try commitAccessChanges(plan, holdingDeliveriesUntil: leaseUntil)
        cache.keep(plan, storedBy: derivation)
        return derivation
    }

    /// Derives, in one read snapshot, what the next derivation stores (nothing is written, so
    /// `serve` runs it on a reader while its writer keeps appending):
    ///
    /// - Events after the cursor (at most `maxEvents`), in position order: each scope they
    ///   concern (a group, an individual subscription) is brought up to date by its deriver.
    /// - Only when every recorded event is derived: scopes whose answer changes by time at or
    ///   before `horizon` (at most `maxDueScopes`, found through an index: the cost is what falls
    ///   due) are advanced to it, and the cursor's horizon moves there.
    /// - A scope replayed from the store (not in `cache`) is reconciled with what its stored
    ///   transitions (and the plan's new ones) fold to, so a reader's fold still ends at the
    ///   current answer when a scope's facts changed under it (two groups found to be one) or the
    ///   scope vanished.
    ///
    /// Pure of clocks: `horizon` is the caller's. `cache` is only read.
    public func planAccessChanges(through horizon: EpochMillis, cache: AccessDeriverCache, maxEvents: Int = 2_000,
                                  maxDueScopes: Int = 2_000) throws -> AccessDerivationPlan {
        let maintainer = ProjectionMaintainer(store: store)
        return try store.read { () throws -> AccessDerivationPlan in
            guard try store.hasAccessChangeTables() else {
                throw LedgerStoreError.badConfiguration("this ledger's schema predates access changes (schema 6): the owner of its tables opens it once to upgrade it")
            }
            let head = try store.head().position
            let from = try store.accessCursor()
            var cursor = from
            let end = min(head, cursor.position + Int64(max(1, maxEvents)))
            // Where the cache's derivers stand (the cursor moves to `end` before the due scopes are advanced).
            let derivedFrom = cursor.position
            var derivers: [String: AccessTransitionDeriver] = [:]
            var rows: [AccessTransitionRow] = []
            var replayed = 0
            var notifications: [(eventId: String, position: Int64)] = []

            func deriver(for scope: AccessScope, states: [String: AccessScopeState]) throws -> (AccessTransitionDeriver, [EventFacts], Bool) {
                let known = derivers[scope.key] ?? cache.deriver(scope.key, at: derivedFrom)
                let facts = try scopeFacts(scope, maintainer: maintainer, known: known?.facts ?? [])
                if let existing = derivers[scope.key] { return (existing, facts, false) }
                // A cached deriver holds while the scope's earlier facts are the ones it applied (a new
                // link can bring older events into a group, or take some out).
                if let cached = known, cached.clock == states[scope.key]?.clock,
                   cached.facts.map(\.eventId) == facts.lazy.filter({ $0.position <= derivedFrom }).map(\.eventId) {
                    return (cached, facts, false)
                }
                // Replay what is known through the cursor (what earlier derivations stored has the
                // same ids and is skipped; what differs is reconciled below).
                var fresh = AccessTransitionDeriver(scope: scope)
                for fact in facts where fact.position <= cursor.position { rows += transitionRows(fresh.append(fact)) }
                if let clock = states[scope.key]?.clock { rows += transitionRows(fresh.advance(to: clock)) }
                replayed += 1
                return (fresh, facts, true)
            }

            // News: the events after the cursor.
            if end > cursor.position {
                let facts = try maintainer.loadFacts(Set((cursor.position + 1)...end))
                var scopes: [AccessScope] = []
                var seen = Set<String>()
                for fact in facts where fact.kind == .notification { notifications.append((fact.eventId, fact.position)) }
                for scope in try scopesConcerned(by: facts) where seen.insert(scope.key).inserted { scopes.append(scope) }
                // Groups the appends re-resolved that no new event names (they lost events to another group).
                for key in try store.changedAccessScopes(through: end).sorted() where seen.insert(key).inserted {
                    if let scope = AccessScope(key: key) { scopes.append(scope) }
                }
                let states = try store.accessScopeStates(seen)
                var reconciling: [AccessScope] = []
                for scope in scopes {
                    var (current, scopeFacts, fromReplay) = try deriver(for: scope, states: states)
                    for fact in scopeFacts where fact.position > cursor.position && fact.position <= end {
                        rows += transitionRows(current.append(fact))
                    }
                    derivers[scope.key] = current
                    // Derived before, and replayed now or gone: what readers fold to must match its answer.
                    if states[scope.key] != nil, fromReplay || scopeFacts.isEmpty { reconciling.append(scope) }
                }
                cursor.position = end
                if !reconciling.isEmpty {
                    // What the feed holds of each once the rows so far are stored: the stored ones, then the new.
                    let keys = Set(reconciling.map(\.key))
                    let present = try store.storedAccessTransitionIds(among: Set(rows.lazy.filter { keys.contains($0.scope) }.map(\.id)))
                    var reconciled: [AccessTransitionRow] = []
                    for scope in reconciling {
                        let planned = rows.filter { $0.scope == scope.key && !present.contains($0.id) }
                        reconciled += try reconcile(scope, with: derivers[scope.key], lastEvent: facts.last, planned: planned)
                    }
                    rows += reconciled
                }
            }

            // Time: only once every recorded event is derived (a lapse is never derived past news it has not seen).
            var caughtUp = cursor.position >= head
            if caughtUp, horizon > cursor.horizon {
                let due = try store.dueAccessScopes(through: horizon, limit: maxDueScopes)
                let states = Dictionary(due.map { ($0.scope, $0) }, uniquingKeysWith: { first, _ in first })
                for state in due {
                    guard let scope = AccessScope(key: state.scope) else { continue }
                    var (current, scopeFacts, _) = try deriver(for: scope, states: states)
                    // Any of its events this round's news did not reach (applied ones are skipped), then time.
                    for fact in scopeFacts where fact.position > derivedFrom && fact.position <= cursor.position {
                        rows += transitionRows(current.append(fact))
                    }
                    rows += transitionRows(current.advance(to: horizon))
                    derivers[scope.key] = current
                }
                if due.count < maxDueScopes { cursor.horizon = horizon } else { caughtUp = false }
            }
            // Each scope's next candidate moment, not its evaluated change: one fold fewer per scope
            // (bench step 8a); a due scope whose answer does not change then is advanced past it.
            let states = derivers.map { key, deriver in
                AccessScopeState(scope: key, clock: deriver.clock ?? 0, nextChange: deriver.candidateChange())
            }
            return AccessDerivationPlan(from: from, cursor: cursor, head: head, caughtUp: caughtUp, replayedScopes: replayed,
                                        rows: rows, states: states, notifications: notifications, derivers: derivers)
        }
    }

    /// Stores a plan in one write transaction: the transitions not stored yet (by id: a plan
    /// repeated after a crash adds nothing), each scope's state and next change, the cursor, and
    /// the deliveries the new transitions make. Each new transition is queued for every enabled
    /// endpoint that receives `access.changed`; each new notification event for those that
    /// receive `apple.notification`. With `leaseUntil`, they are queued held by the caller until
    /// then and returned (``AccessDerivation/heldDeliveries``), for its sender to post without
    /// claiming them.
    ///
    /// Safe from several processes: the cursor row is locked for the transaction. A process that
    /// finds it locked returns at once (``AccessDerivation/busy``) instead of holding its writer
    /// while it waits; a plan whose starting cursor is no longer the stored one (another
    /// derivation committed since its snapshot) stores nothing and returns with `caughtUp` false,
    /// to be planned again from there. The caller then gives the plan to its cache
    /// (``AccessDeriverCache/keep(_:storedBy:)``), off the writer.
    public func commitAccessChanges(_ plan: AccessDerivationPlan, holdingDeliveriesUntil leaseUntil: EpochMillis? = nil) throws -> AccessDerivation {
        try store.write { () throws -> AccessDerivation in
            guard let cursor = try store.lockedAccessCursor() else {
                // Another process is deriving; what it stores, the feed's readers see.
                return AccessDerivation(stored: [], cursor: try store.accessCursor(), head: plan.head, queuedDeliveries: 0, caughtUp: true,
                                        nextChange: nil, replayedScopes: 0, lastSeq: try store.lastAccessTransitionSeq(), busy: true)
            }
            guard cursor == plan.from else {
                return AccessDerivation(stored: [], cursor: cursor, head: plan.head, queuedDeliveries: 0, caughtUp: false,
                                        nextChange: nil, replayedScopes: 0, lastSeq: try store.lastAccessTransitionSeq())
            }
            if plan.cursor.position > plan.from.position { try store.forgetChangedAccessScopes(through: plan.cursor.position) }
            try store.saveAccessScopeStates(plan.states)
            let stored = try store.insertAccessTransitions(plan.rows)
            try store.setAccessCursor(plan.cursor)
            let queued = try queueDeliveries(stored: stored, notifications: plan.notifications, leaseUntil: leaseUntil)
            return AccessDerivation(stored: stored, cursor: plan.cursor, head: plan.head, queuedDeliveries: queued.count,
                                    heldDeliveries: leaseUntil == nil ? [] : queued, caughtUp: plan.caughtUp,
                                    nextChange: try store.nextAccessChange(), replayedScopes: plan.replayedScopes,
                                    lastSeq: try store.lastAccessTransitionSeq())
        }
    }

    /// Where access derivation stands: the cursor, the last feed position, and the ledger's head.
    public func accessDerivationStatus() throws -> (cursor: AccessCursor, lastSeq: Int64, head: Int64) {
        try store.read { (try store.accessCursor(), try store.lastAccessTransitionSeq(), try store.head().position) }
    }

    /// Up to `limit` stored transitions after feed position `seq` that pass `filter`.
    public func accessTransitions(after seq: Int64, limit: Int, filter: AccessTransitionFilter = AccessTransitionFilter()) throws
        -> [StoredAccessTransition] {
        try store.accessTransitions(after: seq, limit: limit, filter: filter)
    }

    // MARK: Steps

    /// Every scope the events of `facts` concern: the groups their identifiers (and a
    /// retraction's) are indexed under, the individual subscriptions they name, scopes derived
    /// before under a key made of those identifiers (which may have vanished: two groups found to
    /// be one), and scopes whose transitions name them (a subject a new link moved elsewhere).
    /// One set of queries for the whole batch.
    func scopesConcerned(by facts: [EventFacts]) throws -> [AccessScope] {
        var identifiers = Set<String>()
        for fact in facts { identifiers.formUnion(fact.identifiers.union(fact.retractedIdentifiers)) }
        let groupKeys = try store.groupKeys(forAny: identifiers)
        var keys = Set(groupKeys.map { AccessScope.group($0).key })
        for otid in SubscriptionProjection.subscriptions(naming: identifiers, in: facts) { keys.insert(AccessScope.subscription(otid).key) }
        // A group's members may have been groups of their own (`unlinked:`) before these events tied them to it.
        for row in try store.groupIndexRows(groupKeys: groupKeys) where row.role != "product" && row.role != "memberRef" {
            identifiers.insert(row.identifier)
        }
        var candidates = Set<String>()
        for id in identifiers {
            candidates.insert(AccessScope.group(id).key)
            candidates.insert(AccessScope.group(GroupIdentityResolver.unlinkedKey(for: id)).key)
            candidates.insert(AccessScope.subscription(id).key)
        }
        keys.formUnion(try store.accessScopeStates(candidates.subtracting(keys)).keys)
        keys.formUnion(try store.accessScopes(namingAny: identifiers))
        return keys.sorted().compactMap(AccessScope.init(key:))
    }

    /// The facts a scope's answer is folded from, in position order (none: the scope no longer
    /// exists). Facts already in `known` (the scope's deriver holds them) are not decoded again.
    func scopeFacts(_ scope: AccessScope, maintainer: ProjectionMaintainer, known: [EventFacts] = []) throws -> [EventFacts] {
        let held = Dictionary(known.map { ($0.position, $0) }, uniquingKeysWith: { first, _ in first })
        func load(_ positions: Set<Int64>) throws -> [EventFacts] {
            let missing = positions.filter { held[$0] == nil }
            let loaded = missing.isEmpty ? [] : try maintainer.loadFacts(missing)
            return (positions.compactMap { held[$0] } + loaded).sorted { $0.position < $1.position }
        }
        switch scope {
        case .group(let key):
            let rows = try store.groupIndexRows(groupKeys: [key])
            guard let membership = ProjectionMaintainer.memberships(from: rows)[key] else { return [] }
            return membership.relevant(try load(try store.positions(mentioningAny: membership.identifiers.union(membership.aliases))))
        case .subscription(let otid):
            return try load(try store.positions(mentioningAny: [otid]))
        }
    }

    /// The rows of derived transitions (the ledger's app and environment in each body).
    func transitionRows(_ transitions: [AccessTransition]) -> [AccessTransitionRow] {
        transitions.map { transition in
            let subject = transition.subject
            return AccessTransitionRow(
                id: transition.id, scope: transition.key.scope, subjectKey: transition.key.subject, productId: transition.productId,
                kind: transition.kind.rawValue, learnedAt: transition.learnedAt,
                body: transition.json(bundleId: configuration.bundleId, environment: configuration.environment.rawValue).canonicalString(),
                groupKey: subject.groupKey, originalTransactionId: subject.originalTransactionId,
                appTransactionId: subject.appTransactionId, seatClaimId: subject.seatClaimId, memberRef: subject.memberRef)
        }
    }

    /// Transitions that bring what the scope's stored transitions and then `planned` (new ones
    /// not stored yet) fold to (each key's last `after`) to the deriver's answer (none: the scope
    /// is gone), caused by `lastEvent`.
    func reconcile(_ scope: AccessScope, with deriver: AccessTransitionDeriver?, lastEvent: EventFacts?,
                   planned: [AccessTransitionRow]) throws -> [AccessTransitionRow] {
        guard let lastEvent else { return [] }
        // What a reader folded: each key's last stored transition.
        var folded: [AccessKey: JSONValue] = [:]
        func fold(subjectKey: String, productId: String?, body: String) {
            if let body = try? JSONValue.parse(body) { folded[AccessKey(scope: scope.key, subject: subjectKey, productId: productId)] = body }
        }
        var after = Int64(0)
        while true {
            let page = try store.accessTransitions(after: after, limit: 1_000, filter: AccessTransitionFilter(scope: scope.key))
            for row in page { fold(subjectKey: row.subjectKey, productId: row.productId, body: row.body) }
            guard let last = page.last, page.count == 1_000 else { break }
            after = last.seq
        }
        // Then the plan's own, not stored yet (after every stored one in the feed).
        for row in planned { fold(subjectKey: row.subjectKey, productId: row.productId, body: row.body) }
        let current = deriver?.current ?? [:]
        let reference = EventReference(eventId: lastEvent.eventId, position: lastEvent.position)
        let cause = TransitionCause(kind: .news, event: reference, eventType: lastEvent.type, subtype: lastEvent.subtype,
                                    retractedEventId: lastEvent.retractedEventId, knownThrough: reference, upstream: nil)
        func side(_ snapshot: JSONValue?) -> (entitled: Bool, source: String)? {
            snapshot.map { ($0["entitled"] == .bool(true), $0["source"]?.stringValue ?? "") }
        }
        var rows: [AccessTransitionRow] = []
        for key in Set(current.keys).union(folded.keys).sorted() {
            let stored = folded[key], entry = current[key]
            // (Not `flatMap { … ? nil : $0 }`: JSONValue takes `nil` as a literal, so that keeps `.null`.)
            var storedAfter: JSONValue?
            if let value = stored?["after"], value != .null { storedAfter = value }
            let storedSubject = stored?["subject"]
            let now = entry?.snapshot.json
            // Compared as canonical text: the stored side was parsed back from it.
            let sameAccess = storedAfter?.canonicalString() == now?.canonicalString()
            if sameAccess, entry == nil || storedSubject?.canonicalString() == entry?.subject.json.canonicalString() { continue }
            guard storedAfter != nil || now != nil else { continue }
            let kind = AccessTransitionKind(was: side(storedAfter), now: side(now), snapshotChanged: !sameAccess)
            let id = AccessTransitionID.make(key: key, kind: kind, cause: cause, at: lastEvent.recordedAt) + ";reconciled"
            let subject = entry?.subject.json ?? storedSubject ?? .null
            guard case .object(var body) = AccessTransition.json(
                id: id, kind: kind, productId: key.productId, subject: subject, bundleId: configuration.bundleId,
                environment: configuration.environment.rawValue, effectiveAt: lastEvent.recordedAt, learnedAt: lastEvent.recordedAt,
                before: storedAfter, after: now, cause: cause, corrects: stored?["id"]?.stringValue) else { continue }
            body["reconciled"] = .bool(true)
            rows.append(AccessTransitionRow(
                id: id, scope: scope.key, subjectKey: key.subject, productId: key.productId, kind: kind.rawValue,
                learnedAt: lastEvent.recordedAt, body: JSONValue.object(body).canonicalString(), groupKey: scope.groupKey,
                originalTransactionId: subject["originalTransactionId"]?.stringValue, appTransactionId: subject["appTransactionId"]?.stringValue,
                seatClaimId: subject["seatClaimId"]?.stringValue, memberRef: subject["memberRef"]?.stringValue))
        }
        return rows
    }

    /// Queues the deliveries of new transitions and notification events to the endpoints that receive them.
    func queueDeliveries(stored: [StoredAccessTransition], notifications: [(eventId: String, position: Int64)],
                         leaseUntil: EpochMillis?) throws -> [WebhookDeliveryRecord] {
        let endpoints = try store.webhookEndpoints().filter { $0.disabledAt == nil }
        guard !endpoints.isEmpty else { return [] }
        var items: [(endpointId: String, messageId: String, type: String, transitionSeq: Int64?, eventPosition: Int64?)] = []
        for endpoint in endpoints {
            if endpoint.receives(WebhookMessageType.accessChanged) {
                items += stored.map { (endpoint.id, Self.webhookMessageID($0.id), WebhookMessageType.accessChanged, $0.seq, nil) }
            }
            if endpoint.receives(WebhookMessageType.appleNotification) {
                items += notifications.map { (endpoint.id, Self.webhookMessageID("ev_" + $0.eventId), WebhookMessageType.appleNotification, nil, $0.position) }
            }
        }
        return try store.enqueueDeliveries(items, now: store.clock(), leaseUntil: leaseUntil)
    }
}
