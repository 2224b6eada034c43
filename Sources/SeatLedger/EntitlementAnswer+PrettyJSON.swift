import AppStoreModels
import Projections

/// Writes a JSON object whose member names the caller gives in sorted order, pretty-printed
/// exactly as ``JSONValue/prettyString()`` prints the same object (two spaces a level).
struct PrettyObjectWriter {
    var out: [UInt8]
    let indent: Int
    private var count = 0

    init(into out: [UInt8], indent: Int) {
        self.out = out
        self.indent = indent
        self.out.append(contentsOf: "{\n".utf8)
    }

    /// Starts member `name` (names must come in `JSONValue`'s sorted order); the caller writes its value.
    mutating func member(_ name: String) {
        if count > 0 { out.append(contentsOf: ",\n".utf8) }
        count += 1
        for _ in 0..<(indent + 1) * 2 { out.append(0x20) }
        JSONValue.appendString(name, to: &out)
        out.append(contentsOf: ": ".utf8)
    }

    mutating func value(_ name: String, _ value: JSONValue) {
        member(name)
        value.appendPretty(to: &out, indent: indent + 1)
    }

    mutating func string(_ name: String, _ value: String?) {
        member(name)
        if let value { JSONValue.appendString(value, to: &out) } else { out.append(contentsOf: "null".utf8) }
    }

    mutating func moment(_ name: String, _ value: EpochMillis?) {
        member(name)
        if let value {
            out.append(UInt8(ascii: "\""))
            Timestamp.appendISO8601(value, to: &out)
            out.append(UInt8(ascii: "\""))
        } else {
            out.append(contentsOf: "null".utf8)
        }
    }

    mutating func bool(_ name: String, _ value: Bool) {
        member(name)
        out.append(contentsOf: (value ? "true" : "false").utf8)
    }

    /// Member `name`: an array whose elements `write` appends one by one (given the indent of an element).
    mutating func array<C: Collection>(_ name: String, _ items: C, _ write: (C.Element, inout [UInt8], Int) -> Void) {
        member(name)
        guard !items.isEmpty else { out.append(contentsOf: "[]".utf8); return }
        out.append(contentsOf: "[\n".utf8)
        for (offset, item) in items.enumerated() {
            for _ in 0..<(indent + 2) * 2 { out.append(0x20) }
            write(item, &out, indent + 2)
            out.append(contentsOf: (offset == items.count - 1 ? "\n" : ",\n").utf8)
        }
        for _ in 0..<(indent + 1) * 2 { out.append(0x20) }
        out.append(UInt8(ascii: "]"))
    }

    /// Closes the object and gives the bytes.
    consuming func finish() -> [UInt8] {
        out.append(UInt8(ascii: "\n"))
        for _ in 0..<indent * 2 { out.append(0x20) }
        out.append(UInt8(ascii: "}"))
        return out
    }
}

extension EntitlementAnswer {
    /// ``json`` pretty-printed, byte for byte what `json.prettyString()` gives (a test compares
    /// them over every answer of the entitlement tests), written straight from the answer rather
    /// than through a tree of dictionaries whose keys are then sorted: the body of
    /// `GET /v1/entitlements/{id}` and `seatledger entitlements --json`. Why it exists:
    /// `Tools/bench/PERFORMANCE.md` (the entitlement read against the members read).
    public func prettyJSON() -> [UInt8] {
        var top = PrettyObjectWriter(into: [], indent: 0)
        top.moment("asOf", asOf)
        top.string("bundleId", bundleId)
        top.array("entitlements", entitlements) { entitlement, out, indent in
            out = Self.write(entitlement, bundleId: bundleId, environment: environment, into: out, indent: indent)
        }
        top.string("environment", environment)
        top.string("identifier", identifier)
        top.moment("knownAt", knownAt)
        top.member("person")
        var person = PrettyObjectWriter(into: top.out, indent: 1)
        person.array("conflicts", conflicts) { conflict, out, indent in conflict.json.appendPretty(to: &out, indent: indent) }
        person.array("identifiers", identifiers) { id, out, _ in JSONValue.appendString(id, to: &out) }
        person.array("links", links) { link, out, indent in link.json.appendPretty(to: &out, indent: indent) }
        person.array("userIds", userIds) { id, out, _ in JSONValue.appendString(id, to: &out) }
        top.out = person.finish()
        return top.finish()
    }

    private static func write(_ entitlement: ProductEntitlement, bundleId: String, environment: String, into out: [UInt8],
                              indent: Int) -> [UInt8] {
        var object = PrettyObjectWriter(into: out, indent: indent)
        object.array("alsoThrough", entitlement.grants.dropFirst()) { grant, out, indent in out = write(grant, into: out, indent: indent) }
        object.string("bundleId", bundleId)
        object.bool("entitled", entitlement.entitled)
        object.string("environment", environment)
        object.string("productId", entitlement.productId)
        object.value("reason", entitlement.reason?.json ?? .null)
        object.moment("since", entitlement.since)
        object.member("through")
        if let first = entitlement.grants.first {
            object.out = write(first, into: object.out, indent: indent + 1)
        } else {
            object.out.append(contentsOf: "null".utf8)
        }
        object.moment("until", entitlement.until)
        return object.finish()
    }

    private static func write(_ grant: EntitlementGrant, into out: [UInt8], indent: Int) -> [UInt8] {
        var object = PrettyObjectWriter(into: out, indent: indent)
        object.string("appTransactionId", grant.appTransactionId)
        object.bool("entitled", grant.hasAccess)
        object.string("groupKey", grant.groupKey)
        object.string("memberRef", grant.memberRef)
        object.string("originalTransactionId", grant.originalTransactionId)
        object.string("purchaserOriginalTransactionId", grant.purchaserOriginalTransactionId)
        object.value("revocation", grant.revocation?.json ?? .null)
        object.string("seatClaimId", grant.seatClaimId)
        object.moment("since", grant.since)
        object.string("source", grant.source.rawValue)
        object.string("status", grant.status.rawValue)
        object.moment("until", grant.until)
        return object.finish()
    }
}
