import Foundation
import JWSVerification
import LedgerEvents
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A directory of one-message files: each is claimed (renamed into this consumer's own folder
/// under `processing/`), read through the descriptor opened on the claimed file, ingested, then
/// moved to `done/` (appended or duplicate) or `rejected/` (quarantined) — only after the
/// transaction that settled it commits.
///
/// Several consumers may follow one spool: the rename that claims a file is atomic, so exactly one
/// consumer gets each file, and a consumer reads only what is in its own claim folder
/// (``SpoolClaim``: `processing/consumer-…`, locked with `flock` while the consumer runs). The
/// claims of a consumer that died (its folder no longer locked), and files an older version left
/// directly in `processing/`, are taken over by the next scan of a running consumer.
///
/// Producers should write a file under a name starting with `.` or ending in `.tmp` and rename it
/// when complete; such names are skipped. Because a file is renamed into `processing/` before it
/// is opened, a producer replacing a name by rename while a batch runs cannot lose a version:
/// the claim takes the version that was there, and the new one is a new entry for the next scan.
///
/// Symbolic links are never followed: entries are opened `O_NOFOLLOW`, and a `done/`,
/// `rejected/` or `processing/` that is a link refuses the whole spool (a link there would let
/// anyone who can write the spool move files anywhere). Entries that are not regular files
/// (links, FIFOs, sockets, devices) or cannot be opened are reported as ``SpoolProblem``s,
/// moved to `rejected/` (the entry itself, never what it points at) and counted; nothing of them
/// is read. Names are shown escaped (``SpoolDirectory/printable(_:)``).
public struct SpoolDirectory: Sendable {
    /// The spool directory.
    public let url: URL
    /// Files larger than this are quarantined as `message_too_large` with their size, SHA-256
    /// and first 64 KiB, read in bounded memory.
    public var maxMessageBytes: Int
    /// Whether `apiResponse` envelopes in the spool are applied (the operator allowing them for
    /// this source, `ingest --api-responses`); by default they are quarantined as `untrusted_api_response`.
    public var acceptsAPIResponses: Bool

    /// A spool at `url`.
    public init(url: URL, maxMessageBytes: Int = 4 << 20, acceptsAPIResponses: Bool = false) {
        self.url = url
        self.maxMessageBytes = maxMessageBytes
        self.acceptsAPIResponses = acceptsAPIResponses
    }

    /// Where settled files go.
    public var doneURL: URL { url.appendingPathComponent("done", isDirectory: true) }
    /// Where quarantined files go.
    public var rejectedURL: URL { url.appendingPathComponent("rejected", isDirectory: true) }
    /// Where a file is moved to claim it before it is read (left there only by a crash, and
    /// ingested first by the next run).
    public var processingURL: URL { url.appendingPathComponent("processing", isDirectory: true) }

    static let subfolders = ["done", "rejected", "processing"]

    /// Files waiting to be ingested, by name (including files claimed in `processing/` and not
    /// settled yet: by a running consumer, or left by a crashed one).
    public func pendingFiles() throws -> [URL] {
        let folder = try DirectoryDescriptor(path: url.path)
        var files = try Self.entries(of: folder).filter(Self.isCandidate).map { url.appendingPathComponent(String(decoding: $0, as: UTF8.self)) }
        if let processing = try? DirectoryDescriptor(path: processingURL.path) {
            files += try Self.entries(of: processing).filter(Self.isCandidate)
                .map { processingURL.appendingPathComponent(String(decoding: $0, as: UTF8.self)) }
            for name in try Self.subdirectories(of: processing) {
                let claimURL = processingURL.appendingPathComponent(String(decoding: name, as: UTF8.self), isDirectory: true)
                guard let claim = try? DirectoryDescriptor(path: claimURL.path) else { continue }
                files += try Self.entries(of: claim).filter(Self.isCandidate)
                    .map { claimURL.appendingPathComponent(String(decoding: $0, as: UTF8.self)) }
            }
        }
        return files
    }

    // MARK: Names

    /// `name` for a terminal or a log: printable ASCII and valid UTF-8 as is; control characters,
    /// escape codes, DEL, backslash and invalid UTF-8 bytes as `\n`, `\t`, `\\`, `\x1b` …, so a name
    /// cannot start a new line or drive the terminal.
    public static func printable(_ name: [UInt8]) -> String {
        var out = ""
        var index = 0
        while index < name.count {
            let byte = name[index]
            if byte >= 0x80 {
                // A valid UTF-8 sequence of a printable scalar stays; anything else is escaped byte by byte.
                let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
                if length > 1, index + length <= name.count,
                   let text = String(validating: name[index..<(index + length)], as: UTF8.self),
                   let scalar = text.unicodeScalars.first, !scalar.properties.generalCategory.isControlOrFormat {
                    out += text
                    index += length
                    continue
                }
                out += String(format: "\\x%02x", byte)
            } else {
                switch byte {
                case 0x0A: out += "\\n"
                case 0x0D: out += "\\r"
                case 0x09: out += "\\t"
                case 0x5C: out += "\\\\"
                case 0x20..<0x7F: out.unicodeScalars.append(Unicode.Scalar(byte))
                default: out += String(format: "\\x%02x", byte)
                }
            }
            index += 1
        }
        return out
    }

    /// `name` as bytes, for the library callers who hold a `String`.
    public static func printable(_ name: String) -> String { printable(Array(name.utf8)) }

    package static func isCandidate(_ name: [UInt8]) -> Bool {
        guard let first = name.first, first != UInt8(ascii: ".") else { return false }
        if name.count >= 4, name.suffix(4).elementsEqual(".tmp".utf8) { return false }
        return !subfolders.contains { name.elementsEqual($0.utf8) }
    }

    // MARK: System calls (all relative to descriptors of the spool and its folders)

    /// The entries of a directory (not `.`/`..`), sorted by their bytes; subdirectories left out.
    package static func entries(of directory: DirectoryDescriptor) throws -> [[UInt8]] {
        try listing(of: directory) { name, isDirectory in
            !isDirectory && name != [0x2E] && name != [0x2E, 0x2E]
        }
    }

    /// The subdirectories of a directory whose names do not start with `.` (claim folders under
    /// `processing/`), sorted by their bytes; links are not followed.
    static func subdirectories(of directory: DirectoryDescriptor) throws -> [[UInt8]] {
        try listing(of: directory) { name, isDirectory in
            isDirectory && name.first.map { $0 != UInt8(ascii: ".") } == true
        }
    }

    /// The names in a directory that `keep` takes (given each name and whether it is a directory,
    /// links not followed), sorted by their bytes.
    private static func listing(of directory: DirectoryDescriptor, keep: ([UInt8], Bool) -> Bool) throws -> [[UInt8]] {
        let copy = dup(directory.fd)
        guard copy >= 0, let stream = fdopendir(copy) else {
            if copy >= 0 { close(copy) }
            throw SpoolError(message: "cannot list \(printable(directory.path)): \(String(cString: strerror(errno)))")
        }
        defer { closedir(stream) }
        rewinddir(stream)
        var names: [[UInt8]] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in Array(raw.prefix { $0 != 0 }) }
            var info = stat()
            let isDirectory = withCName(name) { fstatat(directory.fd, $0, &info, AT_SYMLINK_NOFOLLOW) } == 0
                && (info.st_mode & S_IFMT) == S_IFDIR
            if keep(name, isDirectory) { names.append(name) }
        }
        return names.sorted { $0.lexicographicallyPrecedes($1) }
    }

    /// The folder `name` of the spool, created if missing; refused when it is a symbolic link or not a directory.
    package static func subfolder(_ name: String, of spool: DirectoryDescriptor, at url: URL) throws -> DirectoryDescriptor {
        var info = stat()
        if fstatat(spool.fd, name, &info, AT_SYMLINK_NOFOLLOW) != 0 {
            guard errno == ENOENT else {
                throw SpoolError(message: "cannot inspect \(printable(url.appendingPathComponent(name).path)): \(String(cString: strerror(errno)))")
            }
            if mkdirat(spool.fd, name, 0o755) != 0, errno != EEXIST {
                throw SpoolError(message: "cannot create \(printable(url.appendingPathComponent(name).path)): \(String(cString: strerror(errno)))")
            }
        } else if (info.st_mode & S_IFMT) != S_IFDIR {
            let what = (info.st_mode & S_IFMT) == S_IFLNK ? "a symbolic link" : "not a directory"
            throw SpoolError(message: "refusing the spool \(printable(url.path)): \(printable(url.appendingPathComponent(name).path)) is \(what); "
                + "files would be moved wherever it points. Replace it with a real directory")
        }
        let fd = openat(spool.fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            let shown = printable(url.appendingPathComponent(name).path)
            if code == ELOOP || code == ENOTDIR {
                throw SpoolError(message: "refusing the spool \(printable(url.path)): \(shown) is \(code == ELOOP ? "a symbolic link" : "not a directory"); "
                    + "files would be moved wherever it points. Replace it with a real directory")
            }
            throw SpoolError(message: "cannot open \(shown): \(String(cString: strerror(code)))")
        }
        return DirectoryDescriptor(fd: fd, path: url.appendingPathComponent(name).path)
    }

    /// Renames `name` from one folder into another, never over an existing file (a same-named
    /// file there gets a unique suffix). Returns the name it has there, or `nil` if it was gone.
    package static func move(_ name: [UInt8], from source: DirectoryDescriptor, to target: DirectoryDescriptor) throws -> [UInt8]? {
        var destination = name
        var info = stat()
        while (withCName(destination) { fstatat(target.fd, $0, &info, AT_SYMLINK_NOFOLLOW) }) == 0 {
            destination = name + Array(".\(UUID().uuidString)".utf8)
        }
        let result = withCName(name) { from in withCName(destination) { to in renameat(source.fd, from, target.fd, to) } }
        if result == 0 { return destination }
        if errno == ENOENT { return nil }
        throw SpoolError(message: "cannot move \(printable(name)) from \(printable(source.path)) to \(printable(target.path)): \(String(cString: strerror(errno)))")
    }

    package enum ReadResult {
        case message(Data, IngestRejection?)
        case refused(String)
    }

    /// Reads a claimed file through one descriptor opened without following links and without
    /// blocking (a FIFO would otherwise wait for a writer); over `limit` bytes, only the first
    /// 64 KiB are kept and the rest is hashed in chunks.
    package static func read(_ name: [UInt8], in folder: DirectoryDescriptor, limit: Int) -> ReadResult {
        let fd = withCName(name) { openat(folder.fd, $0, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY) }
        guard fd >= 0 else {
            let code = errno
            return .refused(code == ELOOP ? "a symbolic link (not followed)" : "cannot be opened: \(String(cString: strerror(code)))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return .refused("cannot be inspected: \(String(cString: strerror(errno)))") }
        switch info.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFIFO: return .refused("a FIFO, not a regular file")
        case S_IFSOCK: return .refused("a socket, not a regular file")
        case S_IFCHR, S_IFBLK: return .refused("a device, not a regular file")
        default: return .refused("not a regular file")
        }
        let hasher = SHA256Hasher()
        var kept = Data()
        var length = 0
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = chunk.withUnsafeMutableBytes { raw -> Int in
                while true {
                    let n = Glibc.read(fd, raw.baseAddress, raw.count)
                    if n < 0 && errno == EINTR { continue }
                    return n
                }
            }
            if count < 0 { return .refused("cannot be read: \(String(cString: strerror(errno)))") }
            if count == 0 { break }
            chunk.withUnsafeBytes { raw in
                let piece = UnsafeRawBufferPointer(rebasing: raw[0..<count])
                hasher.update(piece)
                // Keep it all while under the limit; past it, only the first 64 KiB.
                if length + count <= limit {
                    kept.append(contentsOf: piece)
                } else {
                    if kept.count > LineReader.keptPrefixBytes { kept = Data(kept.prefix(LineReader.keptPrefixBytes)) }
                    let room = LineReader.keptPrefixBytes - kept.count
                    if room > 0 { kept.append(contentsOf: piece.prefix(room)) }
                }
            }
            length += count
        }
        if length > limit {
            let prefix = kept.prefix(LineReader.keptPrefixBytes)
            return .message(Data(prefix), .tooLarge(line: false, length: length, limit: limit, sha256: hasher.finalizeHex(),
                                                    kept: prefix.count))
        }
        return .message(kept, nil)
    }
}

/// A spool entry refused without being read: a symbolic link, a FIFO, a socket, a device or an
/// unreadable file. It was moved to `rejected/` as it was.
public struct SpoolProblem: Sendable, Equatable, CustomStringConvertible {
    /// The entry's name, escaped for printing.
    public let name: String
    /// What it was.
    public let reason: String

    /// A problem with the entry `name` (escaped for printing).
    package init(name: String, reason: String) {
        self.name = name
        self.reason = reason
    }

    /// The text a person reads (what the CLI prints for it).
    public var description: String { "\(name): \(reason); moved to rejected/ unread" }
}

/// One consumer's claim folder, `processing/consumer-<pid>-<random>`: a spool file is claimed by
/// renaming it in here (atomic: one consumer wins each file) and read only from here, so two
/// consumers on one spool never read each other's claims.
///
/// The folder is created under a hidden name, locked (`flock`, exclusive) and only then renamed to
/// its visible name, so another consumer never sees it unlocked while its owner lives; the kernel
/// drops the lock when the owner exits, however it exits. A visible folder whose lock can be taken
/// belongs to no running consumer: ``adoptAbandoned()`` moves its files (and files an older
/// version claimed directly into `processing/`) into this consumer's folder, each by one atomic
/// rename, so a crashed consumer's claims are ingested once.
package final class SpoolClaim {
    /// The `processing/` folder.
    let processing: DirectoryDescriptor
    /// This consumer's folder (locked while this object lives).
    package let folder: DirectoryDescriptor
    /// Its name in `processing/`.
    let name: [UInt8]

    /// Creates, locks and shows this consumer's claim folder in `processing`.
    package init(in processing: DirectoryDescriptor) throws {
        self.processing = processing
        let visible = "consumer-\(getpid())-\(UUID().uuidString.prefix(8).lowercased())"
        let hidden = "." + visible
        guard mkdirat(processing.fd, hidden, 0o700) == 0 else {
            throw SpoolError(message: "cannot create a claim folder in \(SpoolDirectory.printable(processing.path)): \(String(cString: strerror(errno)))")
        }
        let fd = openat(processing.fd, hidden, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0, flock(fd, LOCK_EX | LOCK_NB) == 0, renameat(processing.fd, hidden, processing.fd, visible) == 0 else {
            let reason = String(cString: strerror(errno))
            _ = unlinkat(processing.fd, hidden, AT_REMOVEDIR)
            throw SpoolError(message: "cannot set up a claim folder in \(SpoolDirectory.printable(processing.path)): \(reason)")
        }
        folder = DirectoryDescriptor(fd: fd, path: processing.path + "/" + visible)
        name = Array(visible.utf8)
    }

    /// Moves into this consumer's folder the files of every claim folder no running consumer holds
    /// (its lock taken here, then the folder removed) and the files directly in `processing/`.
    package func adoptAbandoned() throws {
        for file in try SpoolDirectory.entries(of: processing).filter(SpoolDirectory.isCandidate) {
            _ = try SpoolDirectory.move(file, from: processing, to: folder)
        }
        for other in try SpoolDirectory.subdirectories(of: processing) where other != name {
            let fd = withCName(other) { openat(processing.fd, $0, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
            guard fd >= 0 else { continue }  // removed meanwhile
            let abandoned = DirectoryDescriptor(fd: fd, path: processing.path + "/" + SpoolDirectory.printable(other))
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { continue }  // its consumer is running
            for file in try SpoolDirectory.entries(of: abandoned).filter(SpoolDirectory.isCandidate) {
                _ = try SpoolDirectory.move(file, from: abandoned, to: folder)
            }
            _ = withCName(other) { unlinkat(processing.fd, $0, AT_REMOVEDIR) }
        }
    }

    /// Removes the folder when it is empty (what a stop or an error left in it stays for the next
    /// run to take over); the lock goes with the descriptor.
    package func release() {
        _ = withCName(name) { unlinkat(processing.fd, $0, AT_REMOVEDIR) }
    }
}

/// A spool directory that cannot be used (a symlinked subfolder, an unreadable directory).
public struct SpoolError: Error, Sendable, CustomStringConvertible {
    /// What was wrong, naming the path (escaped).
    public let message: String
    /// The text a person reads (what the CLI prints for it).
    public var description: String { message }
}

/// An open directory, owned: closed in `deinit`. Spool operations go through it (`openat`,
/// `renameat`), so a folder swapped for a link after the check is never followed.
package final class DirectoryDescriptor {
    let fd: Int32
    let path: String

    package init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    /// Opens the directory at `path` (which the operator named: a link to it is followed).
    package convenience init(path: String) throws {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else {
            throw SpoolError(message: "cannot open the spool \(SpoolDirectory.printable(path)): \(String(cString: strerror(errno)))")
        }
        self.init(fd: fd, path: path)
    }

    deinit { close(fd) }
}

extension Unicode.GeneralCategory {
    /// Control, format, separator (line/paragraph), private-use, surrogate or unassigned: never printed raw.
    var isControlOrFormat: Bool {
        switch self {
        case .control, .format, .lineSeparator, .paragraphSeparator, .privateUse, .surrogate, .unassigned: return true
        default: return false
        }
    }
}

/// Anything that says whether a long-running loop should stop (e.g. after SIGTERM).
public protocol StopRequest {
    /// Whether to stop after the current batch.
    var isStopped: Bool { get }
}

/// Calls `body` with `name` as a NUL-terminated C string (directory entry names hold no NUL).
func withCName<R>(_ name: [UInt8], _ body: (UnsafePointer<CChar>) -> R) -> R {
    (name + [0]).withUnsafeBufferPointer { bytes in
        bytes.withMemoryRebound(to: CChar.self) { body($0.baseAddress!) }
    }
}
