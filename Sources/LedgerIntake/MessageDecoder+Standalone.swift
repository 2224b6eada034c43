import LedgerEvents
import AppStoreModels
import Foundation
import JWSVerification

/// Which kind of signed payload a standalone JWS is.
public enum SignedPayloadKind: String, Sendable, CaseIterable {
    /// A notification's `signedPayload`.
    case notification
    /// A `signedTransactionInfo` (`JWSTransactionDecodedPayload`).
    case transaction
    /// A `signedRenewalInfo` (`JWSRenewalInfoDecodedPayload`).
    case renewal

    /// The kind a verified payload evidently is, from the fields only that kind carries
    /// (`notificationType`/`notificationUUID`; `transactionId`; `autoRenewStatus`/
    /// `autoRenewProductId`), or `nil` when the payload names none of them.
    public static func evidentKind(of payload: JSONValue) -> SignedPayloadKind? {
        if payload["notificationType"] != nil || payload["notificationUUID"] != nil { return .notification }
        if payload["transactionId"] != nil { return .transaction }
        if payload["autoRenewStatus"] != nil || payload["autoRenewProductId"] != nil { return .renewal }
        return nil
    }

    /// How the kind is named in messages: "a signed notification", "a signed transaction" …
    var article: String {
        switch self {
        case .notification: return "a signed notification"
        case .transaction: return "a signed transaction"
        case .renewal: return "signed renewal info"
        }
    }
}

extension IngestRejection {
    /// `kind_mismatch`: a standalone JWS checked as one kind is evidently another.
    public static func kindMismatch(expected: SignedPayloadKind, found: SignedPayloadKind) -> IngestRejection {
        IngestRejection(code: .kindMismatch,
                        reason: "expected \(expected.article) (--kind \(expected.rawValue)) but the payload is \(found.article); "
                            + "use --kind \(found.rawValue)")
    }
}

extension MessageDecoder {
    /// Verifies one standalone JWS of the given kind with every check ingest applies
    /// (chain, OIDs, signature, then bundle id / environment / app Apple id), without a ledger write.
    ///
    /// Returns the decoded payload, or the rejection ingest would quarantine it with.
    public func check(jws: String, kind: SignedPayloadKind) -> Result<JSONValue, IngestRejection> {
        let text = jws.trimmingCharacters(in: .whitespacesAndNewlines)
        switch kind {
        case .notification:
            do {
                let event = try decodeNotification(jws: text, raw: Data(text.utf8), source: "check", origin: .live)
                return .success(event.decoded)
            } catch {
                return .failure(error)
            }
        case .transaction, .renewal:
            let verified: VerifiedJWS
            do {
                verified = try verifier.verify(text, fallbackDate: Date())
            } catch {
                return .failure(IngestRejection(code: RejectionCode(error.failure), reason: error.description))
            }
            let payload = verified.payload
            if let other = SignedPayloadKind.evidentKind(of: payload), other != kind {
                return .failure(.kindMismatch(expected: kind, found: other))
            }
            if kind == .transaction, let bundle = payload["bundleId"]?.stringValue, bundle != configuration.bundleId {
                return .failure(.bundleMismatch(found: bundle, expected: configuration.bundleId, at: "transaction"))
            }
            if let env = payload["environment"]?.stringValue, env != configuration.environment.rawValue {
                return .failure(.environmentMismatch(found: env, expected: configuration.environment.rawValue, at: kind.rawValue))
            }
            return .success(payload)
        }
    }
}
