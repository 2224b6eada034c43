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

    /// Decodes base64url from a raw buffer: one table lookup per byte, no intermediate copies.
    public static func decode(buffer: UnsafeBufferPointer<UInt8>) -> Data? {
        var count = buffer.count
        while count > 0, buffer[count - 1] == UInt8(ascii: "=") { count -= 1 }
        if count % 4 == 1 { return nil }
        let table = Self.table  // one lookup of the static, not one per byte
        var output = [UInt8](repeating: 0, count: count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        var written = 0
        for index in 0..<count {
            let value = table[Int(buffer[index])]
            if value == 0xFF { return nil }
            accumulator = (accumulator << 6) | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output[written] = UInt8(truncatingIfNeeded: accumulator >> UInt32(bits))
                written += 1
            }
        }
        return Data(output)
    }

    /// Encodes bytes as base64url without padding.
    public static func encode(_ data: Data) -> String {
        data.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
