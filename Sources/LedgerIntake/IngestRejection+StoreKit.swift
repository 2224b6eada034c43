import LedgerEvents
import Reports

/// The refusals of a StoreKit input (`{"storeKit": …}`, or a bare JWS of a StoreKit transaction
/// or `AppTransaction`): each goes to quarantine with the input's raw bytes, as every refusal does.
extension IngestRejection {
    /// `storekit_not_accepted_here`: a StoreKit input that arrived by a path that applies only
    /// Apple's notifications (the webhook, a spool, a queue, or any origin
    /// ``EventOrigin/acceptsStoreKitInput`` does not name). `what` says which input it is.
    static func storeKitNotAcceptedHere(origin: EventOrigin, source: String, what: String) -> Self {
        let path = arrivalPath(origin, retryFlag: "--storekit")
        return Self(code: .storeKitNotAcceptedHere,
                    reason: "StoreKit input not accepted here: \(source) is \(what) that arrived through \(path), which applies only "
                        + "Apple's notifications (the app, not Apple, sends StoreKit values, with the user id it vouches for); "
                        + "POST it to /v1/storekit with a token of scope link, or import it with `seatledger ingest FILE`")
    }

    /// `invalid_storekit`: a `storeKit` member that is not an object holding exactly one of
    /// `signedTransaction` and `signedAppTransaction`.
    static func invalidStoreKit(_ detail: String) -> Self {
        Self(code: .invalidStoreKit,
             reason: "invalid storeKit input: \(detail); it is {\"storeKit\": {\"userId\": \"…\" (optional), "
                + "\"signedTransaction\": \"<JWS>\" or \"signedAppTransaction\": \"<JWS>\"}}, so nothing of it was applied")
    }

    /// `unexpected_members`: members of the `storeKit` object other than the three it may hold.
    static func unexpectedStoreKitMembers(_ names: some Collection<String>) -> Self {
        let sorted = names.sorted()
        let shown = sorted.prefix(8).map { "\"\(DisplayText.visible(String($0.prefix(40))))\"" }.joined(separator: ", ")
        let more = sorted.count > 8 ? " and \(sorted.count - 8) more" : ""
        return Self(code: .unexpectedMembers,
                    reason: "unexpected members: storeKit holds \(shown)\(more); it may hold only \"userId\" and one of "
                        + "\"signedTransaction\" and \"signedAppTransaction\", so nothing of it was applied")
    }

    /// `invalid_user_id`: a `storeKit.userId` that is not a non-empty string of at most
    /// ``MessageDecoder/maxUserIdScalars`` Unicode scalars.
    static func invalidUserId(_ detail: String) -> Self {
        Self(code: .invalidUserId,
             reason: "invalid user id: storeKit.userId \(detail); when present it is a non-empty string of at most "
                + "\(MessageDecoder.maxUserIdScalars) characters (Unicode scalars), the app's own id of the person")
    }

    /// `kind_mismatch`: the JWS at `path` is evidently not the form its member names (a
    /// notification or an `AppTransaction` in `signedTransaction`, a transaction in `signedAppTransaction`).
    static func storeKitKindMismatch(at path: String, expected: StoreKitForm, found: String) -> Self {
        let hint = found == "a signed notification"
            ? "post notifications to POST /notifications"
            : "send it as \"\(expected == .transaction ? StoreKitForm.appTransaction.member : StoreKitForm.transaction.member)\""
        return Self(code: .kindMismatch,
                    reason: "\(path) should hold \(expected.article) but its payload is \(found); \(hint)")
    }

    /// `missing_transaction_id`: a StoreKit transaction with neither `transactionId` nor
    /// `originalTransactionId`, which would link no Apple identity.
    static func missingTransactionId(at path: String) -> Self {
        Self(code: .missingTransactionId,
             reason: "\(path): the StoreKit transaction has neither transactionId nor originalTransactionId, so it names no purchase "
                + "to record or link")
    }

    /// `missing_app_transaction_id`: an `AppTransaction` without `appTransactionId` (older ones
    /// lack it), which would link no Apple identity.
    static func missingAppTransactionId(at path: String) -> Self {
        Self(code: .missingAppTransactionId,
             reason: "\(path): the AppTransaction has no appTransactionId, so it names no App Store customer to link")
    }
}
