import Foundation

/// Reads NDJSON lines from a file descriptor without loading the whole input.
///
/// Lines longer than `maxLineLength` are still returned whole (so nothing is lost) and the ingest
/// quarantines them as `line_too_long`. A final line without a newline is returned too (a
/// truncated file loses nothing).
public final class LineReader {
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    /// Start of the unread part of `buffer`.
    private var start = 0
    private var atEOF = false
    private let chunkSize: Int
    /// The current 1-based line number.
    public private(set) var lineNumber = 0
    /// Lines longer than this are flagged.
    public let maxLineLength: Int

    /// Reads from an open handle.
    public init(handle: FileHandle, maxLineLength: Int = 1 << 20, chunkSize: Int = 1 << 20) {
        self.handle = handle
        self.maxLineLength = maxLineLength
        self.chunkSize = chunkSize
    }

    /// The next line (without its `\n`), or `nil` at end of input.
    public func nextLine() throws -> Data? {
        var searchFrom = start
        while true {
            if let newline = buffer[searchFrom...].firstIndex(of: 0x0A) {
                let line = Data(buffer[start..<newline])
                start = newline + 1
                lineNumber += 1
                return line
            }
            searchFrom = buffer.count
            if atEOF {
                guard start < buffer.count else { return nil }
                let line = Data(buffer[start...])
                start = buffer.count
                lineNumber += 1
                return line
            }
            // Compact the consumed prefix before reading more.
            if start > 0 {
                buffer.removeFirst(start)
                searchFrom -= start
                start = 0
            }
            let chunk = try handle.read(upToCount: chunkSize) ?? Data()
            if chunk.isEmpty { atEOF = true } else { buffer.append(contentsOf: chunk) }
        }
    }
}
