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
        return decodeBytes(buffer: buffer, count: count, strict: false)
    }

    /// Decodes the canonical unpadded base64url of compact JWS (RFC 7515 §2): `nil` for a byte
    /// outside the alphabet, any `=`, a length of 1 mod 4, or non-zero bits left over in the last
    /// character. So each byte string has exactly one accepted text: a JWS with `=` appended or
    /// its last character's spare bits changed is refused rather than verifying as the original.
    public static func decodeCanonicalBytes(buffer: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        decodeBytes(buffer: buffer, count: buffer.count, strict: true)
    }

    /// Decodes the first `count` bytes of `buffer`; `strict` refuses non-zero leftover bits
    /// (a `=` is then outside the alphabet, as `count` covers the whole buffer).
    private static func decodeBytes(buffer: UnsafeBufferPointer<UInt8>, count: Int, strict: Bool) -> [UInt8]? {
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
                    // 2 characters carry 12 bits for 8, 3 carry 18 for 16: the rest must be zero.
                    if valid, strict, group & (count - input == 2 ? 0x0F : 0x03) != 0 { valid = false }
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
        var out: [UInt8] = []
        data.withUnsafeBytes { append($0.bindMemory(to: UInt8.self), to: &out) }
        return String(decoding: out, as: UTF8.self)
    }

    /// The unpadded base64url text of `bytes`, appended to `out` (three bytes at a time through
    /// a table, no intermediate string).
    public static func append(_ bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        let n = bytes.count
        let length = n / 3 * 4 + (n % 3 == 0 ? 0 : n % 3 + 1)
        out.reserveCapacity(out.count + length)
        alphabet.withUnsafeBufferPointer { t in
            var i = 0
            while i + 3 <= n {
                let v = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
                out.append(t[Int(v >> 18 & 63)]); out.append(t[Int(v >> 12 & 63)])
                out.append(t[Int(v >> 6 & 63)]); out.append(t[Int(v & 63)])
                i += 3
            }
            if n - i == 1 {
                let v = UInt32(bytes[i]) << 16
                out.append(t[Int(v >> 18 & 63)]); out.append(t[Int(v >> 12 & 63)])
            } else if n - i == 2 {
                let v = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8
                out.append(t[Int(v >> 18 & 63)]); out.append(t[Int(v >> 12 & 63)]); out.append(t[Int(v >> 6 & 63)])
            }
        }
    }

    /// The encoding alphabet (RFC 4648 §5).
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
}
