/// Arithmetic on Apple's numbers that cannot trap.
///
/// `quantity`, `revokedSeatQuantity`, `renewalQuantity` and seat counts come from signed
/// payloads and are only known to fit an `Int64`: a `quantity` of `Int64.min` once killed ingest
/// with an overflow trap in the fold. Every sum and difference over them saturates at the
/// `Int64` bounds instead; the values themselves are flagged by the `out_of_range_quantity`
/// anomaly (``SeatQuantity/plausibleRange``).
extension Int64 {
    /// `self + other`, clamped to `Int64.min ... Int64.max`.
    @inlinable public func saturatingAdd(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other < 0 ? .min : .max) : sum
    }

    /// `self - other`, clamped to `Int64.min ... Int64.max`.
    @inlinable public func saturatingSubtract(_ other: Int64) -> Int64 {
        let (difference, overflow) = subtractingReportingOverflow(other)
        return overflow ? (other < 0 ? .max : .min) : difference
    }
}

extension Sequence where Element == Int64 {
    /// The sum, saturating at the `Int64` bounds.
    @inlinable public func saturatingSum() -> Int64 { reduce(0) { $0.saturatingAdd($1) } }
}

/// What a plausible seat count is.
public enum SeatQuantity {
    /// Apple's documented types for seat counts are `int32` and a group holds at most 100 people
    /// (an organization has no maximum): a quantity outside `0 ... Int32.max` is not a seat count
    /// Apple documents and is reported as an anomaly (the fold still saturates rather than trap).
    public static let plausibleRange: ClosedRange<Int64> = 0...Int64(Int32.max)
}
