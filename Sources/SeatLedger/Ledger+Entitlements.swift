import AppStoreModels
import LedgerEvents
import LedgerStorage
import Projections

/// A person's entitlements at a moment: the answer of `GET /v1/entitlements/{id}` and
/// `seatledger entitlements ID`.
public struct EntitlementAnswer: Sendable {
    /// The identifier asked about.
    public let identifier: String
    /// The valid time asked about.
    public let asOf: EpochMillis
    /// The transaction time asked about (`nil`: everything recorded).
    public let knownAt: EpochMillis?
    /// The ledger's app.
    public let bundleId: String
    /// The ledger's environment.
    public let environment: String
    /// The app's user ids linked to the person.
    public let userIds: [String]
    /// The Apple identifiers the answer searched (the identifier and those linked to it).
    public let identifiers: [String]
    /// The links that name the person, oldest first.
    public let links: [IdentityLink]
    /// Conflicting links, if any.
    public let conflicts: [LinkConflict]
    /// One entitlement per product, entitled first.
    public let entitlements: [ProductEntitlement]

    /// The next moment the answer changes without news (the earliest end of an entitled
    /// source), for caching; `nil` when nothing entitled has a known end.
    public var changesAt: EpochMillis? { entitlements.compactMap(\.changesAt).min() }

    /// The JSON contract (`Events/api/entitlements.md`); ``prettyJSON()`` writes it.
    public var json: JSONValue {
        [
            "identifier": .string(identifier), "asOf": .timestamp(asOf), "knownAt": .timestamp(knownAt),
            "bundleId": .string(bundleId), "environment": .string(environment),
            "person": [
                "userIds": .array(userIds.map(JSONValue.string)),
                "identifiers": .array(identifiers.map(JSONValue.string)),
                "links": .array(links.map(\.json)),
                "conflicts": .array(conflicts.map(\.json)),
            ],
            "entitlements": .array(entitlements.map { $0.json(bundleId: bundleId, environment: environment) }),
        ]
    }
}

extension EntitlementAnswer {
    /// The same answer with only the entitlements `isIncluded` keeps (the `product` and
    /// `environment` filters).
    public func keeping(_ isIncluded: (ProductEntitlement) -> Bool) -> EntitlementAnswer {
        EntitlementAnswer(identifier: identifier, asOf: asOf, knownAt: knownAt, bundleId: bundleId, environment: environment,
                          userIds: userIds, identifiers: identifiers, links: links, conflicts: conflicts,
                          entitlements: entitlements.filter(isIncluded))
    }
}

/// Nothing in the ledger names the identifier: no group, no individual subscription, no link.
public struct PersonNotFound: Error, Sendable, CustomStringConvertible {
    /// The identifier asked about.
    public let identifier: String
    /// The text a person reads.
    public var description: String {
        "nothing in this ledger names \(identifier) (try the app's user id the app server linked, an appTransactionId, an "
            + "originalTransactionId, a transaction id or a seatClaimId)"
    }
}

extension Ledger {
    /// The Apple identifiers the app server linked to `identifier` as the app's user id (its
    /// StoreKit events recorded by `knownAt`, retracted ones withdrawn), oldest link first; `[]`
    /// when no link names it so. Reads of a person (`member show`, `/v1/members`, the desk,
    /// entitlements) answer for these too.
    public func linkedIdentifiers(of identifier: String, knownAt: EpochMillis? = nil) throws -> [String] {
        let positions = try store.positions(mentioning: identifier, kind: .appUserId)
        guard !positions.isEmpty else { return [] }
        return try links(at: Set(positions), knownAt: knownAt)
            .filter { $0.userId == identifier }.flatMap(\.appleIdentifiers).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
    }

    /// The links the StoreKit events at `positions` make, as known at `knownAt`.
    func links(at positions: Set<Int64>, knownAt: EpochMillis?) throws -> [IdentityLink] {
        try links(in: try ProjectionMaintainer(store: store).loadFacts(positions), knownAt: knownAt)
    }

    /// The links the StoreKit events among `facts` make, as known at `knownAt`: a link recorded
    /// later does not count, and one a retraction recorded by then withdrew is gone (its
    /// retraction is looked up by the event's id, so only events that link cost a read).
    func links(in facts: [EventFacts], knownAt: EpochMillis?) throws -> [IdentityLink] {
        let linking = facts.filter { $0.kind == .storeKit && $0.linkedUserId != nil }
        guard !linking.isEmpty else { return [] }
        var retractions = Set<Int64>()
        for fact in linking { retractions.formUnion(try store.positions(mentioning: fact.eventId, kind: .retractedEventId)) }
        let all = linking + (try ProjectionMaintainer(store: store).loadFacts(retractions))
        let known = Retraction.withdraw(knownAt.map { knownAt in all.filter { $0.recordedAt <= knownAt } } ?? all)
        return IdentityLink.links(in: known).sorted { ($0.recordedAt, $0.eventId) < ($1.recordedAt, $1.eventId) }
    }

    /// The links that name `identifier` as a user id or name one of the Apple identifiers it is
    /// linked to (with the conflicts among them), for reports about a person.
    public func personLinks(_ identifier: String, knownAt: EpochMillis? = nil) throws -> (links: [IdentityLink], conflicts: [LinkConflict]) {
        let ids = [identifier] + (try linkedIdentifiers(of: identifier, knownAt: knownAt))
        let links = Self.naming(identifier, orAnyOf: ids, try links(at: try store.positions(mentioningAny: Set(ids)), knownAt: knownAt))
        return (links, IdentityLink.conflicts(links))
    }

    /// The links (in their order) that name `identifier` as a user id or one of `ids` as an Apple identity.
    static func naming(_ identifier: String, orAnyOf ids: [String], _ links: [IdentityLink]) -> [IdentityLink] {
        let ids = Set(ids)
        return links.filter { $0.userId == identifier || !ids.isDisjoint(with: $0.appleIdentifiers) }
    }

    /// The entitlements of the person `identifier` names, per product, at `asOf` with what was
    /// recorded by `knownAt`: group memberships (purchaser, assigned seat, developer-hosted claim,
    /// Family Sharing) and individual subscriptions of the same products.
    ///
    /// `identifier` is the app's user id (resolved through the StoreKit links the app server
    /// made), or any of Apple's identifiers of the person. A user id linked to several Apple
    /// identities answers for all of them; an Apple identity linked to several user ids answers
    /// the same for each; both are listed in `conflicts`.
    public func entitlements(_ identifier: String, asOf: EpochMillis, knownAt: EpochMillis? = nil) throws -> EntitlementAnswer {
        let maintainer = ProjectionMaintainer(store: store)
        return try store.read {
            let mentioning = try maintainer.loadFacts(try store.positions(mentioningAny: [identifier]))
            // The identifier is a user id when a link in effect names it so; its Apple identities are searched too.
            let asUser = try links(in: mentioning, knownAt: knownAt).filter { $0.userId == identifier }
            var searched = [identifier]
            for id in asUser.flatMap(\.appleIdentifiers) where !searched.contains(id) { searched.append(id) }
            var facts = mentioning
            if searched.count > 1 {
                let more = try store.positions(mentioningAny: Set(searched.dropFirst())).subtracting(mentioning.map(\.position))
                facts += try maintainer.loadFacts(more)
            }
            let links = try links(in: facts, knownAt: knownAt)
            var grants: [EntitlementGrant] = []
            var found = !asUser.isEmpty
            for id in searched {
                let own = id == identifier ? mentioning : nil
                guard let entries = try memberEntries(id, asOf: asOf, knownAt: knownAt, mentioning: own) else { continue }
                found = true
                for entry in entries {
                    guard let member = MemberState(json: entry.member) else { continue }
                    grants.append(EntitlementGrant(member: member, groupKey: entry.groupKey, productId: entry.productId,
                                                   purchaserOriginalTransactionId: entry.purchaserOriginalTransactionId,
                                                   status: GroupStatus(rawValue: entry.status)))
                }
            }
            for otid in SubscriptionProjection.subscriptions(naming: Set(searched), in: facts).sorted() {
                found = true
                let own = try maintainer.loadFacts(try store.positions(mentioningAny: [otid]))
                if let state = SubscriptionProjection.project(originalTransactionId: otid, facts: own, asOf: asOf, knownAt: knownAt) {
                    grants.append(EntitlementGrant(subscription: state))
                }
            }
            guard found else { throw PersonNotFound(identifier: identifier) }
            let person = Self.naming(identifier, orAnyOf: searched, links)
            return EntitlementAnswer(identifier: identifier, asOf: asOf, knownAt: knownAt, bundleId: configuration.bundleId,
                                     environment: configuration.environment.rawValue,
                                     userIds: Array(Set(person.map(\.userId))).sorted(), identifiers: searched,
                                     links: person, conflicts: IdentityLink.conflicts(person), entitlements: Entitlements.byProduct(grants))
        }
    }
}
