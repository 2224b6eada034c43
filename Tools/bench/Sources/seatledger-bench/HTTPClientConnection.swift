import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One HTTP/1.1 client connection to `127.0.0.1:port` for the load generators (`post`, `get`):
/// writes a request, reads its `Content-Length` framed answer, keeps the connection alive.
///
/// When an answer says `Connection: close` (gunicorn's sync workers say it on every answer) the
/// next request opens a new connection; ``connects`` counts them. A request written on a reused
/// connection that the server had already closed (an idle timeout) is written once more on a
/// new one, if no byte of an answer had arrived. Not thread-safe: one per load thread.
final class HTTPClientConnection {
    /// What one exchange gave: the status (0 when no answer arrived) and the body's length.
    struct Answer {
        let status: Int
        let bodyBytes: Int
    }

    private let port: UInt16
    private var fd: Int32 = -1
    private var reused = false
    private var buffer: [UInt8] = []
    private var chunk = [UInt8](repeating: 0, count: 65_536)
    /// Connections opened so far (1 for a connection kept alive throughout).
    private(set) var connects = 0

    init(port: UInt16) { self.port = port }

    deinit { if fd >= 0 { close(fd) } }

    /// Sends `request` (a whole HTTP/1.1 message) and reads one answer; status 0 when the
    /// connection failed before an answer came.
    func exchange(_ request: Data) -> Answer {
        for attempt in 0..<2 {
            if fd < 0, !open() { return Answer(status: 0, bodyBytes: 0) }
            let wasReused = reused
            reused = true
            guard write(request) else {
                drop()
                if wasReused, attempt == 0 { continue }
                return Answer(status: 0, bodyBytes: 0)
            }
            switch readAnswer() {
            case .answer(let answer, let closes):
                if closes { drop() }
                return answer
            case .closedBeforeAnswer:
                drop()
                if wasReused, attempt == 0 { continue }
                return Answer(status: 0, bodyBytes: 0)
            case .failed:
                drop()
                return Answer(status: 0, bodyBytes: 0)
            }
        }
        return Answer(status: 0, bodyBytes: 0)
    }

    private func open() -> Bool {
        let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketFD >= 0 else { return false }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var noDelay: Int32 = 1
        setsockopt(socketFD, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(socketFD)
            return false
        }
        fd = socketFD
        reused = false
        buffer.removeAll(keepingCapacity: true)
        connects += 1
        return true
    }

    private func drop() {
        if fd >= 0 { close(fd) }
        fd = -1
        buffer.removeAll(keepingCapacity: true)
    }

    private func write(_ request: Data) -> Bool {
        request.withUnsafeBytes { raw -> Bool in
            var offset = 0
            while offset < raw.count {
                let count = send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                if count <= 0 { return false }
                offset += count
            }
            return true
        }
    }

    private enum ReadResult {
        case answer(Answer, closes: Bool)
        case closedBeforeAnswer
        case failed
    }

    /// Reads headers to the blank line, then `Content-Length` bytes (or to the end of the stream
    /// when the server closes instead of framing the body).
    private func readAnswer() -> ReadResult {
        var head: (end: Int, status: Int, length: Int?, closes: Bool)?
        while true {
            if head == nil, let end = Self.headerEnd(buffer) { head = Self.parseHead(buffer, end: end) }
            if let head, let length = head.length, buffer.count >= head.end + length {
                buffer.removeFirst(head.end + length)
                return .answer(Answer(status: head.status, bodyBytes: length), closes: head.closes)
            }
            let count = recv(fd, &chunk, chunk.count, 0)
            if count <= 0 {
                if let head, head.length == nil, count == 0 {
                    let body = buffer.count - head.end
                    buffer.removeAll(keepingCapacity: true)
                    return .answer(Answer(status: head.status, bodyBytes: body), closes: true)
                }
                return buffer.isEmpty && count == 0 ? .closedBeforeAnswer : .failed
            }
            buffer.append(contentsOf: chunk[0..<count])
        }
    }

    /// The index just past the `\r\n\r\n` that ends the headers, if they are complete.
    private static func headerEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4) where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index + 4
        }
        return nil
    }

    /// Status, `Content-Length` (nil when absent) and whether the server closes after this answer.
    private static func parseHead(_ bytes: [UInt8], end: Int) -> (end: Int, status: Int, length: Int?, closes: Bool) {
        let text = String(decoding: bytes[0..<end], as: UTF8.self)
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: true)[...]
        let statusLine = lines.popFirst() ?? ""
        let status = Int(statusLine.split(separator: " ").dropFirst().first ?? "") ?? 0
        var length: Int?
        var closes = statusLine.hasPrefix("HTTP/1.0")
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            if name == "content-length" { length = Int(value) }
            if name == "connection" { closes = value.lowercased() == "close" }
        }
        return (end, status, length, closes)
    }
}
