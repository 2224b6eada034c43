import Foundation

/// The sample streams of `Events/scenarios` and the test root that signed them, compiled into the binary.
///
/// `seatledger demo` reads these, so it works from any directory and from an installed binary.
/// The build plugin `EmbedSamples` regenerates them whenever a stream or `Tools/pki/root.pem` changes.
public enum DemoSamples {
    /// One sample stream: its file name in `Events/scenarios` and its NDJSON lines.
    public struct Stream: Sendable {
        /// The file name (`group-purchase.ndjson`).
        public let name: String
        /// The NDJSON text, exactly as in the file.
        public let text: String

        /// A stream named `name` holding `text` (for streams read from a directory instead).
        public init(name: String, text: String) {
            self.name = name
            self.text = text
        }

        /// The stream's non-empty lines as bytes, each with its 1-based line number.
        public var lines: [(number: Int, bytes: Data)] {
            text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().compactMap { index, line in
                line.isEmpty ? nil : (index + 1, Data(line.utf8))
            }
        }
    }

    /// Every sample stream, sorted by file name.
    public static let streams: [Stream] = EmbeddedSampleData.streams.map { Stream(name: $0.name, text: $0.text) }

    /// The PEM of the test root (`Tools/pki/root.pem`) that signed the sample streams.
    public static let testRootPEM: String = EmbeddedSampleData.testRootPEM
}
