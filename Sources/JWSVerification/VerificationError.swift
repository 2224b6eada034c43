/// Why a signed payload was rejected, as a stable machine-readable code.
///
/// The raw value (for example `"bad_signature"`) is what gets stored and reported; ``description``
/// is the human wording.
public struct VerificationFailure: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The stable code, e.g. `"chain_not_trusted"`.
    public let rawValue: String

    /// Wraps a code; unknown codes are kept as given.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The text is not a compact JWS (three non-empty base64url parts separated by dots).
    public static let notJWS = VerificationFailure(rawValue: "not_jws")
    /// The protected header is not a JSON object or uses an unsupported header parameter.
    public static let malformedHeader = VerificationFailure(rawValue: "malformed_header")
    /// The payload is not a JSON object (or its `signedDate` is not an integer).
    public static let malformedPayload = VerificationFailure(rawValue: "malformed_json")
    /// The header's `alg` is missing or is not `ES256`.
    public static let algNotES256 = VerificationFailure(rawValue: "alg_not_es256")
    /// The header has no `x5c` certificate chain (absent, or not an array).
    public static let missingX5C = VerificationFailure(rawValue: "missing_x5c")
    /// The `x5c` array does not hold exactly three certificates (leaf, intermediate, root), as
    /// Apple's libraries require (their `INVALID_CHAIN_LENGTH`).
    public static let invalidChainLength = VerificationFailure(rawValue: "invalid_chain_length")
    /// A certificate in `x5c` cannot be decoded, or the leaf key is not P-256.
    public static let badCertificate = VerificationFailure(rawValue: "bad_certificate")
    /// The chain does not lead to a configured trust anchor.
    public static let chainNotTrusted = VerificationFailure(rawValue: "chain_not_trusted")
    /// A certificate of the chain is not valid at the payload's `signedDate` (expired or not yet valid).
    public static let certificateExpired = VerificationFailure(rawValue: "certificate_expired")
    /// The payload's `signedDate` is outside the years 0000–9999 a certificate's validity can be
    /// checked against (an X.509 `GeneralizedTime`), so no chain can be valid at it.
    public static let signedDateOutOfRange = VerificationFailure(rawValue: "signed_date_out_of_range")
    /// The payload has no date to validate its chain at and the caller allowed no fallback
    /// (a StoreKit input: a transaction without `signedDate`, an `AppTransaction` without
    /// `receiptCreationDate`). The same code as a notification without `signedDate`.
    public static let missingSignedDate = VerificationFailure(rawValue: "missing_signed_date")
    /// The leaf or intermediate lacks Apple's marker extension OID.
    public static let missingAppleOID = VerificationFailure(rawValue: "missing_apple_oid")
    /// The ES256 signature does not verify with the leaf key (or is not 64 bytes).
    public static let badSignature = VerificationFailure(rawValue: "bad_signature")

    /// Human wording, e.g. "bad signature".
    public var description: String {
        switch self {
        case .notJWS: return "not a JWS"
        case .malformedHeader: return "malformed header"
        case .malformedPayload: return "malformed JSON"
        case .algNotES256: return "alg not ES256"
        case .missingX5C: return "missing x5c certificate chain"
        case .invalidChainLength: return "invalid x5c chain length"
        case .badCertificate: return "bad certificate"
        case .chainNotTrusted: return "chain not trusted"
        case .certificateExpired: return "certificate expired at signedDate"
        case .signedDateOutOfRange: return "signedDate out of range"
        case .missingSignedDate: return "missing signed date"
        case .missingAppleOID: return "missing Apple OID"
        case .badSignature: return "bad signature"
        default: return rawValue.replacingOccurrences(of: "_", with: " ")
        }
    }
}

/// A rejected signed payload: the failure code plus a detail naming what exactly was wrong.
///
/// ```swift
/// do { _ = try verifier.verify(jws) }
/// catch { print(error) }   // "chain not trusted: unable to get local issuer certificate (x5c leaf CN=…)"
/// ```
public struct VerificationError: Error, Sendable, CustomStringConvertible {
    /// The machine-readable reason.
    public let failure: VerificationFailure
    /// Specifics for logs and operators (never needed to decide what to do).
    public let detail: String

    /// Creates an error with a failure code and detail.
    public init(_ failure: VerificationFailure, _ detail: String = "") {
        self.failure = failure
        self.detail = detail
    }

    /// "<reason>: <detail>", or just the reason when there is no detail.
    public var description: String {
        detail.isEmpty ? failure.description : "\(failure.description): \(detail)"
    }
}
