import Foundation
import LedgerConcurrency
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads NDJSON lines from a file descriptor without loading the whole input.
///
/// Lines longer than `maxLineLength` are still returned whole (so nothing is lost) and the ingest
/// quarantines them as `line_too_long`. A final line without a newline is returned too (a
/// truncated file loses nothing).
///
/// Reading and splitting run on a thread of their own, a bounded amount ahead of the consumer
/// (``readAheadBytes``), so the thread calling ``nextLine()`` (the ingest's single writer) only
/// takes finished lines. The thread starts at the first ``nextLine()``.
public final class LineReader {
    private let source: LineSource
    /// The current block of split lines and the next one to hand out.
    private var lines: [Data] = []
    private var nextIndex = 0
    private var finished = false
    /// The current 1-based line number.
    public private(set) var lineNumber = 0
    /// Lines longer than this are flagged.
    public let maxLineLength: Int
    /// About how many bytes of split lines the reading thread keeps ready.
    public static let readAheadBytes = 8 << 20

    /// Reads from an open handle.
    public init(handle: FileHandle, maxLineLength: Int = 1 << 20, chunkSize: Int = 1 << 20) {
        self.source = LineSource(handle: handle, chunkSize: max(1, chunkSize), budget: Self.readAheadBytes)
        self.maxLineLength = maxLineLength
    }

    deinit { source.cancel() }

    /// The next line (without its `\n`), or `nil` at end of input.
    public func nextLine() throws -> Data? {
        while nextIndex == lines.count {
            if finished { return nil }
            lines.removeAll(keepingCapacity: true)
            nextIndex = 0
            switch try source.take() {
            case .lines(let block): lines = block
            case .end: finished = true
            }
        }
        defer { nextIndex += 1 }
        lineNumber += 1
        return lines[nextIndex]
    }
}

/// The reading thread of a ``LineReader`` and the bounded queue of line blocks it fills: a
/// ``LedgerConcurrency/BoundedChannel`` weighted by bytes, so the thread stays about `budget`
/// bytes ahead of the consumer.
///
/// `Sendable` without `@unchecked`: `handle`, `chunkSize` and `budget` are immutable (and `handle`
/// is used only by the reading thread once it has started), the queue is a channel, and whether
/// the thread has started is atomic.
private final class LineSource: Sendable {
    enum Item { case lines([Data]), end }

    /// One read's complete lines and their size in bytes.
    private struct Block: Sendable {
        let lines: [Data]
        let bytes: Int
    }

    private let handle: FileHandle
    private let chunkSize: Int
    private let blocks: BoundedChannel<Block>
    private let started = Atomic<Bool>(false)

    init(handle: FileHandle, chunkSize: Int, budget: Int) {
        self.handle = handle
        self.chunkSize = chunkSize
        self.blocks = BoundedChannel(capacity: budget, weight: { $0.bytes })
    }

    /// The next block of lines (waiting for the reading thread), `.end` at end of input, or the read error.
    func take() throws -> Item {
        if started.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged {
            let thread = Thread { [self] in produce() }
            thread.name = "seatledger-lines"
            thread.start()
        }
        guard let block = try blocks.receive() else { return .end }
        return .lines(block.lines)
    }

    /// Stops the reading thread after its current read (the consumer is gone).
    func cancel() { blocks.cancel() }

    /// Hands a block to the consumer, waiting while the queue is over budget; `false` once cancelled.
    private func publish(_ lines: [Data], bytes: Int) -> Bool {
        blocks.send(Block(lines: lines, bytes: bytes))
    }

    /// No more blocks: the end of input, or the read error (after the blocks already published).
    private func finish(_ error: Error?) {
        blocks.close(throwing: error)
    }

    /// The reading thread: reads chunks with `read(2)` into one buffer, splits the complete lines
    /// out of it and publishes them, one block per read.
    private func produce() {
        let fd = handle.fileDescriptor
        var buffer = [UInt8](repeating: 0, count: chunkSize)
        var filled = 0       // bytes of `buffer` holding input
        var start = 0        // first byte of the unfinished line
        var searched = 0     // bytes of the unfinished line (from `start`) already searched for a newline
        var block: [Data] = []
        var blockBytes = 0
        while true {
            if filled == buffer.count {
                if start > 0 {
                    // Move the unfinished line to the front.
                    buffer.withUnsafeMutableBytes { raw in
                        guard let base = raw.baseAddress else { return }
                        memmove(base, base + start, filled - start)
                    }
                    filled -= start
                    start = 0
                } else {
                    // One line longer than the buffer: grow it (the line is still returned whole).
                    buffer.append(contentsOf: repeatElement(0, count: buffer.count))
                }
            }
            let count = buffer.withUnsafeMutableBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                while true {
                    let n = read(fd, base + filled, raw.count - filled)
                    if n < 0 && errno == EINTR { continue }
                    return n
                }
            }
            if count < 0 {
                let code = errno
                if !block.isEmpty, !publish(block, bytes: blockBytes) { return }
                finish(POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO))
                return
            }
            if count == 0 {
                if start < filled {
                    block.append(buffer.withUnsafeBytes { Data($0[start..<filled]) })
                    blockBytes += filled - start
                }
                if !block.isEmpty, !publish(block, bytes: blockBytes) { return }
                finish(nil)
                return
            }
            filled += count
            buffer.withUnsafeBytes { raw in
                guard let base = raw.baseAddress else { return }
                var from = start + searched
                while from < filled, let hit = memchr(base + from, 0x0A, filled - from) {
                    let newline = base.distance(to: UnsafeRawPointer(hit))
                    block.append(Data(bytes: base + start, count: newline - start))
                    blockBytes += newline - start
                    start = newline + 1
                    from = start
                }
                searched = filled - start
            }
            // Publish after every read, so lines arriving slowly (stdin) are not held back.
            if !block.isEmpty {
                guard publish(block, bytes: blockBytes) else { return }
                block = []
                blockBytes = 0
            }
        }
    }
}
