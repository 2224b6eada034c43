import Foundation
import LedgerEvents

/// A retraction found, inside its committing transaction, that the event it withdraws was
/// retracted already (by another command that committed between the caller's read and this
/// commit). Nothing of the commit was applied.
public struct EventAlreadyRetracted: Error, Sendable, Equatable, CustomStringConvertible {
    /// The retracted event's id.
    public let eventId: String
    /// The position of the earlier retraction.
    public let retractionPosition: Int64

    /// Creates the error.
    public init(eventId: String, retractionPosition: Int64) {
        self.eventId = eventId
        self.retractionPosition = retractionPosition
    }

    /// The text a person reads.
    public var description: String {
        "event \(eventId) was already retracted at position \(retractionPosition); nothing was appended"
    }

    /// Throws when `positions` (of the events that name `eventId` as a
    /// ``IdentifierKind/retractedEventId``, read inside the committing transaction while the
    /// engine's append lock is held) is not empty: the check every engine's
    /// ``LedgerStore/appendRetraction(_:retracting:)`` runs before it appends.
    public static func check(_ eventId: String, retractions positions: [Int64]) throws(EventAlreadyRetracted) {
        if let earlier = positions.min() { throw EventAlreadyRetracted(eventId: eventId, retractionPosition: earlier) }
    }
}
