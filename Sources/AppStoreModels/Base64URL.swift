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
        var utf8 = Array(text.utf8)
        while utf8.last == UInt8(ascii: "=") { utf8.removeLast() }
        return decode(bytes: utf8[...])
    }

    /// Decodes base64url bytes (no padding); `nil` if a byte is outside the alphabet.
    public static func decode(bytes: ArraySlice<UInt8>) -> Data? {
        let count = bytes.count
        if count % 4 == 1 { return nil }
        var output = [UInt8]()
        output.reserveCapacity(count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for byte in bytes {
            let value = table[Int(byte)]
            if value == 0xFF { return nil }
            accumulator = (accumulator << 6) | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
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
