import AppStoreModels

/// Why an input was refused and quarantined: the stable machine code of a rejection (`quarantine
/// list`, the `--json` outputs, the webhook's answer, the `/v1` error bodies, `/metrics`).
///
/// An open enum like ``EventOrigin``: the codes this build can give are static members and
/// ``catalogue`` is their one list (the `quarantine` help and `Events/README.md`'s table are
/// checked against it); a code stored by another build is kept verbatim.
public struct RejectionCode: OpenStringEnum, ExpressibleByStringLiteral {
    /// The code as stored in the quarantine's `error_code` column.
    public let rawValue: String
    /// Wraps any value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// A code written as a literal (tests, comparisons): the same as ``init(rawValue:)``.
    public init(stringLiteral value: String) { self.rawValue = value }

    /// `empty_message`: blank line or empty file.
    public static let emptyMessage = Self(rawValue: "empty_message")
    /// `malformed_json`: starts with `{` but is not JSON.
    public static let malformedJSON = Self(rawValue: "malformed_json")
    /// `unrecognized_message`: a JSON object with none of signedPayload, apiResponse and storeKit, or a JSON array.
    public static let unrecognizedMessage = Self(rawValue: "unrecognized_message")
    /// `unexpected_members`: one of the accepted forms with other members beside it.
    public static let unexpectedMembers = Self(rawValue: "unexpected_members")
    /// `not_jws`: not a compact JWS (three unpadded base64url parts), or signedPayload not a string.
    public static let notJWS = Self(rawValue: "not_jws")
    /// `malformed_header`: the JWS header is not a JSON object, or has an unsupported parameter.
    public static let malformedHeader = Self(rawValue: "malformed_header")
    /// `alg_not_es256`: the JWS header's alg is not ES256.
    public static let algNotES256 = Self(rawValue: "alg_not_es256")
    /// `missing_x5c`: the JWS header has no x5c certificate chain.
    public static let missingX5C = Self(rawValue: "missing_x5c")
    /// `invalid_chain_length`: x5c does not hold exactly three certificates.
    public static let invalidChainLength = Self(rawValue: "invalid_chain_length")
    /// `bad_certificate`: a certificate cannot be decoded, or the leaf key is not P-256.
    public static let badCertificate = Self(rawValue: "bad_certificate")
    /// `chain_not_trusted`: the chain does not lead to a configured root.
    public static let chainNotTrusted = Self(rawValue: "chain_not_trusted")
    /// `certificate_expired`: a certificate is not valid at the payload's signed date.
    public static let certificateExpired = Self(rawValue: "certificate_expired")
    /// `signed_date_out_of_range`: the signed date is outside the years 0000 to 9999.
    public static let signedDateOutOfRange = Self(rawValue: "signed_date_out_of_range")
    /// `missing_apple_oid`: the leaf or intermediate lacks Apple's OID.
    public static let missingAppleOID = Self(rawValue: "missing_apple_oid")
    /// `bad_signature`: the ES256 signature does not verify.
    public static let badSignature = Self(rawValue: "bad_signature")
    /// `bundle_mismatch`: the payload names another bundle id.
    public static let bundleMismatch = Self(rawValue: "bundle_mismatch")
    /// `environment_mismatch`: the payload names another environment.
    public static let environmentMismatch = Self(rawValue: "environment_mismatch")
    /// `app_apple_id_mismatch`: a Production payload names another app Apple id.
    public static let appAppleIdMismatch = Self(rawValue: "app_apple_id_mismatch")
    /// `missing_notification_uuid`: a notification without notificationUUID.
    public static let missingNotificationUUID = Self(rawValue: "missing_notification_uuid")
    /// `missing_signed_date`: no signedDate (receiptCreationDate for an AppTransaction).
    public static let missingSignedDate = Self(rawValue: "missing_signed_date")
    /// `invalid_envelope`: an apiResponse envelope missing or mistyping a required field.
    public static let invalidEnvelope = Self(rawValue: "invalid_envelope")
    /// `line_too_long`: an NDJSON line over the size limit, kept as its first 64 KiB.
    public static let lineTooLong = Self(rawValue: "line_too_long")
    /// `message_too_large`: a spool file or queue entry over the size limit, kept as its first 64 KiB.
    public static let messageTooLarge = Self(rawValue: "message_too_large")
    /// `untrusted_api_response`: an apiResponse envelope from a path that applies only Apple's notifications.
    public static let untrustedAPIResponse = Self(rawValue: "untrusted_api_response")
    /// `storekit_not_accepted_here`: a StoreKit input from a path that applies only Apple's notifications.
    public static let storeKitNotAcceptedHere = Self(rawValue: "storekit_not_accepted_here")
    /// `no_ledger_for_notification`: a notification that fits no ledger of a `serve` deployment.
    public static let noLedgerForNotification = Self(rawValue: "no_ledger_for_notification")
    /// `not_storekit_input`: a body posted to POST /v1/storekit that is no storeKit input.
    public static let notStoreKitInput = Self(rawValue: "not_storekit_input")
    /// `invalid_storekit`: storeKit is not an object with exactly one of signedTransaction and signedAppTransaction.
    public static let invalidStoreKit = Self(rawValue: "invalid_storekit")
    /// `invalid_user_id`: storeKit.userId is not a non-empty string of at most 256 characters.
    public static let invalidUserId = Self(rawValue: "invalid_user_id")
    /// `kind_mismatch`: a JWS of another kind than the member or --kind names.
    public static let kindMismatch = Self(rawValue: "kind_mismatch")
    /// `missing_transaction_id`: a StoreKit transaction naming no transaction id.
    public static let missingTransactionId = Self(rawValue: "missing_transaction_id")
    /// `missing_app_transaction_id`: an AppTransaction without appTransactionId.
    public static let missingAppTransactionId = Self(rawValue: "missing_app_transaction_id")
    /// `api_response_on_webhook`: an apiResponse envelope posted to the webhook.
    public static let apiResponseOnWebhook = Self(rawValue: "api_response_on_webhook")
    /// `not_an_api_response`: a body posted to POST /v1/api-responses that is no apiResponse envelope.
    public static let notAnAPIResponse = Self(rawValue: "not_an_api_response")
    /// `store_refused`: the store refused what this one message asked it to store.
    public static let storeRefused = Self(rawValue: "store_refused")
    /// `nul_in_text`: an identifier or event field holds a NUL character.
    public static let nulInText = Self(rawValue: "nul_in_text")
    /// `identifier_too_long`: an identifier or event field over 1,024 UTF-8 bytes.
    public static let identifierTooLong = Self(rawValue: "identifier_too_long")
    /// `missing_body_field`: a Redis stream entry without the message field.
    public static let missingBodyField = Self(rawValue: "missing_body_field")

    /// Every code this build gives, with its meaning in one line, in the order the docs list them.
    public static let catalogue: [(code: RejectionCode, meaning: String)] = [
        (.emptyMessage, "blank line or empty file"),
        (.malformedJSON, "starts with `{` but is not JSON"),
        (.unrecognizedMessage, "a JSON object with none of signedPayload, apiResponse and storeKit, or a JSON array"),
        (.unexpectedMembers, "one of the accepted forms with other members beside it"),
        (.notJWS, "not a compact JWS (three unpadded base64url parts), or signedPayload not a string"),
        (.malformedHeader, "the JWS header is not a JSON object, or has an unsupported parameter"),
        (.algNotES256, "the JWS header's alg is not ES256"),
        (.missingX5C, "the JWS header has no x5c certificate chain"),
        (.invalidChainLength, "x5c does not hold exactly three certificates"),
        (.badCertificate, "a certificate cannot be decoded, or the leaf key is not P-256"),
        (.chainNotTrusted, "the chain does not lead to a configured root"),
        (.certificateExpired, "a certificate is not valid at the payload's signed date"),
        (.signedDateOutOfRange, "the signed date is outside the years 0000 to 9999"),
        (.missingAppleOID, "the leaf or intermediate lacks Apple's OID"),
        (.badSignature, "the ES256 signature does not verify"),
        (.bundleMismatch, "the payload names another bundle id"),
        (.environmentMismatch, "the payload names another environment"),
        (.appAppleIdMismatch, "a Production payload names another app Apple id"),
        (.missingNotificationUUID, "a notification without notificationUUID"),
        (.missingSignedDate, "no signedDate (receiptCreationDate for an AppTransaction)"),
        (.invalidEnvelope, "an apiResponse envelope missing or mistyping a required field"),
        (.lineTooLong, "an NDJSON line over the size limit, kept as its first 64 KiB"),
        (.messageTooLarge, "a spool file or queue entry over the size limit, kept as its first 64 KiB"),
        (.untrustedAPIResponse, "an apiResponse envelope from a path that applies only Apple's notifications"),
        (.storeKitNotAcceptedHere, "a StoreKit input from a path that applies only Apple's notifications"),
        (.noLedgerForNotification, "a notification posted to a `serve` of several ledgers whose app and environment no ledger records, or to `/notifications/{ledger}` with an unknown name"),
        (.notStoreKitInput, "a body posted to POST /v1/storekit that is no storeKit input"),
        (.invalidStoreKit, "storeKit is not an object with exactly one of signedTransaction and signedAppTransaction"),
        (.invalidUserId, "storeKit.userId is not a non-empty string of at most 256 characters"),
        (.kindMismatch, "a JWS of another kind than the member or --kind names"),
        (.missingTransactionId, "a StoreKit transaction naming no transaction id"),
        (.missingAppTransactionId, "an AppTransaction without appTransactionId"),
        (.apiResponseOnWebhook, "an apiResponse envelope posted to the webhook"),
        (.notAnAPIResponse, "a body posted to POST /v1/api-responses that is no apiResponse envelope"),
        (.storeRefused, "the store refused what this one message asked it to store"),
        (.nulInText, "an identifier or event field holds a NUL character"),
        (.identifierTooLong, "an identifier or event field over 1,024 UTF-8 bytes"),
        (.missingBodyField, "a Redis stream entry without the message field"),
    ]

    /// The codes of ``catalogue``.
    public static let knownValues: Set<String> = Set(catalogue.map(\.code.rawValue))

    /// The codes of rejections that keep only the first 64 KiB of a longer input (too large to
    /// hold, or refused by the store) rather than the input itself: never released by a retry.
    public static let keptPrefix: Set<RejectionCode> = [.lineTooLong, .messageTooLarge, .storeRefused]
}
