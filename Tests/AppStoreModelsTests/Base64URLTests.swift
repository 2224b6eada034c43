import AppStoreModels
import Foundation
import Testing

@Suite("Base64URL")
struct Base64URLTests {
    /// Foundation's base64 with RFC 4648 §5's alphabet and no padding: what the encoder must write.
    static func reference(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    @Test("encode writes Foundation's base64url for every length 0…200 and every byte value; decode reverses it",
          arguments: [0, 1, 2, 3, 4, 5, 62, 63, 64, 65, 199, 200])
    func roundTrip(length: Int) {
        var generator = SystemRandomNumberGenerator()
        let data = Data((0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let encoded = Base64URL.encode(data)
        #expect(encoded == Self.reference(data))
        #expect(Base64URL.decode(encoded) == data)
        let every = Data((0...255).map { UInt8($0) })
        #expect(Base64URL.encode(every) == Self.reference(every))
    }
}
