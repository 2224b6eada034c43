import AppStoreModels
import Foundation

/// Apple error responses SeatLedger acts on, recognised by `errorCode` where Apple publishes one
/// and otherwise by the error's name in `errorMessage`.
///
/// ```swift
/// if result.isAppleError(.startDate) { /* move the window start forward */ }
/// ```
public enum AppleAPIError: String, Sendable, CaseIterable {
    /// Get Notification History's start date is refused: `InvalidStartDateError` (4000015) or
    /// `StartDateTooFarInPastError` (4000017), i.e. older than Apple's history limit.
    case startDate
    /// Unclaim Seat / Associate Seat: `SeatClaimIdNotFoundError` (404, code not published).
    case seatClaimIdNotFound

    /// The published `errorCode`s of this error.
    public var errorCodes: Set<Int64> {
        switch self {
        case .startDate: return [4_000_015, 4_000_017]
        case .seatClaimIdNotFound: return []
        }
    }

    /// Error names that identify it in `errorMessage` (compared without case, spaces or underscores).
    var names: [String] {
        switch self {
        case .startDate: return ["invalidstartdateerror", "startdatetoofarinpasterror"]
        case .seatClaimIdNotFound: return ["seatclaimidnotfounderror", "seatclaimidnotfound", "seatclaimidwasnotfound"]
        }
    }

    /// Whether a response with `status`, `errorCode` and `errorMessage` is this error.
    public func matches(status: Int?, errorCode: Int64?, errorMessage: String?) -> Bool {
        guard let status, (400..<500).contains(status) else { return false }
        if let errorCode, errorCodes.contains(errorCode) { return true }
        if self == .seatClaimIdNotFound, status != 404 { return false }
        guard let errorMessage else { return false }
        let folded = errorMessage.lowercased().filter { $0.isLetter || $0.isNumber }
        return names.contains { folded.contains($0) }
    }
}

extension APICallResult {
    /// Whether the call's final answer is `error`.
    public func isAppleError(_ error: AppleAPIError) -> Bool {
        error.matches(status: status, errorCode: errorCode, errorMessage: errorMessage)
    }

    /// Whether an attempt before the final one got no response (timeout, connection failure), so
    /// Apple may have applied the request without the answer reaching us.
    public var hadLostAnswer: Bool {
        attempts.dropLast().contains { $0.status == nil }
    }
}
