import AppStoreModels
import Projections

/// Writes one JSON object into a caller's buffer, its member names given in sorted order,
/// pretty-printed exactly as ``JSONValue/prettyString()`` prints the same object (two spaces a
/// level). It holds no bytes itself: every call appends to the one buffer passed in.
struct PrettyObject {
    let indent: Int
    private var count = 0

    /// Opens the object (`{`) in `out`.
    init(_ out: inout [UInt8], indent: Int) {
        self.indent = indent
        out.append(contentsOf: "{\n".utf8)
    }

    /// Starts member `name` (in `JSONValue`'s sorted order); the caller writes its value next.
    mutating func member(_ name: String, _ out: inout [UInt8]) {
        if count > 0 { out.append(contentsOf: ",\n".utf8) }
        count += 1
        Self.pad(indent + 1, &out)
        JSONValue.appendString(name, to: &out)
        out.append(contentsOf: ": ".utf8)
    }

    mutating func value(_ name: String, _ value: JSONValue, _ out: inout [UInt8]) {
        member(name, &out)
        value.appendPretty(to: &out, indent: indent + 1)
    }

    mutating func string(_ name: String, _ value: String?, _ out: inout [UInt8]) {
        member(name, &out)
        if let value { JSONValue.appendString(value, to: &out) } else { out.append(contentsOf: "null".utf8) }
    }

    mutating func moment(_ name: String, _ value: EpochMillis?, _ out: inout [UInt8]) {
        member(name, &out)
        guard let value else { out.append(contentsOf: "null".utf8); return }
        out.append(UInt8(ascii: "\""))
        Timestamp.appendISO8601(value, to: &out)
        out.append(UInt8(ascii: "\""))
    }

    mutating func bool(_ name: String, _ value: Bool, _ out: inout [UInt8]) {
        member(name, &out)
        out.append(contentsOf: (value ? "true" : "false").utf8)
    }

    /// Member `name`: an array whose elements `write` appends one by one (given their indent).
    mutating func array<C: Collection>(_ name: String, _ items: C, _ out: inout [UInt8],
                                       _ write: (C.Element, inout [UInt8], Int) -> Void) {
        member(name, &out)
        guard !items.isEmpty else { out.append(contentsOf: "[]".utf8); return }
        out.append(contentsOf: "[\n".utf8)
        for (offset, item) in items.enumerated() {
            Self.pad(indent + 2, &out)
            write(item, &out, indent + 2)
            out.append(contentsOf: (offset == items.count - 1 ? "\n" : ",\n").utf8)
        }
        Self.pad(indent + 1, &out)
        out.append(UInt8(ascii: "]"))
    }

    /// Closes the object (`}`).
    func finish(_ out: inout [UInt8]) {
        out.append(UInt8(ascii: "\n"))
        Self.pad(indent, &out)
        out.append(UInt8(ascii: "}"))
    }

    private static func pad(_ levels: Int, _ out: inout [UInt8]) {
        for _ in 0..<levels * 2 { out.append(0x20) }
    }
}

extension EntitlementAnswer {
    /// ``json`` pretty-printed, byte for byte what `json.prettyString()` gives (a test compares
    /// them over every answer of the entitlement tests), written straight from the answer into
    /// one buffer rather than through a tree of dictionaries whose keys are then sorted: the body
    /// of `GET /v1/entitlements/{id}` and `seatledger entitlements --json`. Why it exists:
    /// `Tools/bench/PERFORMANCE.md` (the entitlement read against the members read).
    public func prettyJSON() -> [UInt8] { prettyJSONLocatingAsOf().bytes }

    /// ``prettyJSON()`` and the range of its bytes that holds the `asOf` member with its line
    /// break (what an `ETag` leaves out: the moment asked about moves with the clock).
    public func prettyJSONLocatingAsOf() -> (bytes: [UInt8], asOf: Range<Int>) {
        var out: [UInt8] = []
        out.reserveCapacity(2048)
        var top = PrettyObject(&out, indent: 0)
        let asOfStart = out.count
        top.moment("asOf", asOf, &out)
        let asOfEnd = out.count
        top.string("bundleId", bundleId, &out)
        top.array("entitlements", entitlements, &out) { entitlement, out, indent in
            Self.write(entitlement, bundleId: bundleId, environment: environment, into: &out, indent: indent)
        }
        top.string("environment", environment, &out)
        top.string("identifier", identifier, &out)
        top.moment("knownAt", knownAt, &out)
        top.member("person", &out)
        var person = PrettyObject(&out, indent: 1)
        person.array("conflicts", conflicts, &out) { conflict, out, indent in conflict.json.appendPretty(to: &out, indent: indent) }
        person.array("identifiers", identifiers, &out) { id, out, _ in JSONValue.appendString(id, to: &out) }
        person.array("links", links, &out) { link, out, indent in link.json.appendPretty(to: &out, indent: indent) }
        person.array("userIds", userIds, &out) { id, out, _ in JSONValue.appendString(id, to: &out) }
        person.finish(&out)
        top.finish(&out)
        return (out, asOfStart..<asOfEnd)
    }

    private static func write(_ entitlement: ProductEntitlement, bundleId: String, environment: String, into out: inout [UInt8],
                              indent: Int) {
        var object = PrettyObject(&out, indent: indent)
        object.array("alsoThrough", entitlement.grants.dropFirst(), &out) { grant, out, indent in write(grant, into: &out, indent: indent) }
        object.string("bundleId", bundleId, &out)
        object.bool("entitled", entitlement.entitled, &out)
        object.string("environment", environment, &out)
        object.string("productId", entitlement.productId, &out)
        object.member("reason", &out)
        write(entitlement.reason, into: &out, indent: indent + 1)
        object.moment("since", entitlement.since, &out)
        object.member("through", &out)
        if let first = entitlement.grants.first {
            write(first, into: &out, indent: indent + 1)
        } else {
            out.append(contentsOf: "null".utf8)
        }
        object.moment("until", entitlement.until, &out)
        object.finish(&out)
    }

    /// ``Revocation/json`` pretty-printed (`null` when there is none).
    private static func write(_ revocation: Revocation?, into out: inout [UInt8], indent: Int) {
        guard let revocation else { out.append(contentsOf: "null".utf8); return }
        var object = PrettyObject(&out, indent: indent)
        object.moment("at", revocation.at, &out)
        if let cause = revocation.cause {
            object.member("cause", &out)
            var nested = PrettyObject(&out, indent: indent + 1)
            nested.moment("at", cause.at, &out)
            nested.string("eventId", cause.eventId, &out)
            nested.string("reason", cause.reason.rawValue, &out)
            nested.finish(&out)
        }
        object.string("eventId", revocation.eventId, &out)
        object.string("reason", revocation.reason.rawValue, &out)
        object.finish(&out)
    }

    private static func write(_ grant: EntitlementGrant, into out: inout [UInt8], indent: Int) {
        var object = PrettyObject(&out, indent: indent)
        object.string("appTransactionId", grant.appTransactionId, &out)
        object.bool("entitled", grant.hasAccess, &out)
        object.string("groupKey", grant.groupKey, &out)
        object.string("memberRef", grant.memberRef, &out)
        object.string("originalTransactionId", grant.originalTransactionId, &out)
        object.string("purchaserOriginalTransactionId", grant.purchaserOriginalTransactionId, &out)
        object.member("revocation", &out)
        write(grant.revocation, into: &out, indent: indent + 1)
        object.string("seatClaimId", grant.seatClaimId, &out)
        object.moment("since", grant.since, &out)
        object.string("source", grant.source.rawValue, &out)
        object.string("status", grant.status.rawValue, &out)
        object.moment("until", grant.until, &out)
        object.finish(&out)
    }
}
