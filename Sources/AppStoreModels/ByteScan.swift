import Foundation

/// Scans over the bytes of JSON text that must not cost a parse: where a byte is, the payload of
/// a compact JWS inside a body, and the string value after a member name. For reading what a
/// body claims (a lookup key, a routing hint), never for deciding what it is worth: what they find
/// is verified elsewhere.
public enum ByteScan {
    /// The offset of the first `byte` in `bytes` at or after `from`.
    public static func offset(of byte: UInt8, in bytes: UnsafeRawBufferPointer, from: Int) -> Int? {
        guard let base = bytes.baseAddress, from >= 0, from < bytes.count,
              let hit = memchr(base + from, Int32(byte), bytes.count - from) else { return nil }
        return base.distance(to: UnsafeRawPointer(hit))
    }

    /// The decoded second segment of the first compact JWS at or after `from` (between the first
    /// two dots from there), unverified; `nil` when there are not two dots or it is not base64url.
    public static func jwsPayload(in bytes: UnsafeRawBufferPointer, from: Int = 0) -> [UInt8]? {
        guard let base = bytes.baseAddress, let first = offset(of: UInt8(ascii: "."), in: bytes, from: from),
              let second = offset(of: UInt8(ascii: "."), in: bytes, from: first + 1) else { return nil }
        return Base64URL.decodeBytes(buffer: UnsafeBufferPointer(start: (base + first + 1).assumingMemoryBound(to: UInt8.self),
                                                                 count: second - first - 1))
    }

    /// The string after the first occurrence of `key` (a member name with its `":"`, e.g.
    /// `"bundleId":"`) up to the next `"`; `nil` when the key is absent, the value empty, or it
    /// holds an escape (the caller parses instead).
    public static func stringValue(after key: [UInt8], in bytes: UnsafeRawBufferPointer) -> String? {
        guard let base = bytes.baseAddress, let lead = key.first else { return nil }
        var from = 0
        while let hit = offset(of: lead, in: bytes, from: from) {
            if hit + key.count <= bytes.count, key.withUnsafeBytes({ memcmp(base + hit, $0.baseAddress!, key.count) }) == 0 {
                let start = hit + key.count
                guard let end = offset(of: UInt8(ascii: "\""), in: bytes, from: start), end > start else { return nil }
                let value = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
                guard offset(of: UInt8(ascii: "\\"), in: value, from: 0) == nil else { return nil }
                return String(decoding: value, as: UTF8.self)
            }
            from = hit + 1
        }
        return nil
    }
}
