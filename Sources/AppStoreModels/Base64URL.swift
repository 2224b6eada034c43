import Foundation

/// Base64url (RFC 4648 §5) without padding, as used by compact JWS.
public enum Base64URL {
    /// Decoding table: 0–63 for alphabet bytes (both alphabets), 0xFF otherwise.
    private static let table: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
        for (index, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(index) }
        table[Int(UInt8(ascii: "-"))] = 62
        table[Int(UInt8(ascii: "_"))] = 63
        return table
    }()

    /// Decodes base64url text (padding optional); `nil` if it is not base64url.
    public static func decode<S: StringProtocol>(_ text: S) -> Data? {
        if let fast = text.utf8.withContiguousStorageIfAvailable({ decode(buffer: $0) }) { return fast }
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBufferPointer { decode(buffer: $0) }
    }

    /// Decodes base64url bytes (padding optional); `nil` if a byte is outside the alphabet.
    public static func decode(bytes: ArraySlice<UInt8>) -> Data? {
        bytes.withUnsafeBufferPointer { decode(buffer: $0) }
    }

    /// Decodes base64url from a raw buffer (padding optional); `nil` if a byte is outside the alphabet.
    public static func decode(buffer: UnsafeBufferPointer<UInt8>) -> Data? {
        decodeBytes(buffer: buffer).map { Data($0) }
    }

    /// Decodes base64url from a raw buffer into bytes (padding optional); `nil` if a byte is
    /// outside the alphabet. Four characters at a time into a buffer of the exact size.
    ///
    /// Bits left over in a final partial group are ignored, as most decoders do.
    public static func decodeBytes(buffer: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var count = buffer.count
        while count > 0, buffer[count - 1] == UInt8(ascii: "=") { count -= 1 }
        if count % 4 == 1 { return nil }
        let outputCount = count / 4 * 3 + max(0, count % 4 - 1)
        var valid = true
        let output = table.withUnsafeBufferPointer { table in
            [UInt8](unsafeUninitializedCapacity: outputCount) { out, initialized in
                var input = 0, written = 0
                // Every alphabet value is < 64; an invalid byte maps to 0xFF, so OR-ing the four
                // values of a group and testing bit 7 finds any invalid byte in it.
                while input + 4 <= count {
                    let a = UInt32(table[Int(buffer[input])]), b = UInt32(table[Int(buffer[input + 1])])
                    let c = UInt32(table[Int(buffer[input + 2])]), d = UInt32(table[Int(buffer[input + 3])])
                    if (a | b | c | d) & 0x80 != 0 { valid = false; break }
                    let group = a << 18 | b << 12 | c << 6 | d
                    out[written] = UInt8(truncatingIfNeeded: group >> 16)
                    out[written + 1] = UInt8(truncatingIfNeeded: group >> 8)
                    out[written + 2] = UInt8(truncatingIfNeeded: group)
                    input += 4
                    written += 3
                }
                if valid, input < count {
                    // A final group of 2 or 3 characters: 1 or 2 bytes.
                    var group: UInt32 = 0
                    for index in input..<count {
                        let value = UInt32(table[Int(buffer[index])])
                        if value & 0x80 != 0 { valid = false; break }
                        group = group << 6 | value
                    }
                    if valid {
                        if count - input == 2 {
                            out[written] = UInt8(truncatingIfNeeded: group >> 4)
                            written += 1
                        } else {
                            out[written] = UInt8(truncatingIfNeeded: group >> 10)
                            out[written + 1] = UInt8(truncatingIfNeeded: group >> 2)
                            written += 2
                        }
                    }
                }
                // Bytes are plain values: nothing to deinitialize when decoding stops early.
                initialized = valid ? written : 0
            }
        }
        return valid ? output : nil
    }

    /// Encodes bytes as base64url without padding.
    public static func encode(_ data: Data) -> String {
        data.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
