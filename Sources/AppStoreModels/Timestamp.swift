import Foundation

/// Milliseconds since 1970-01-01T00:00:00Z, the unit of every App Store date field.
public typealias EpochMillis = Int64

/// Parsing and formatting of App Store timestamps (epoch milliseconds or ISO 8601).
public enum Timestamp {
    /// Parses epoch milliseconds (number or digits) or ISO 8601 (with or without fractional seconds).
    ///
    /// ```swift
    /// Timestamp.parse("2026-11-02T10:00:00.000Z")  // 1793613600000
    /// Timestamp.parse("1793613600000")             // 1793613600000
    /// ```
    public static func parse(_ text: String) -> EpochMillis? {
        // Stored and signed dates carry no surrounding blanks: only trim (through Foundation,
        // slow) when an end could be one. `.whitespaces` is space, tab and the other Unicode
        // space separators, which all start with a byte of 0x80 or more.
        func mayBeBlank(_ byte: UInt8?) -> Bool { byte.map { $0 == 0x20 || $0 == 0x09 || $0 >= 0x80 } ?? false }
        let trimmed = mayBeBlank(text.utf8.first) || mayBeBlank(text.utf8.last) ? text.trimmingCharacters(in: .whitespaces) : text
        if let millis = Int64(trimmed) { return millis }
        return parseISO8601(trimmed)
    }

    /// Reads a JSON timestamp: a number of milliseconds, or a string in either form.
    ///
    /// A fractional number is truncated toward zero; one outside the `Int64` range (e.g. `1e300`)
    /// or not finite gives `nil`, never a trap.
    public static func parse(_ json: JSONValue?) -> EpochMillis? {
        guard let json else { return nil }
        switch json {
        case .int(let i): return i
        case .double(let d): return d.isFinite ? Int64(exactly: d.rounded(.towardZero)) : nil
        case .string(let s): return parse(s)
        default: return nil
        }
    }

    /// The moments ``iso8601(_:)`` prints as they are: years 0001 to 9999 (four digits). A
    /// moment a user asks about (a clock option or query parameter) must be in it; a later one
    /// would print as another year, and a link carrying it would name another moment.
    public static let printableRange: ClosedRange<EpochMillis> = -62_135_596_800_000...253_402_300_799_999

    /// ISO 8601 with milliseconds in UTC, e.g. `2026-11-02T10:00:00.000Z`.
    public static func iso8601(_ millis: EpochMillis) -> String {
        var out = [UInt8]()
        out.reserveCapacity(24)
        appendISO8601(millis, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends ``iso8601(_:)``'s text as UTF-8 (ASCII digits and `-:.TZ`: nothing a JSON string escapes).
    public static func appendISO8601(_ millis: EpochMillis, to out: inout [UInt8]) {
        var seconds = millis / 1000
        var ms = millis % 1000
        if ms < 0 { ms += 1000; seconds -= 1 }
        var days = seconds / 86_400
        var secOfDay = seconds % 86_400
        if secOfDay < 0 { secOfDay += 86_400; days -= 1 }
        let (y, m, d) = civilFromDays(days)
        let hh = secOfDay / 3600, mm = (secOfDay % 3600) / 60, ss = secOfDay % 60
        // Hand-written digits: String(format:) goes through Foundation's locale machinery and is slow.
        func digits(_ value: Int64, _ width: Int) {
            var divisor: Int64 = 1
            for _ in 1..<width { divisor *= 10 }
            var v = value
            if v < 0 { out.append(UInt8(ascii: "-")); v = -v }
            while divisor > 0 {
                out.append(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: (v / divisor) % 10))
                divisor /= 10
            }
        }
        digits(y, 4); out.append(UInt8(ascii: "-")); digits(m, 2); out.append(UInt8(ascii: "-")); digits(d, 2)
        out.append(UInt8(ascii: "T")); digits(hh, 2); out.append(UInt8(ascii: ":")); digits(mm, 2)
        out.append(UInt8(ascii: ":")); digits(ss, 2); out.append(UInt8(ascii: ".")); digits(ms, 3); out.append(UInt8(ascii: "Z"))
    }

    /// A `Date` for epoch milliseconds.
    public static func date(_ millis: EpochMillis) -> Date {
        Date(timeIntervalSince1970: Double(millis) / 1000)
    }

    /// Epoch milliseconds for a `Date` (truncated).
    public static func millis(_ date: Date) -> EpochMillis {
        EpochMillis((date.timeIntervalSince1970 * 1000).rounded(.down))
    }

    private static func parseISO8601(_ s: String) -> EpochMillis? {
        // YYYY-MM-DD[THH:MM[:SS[.fff]]][Z|±HH:MM]
        let bytes = Array(s.utf8)
        var i = 0
        func number(_ count: Int) -> Int64? {
            guard i + count <= bytes.count else { return nil }
            var value: Int64 = 0
            for _ in 0..<count {
                let b = bytes[i]
                guard b >= 0x30, b <= 0x39 else { return nil }
                value = value * 10 + Int64(b - 0x30)
                i += 1
            }
            return value
        }
        func expect(_ c: Character) -> Bool {
            guard i < bytes.count, bytes[i] == c.asciiValue else { return false }
            i += 1
            return true
        }
        // A day the month does not have (2026-02-30, 2026-11-31) is refused, not rolled into the next month.
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2),
              (1...12).contains(month), (1...daysInMonth(month, of: year)).contains(day) else { return nil }
        var hour: Int64 = 0, minute: Int64 = 0, second: Int64 = 0, fraction: Int64 = 0
        if i < bytes.count, bytes[i] == UInt8(ascii: "T") || bytes[i] == UInt8(ascii: " ") {
            i += 1
            guard let h = number(2), expect(":"), let m = number(2) else { return nil }
            hour = h; minute = m
            if expect(":") {
                guard let sec = number(2) else { return nil }
                second = sec
                if expect(".") {
                    var digits = 0
                    while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 {
                        if digits < 3 { fraction = fraction * 10 + Int64(bytes[i] - 0x30) }
                        digits += 1
                        i += 1
                    }
                    guard digits > 0 else { return nil }
                    for _ in digits..<max(digits, 3) { fraction *= 10 }
                }
            }
            guard hour < 24, minute < 60, second < 61 else { return nil }
        }
        var offsetMinutes: Int64 = 0
        if i < bytes.count {
            if expect("Z") {
            } else if bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") {
                let sign: Int64 = bytes[i] == UInt8(ascii: "+") ? 1 : -1
                i += 1
                guard let oh = number(2) else { return nil }
                _ = expect(":")
                guard let om = number(2), oh < 24, om < 60 else { return nil }
                offsetMinutes = sign * (oh * 60 + om)
            } else {
                return nil
            }
        }
        guard i == bytes.count else { return nil }
        let days = daysFromCivil(year, month, day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetMinutes * 60
        return seconds * 1000 + fraction
    }

    /// The number of days of `month` (1–12) in `year` (proleptic Gregorian: February has 29 in
    /// years divisible by 4, except centuries not divisible by 400).
    static func daysInMonth(_ month: Int64, of year: Int64) -> Int64 {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    // Howard Hinnant's civil calendar algorithms (proleptic Gregorian, UTC).
    private static func daysFromCivil(_ y0: Int64, _ m: Int64, _ d: Int64) -> Int64 {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    private static func civilFromDays(_ z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp + (mp < 10 ? 3 : -9)
        return (m <= 2 ? y + 1 : y, m, d)
    }
}
