// The description of a /verifyReceipt answer's result (JSON/Surface.swift).
// ResponseResultJSON.swift writes through these enums only.

extension NextAction: SurfaceWords {}
extension ResponseStyle: SurfaceWords {}

package enum ResponseResultMember: SurfaceObject {
    case status, action, retryAfterMs, deprecations, environment, receipt

    package static let objectName: StaticString = "response_result"
    package static let meaning: StaticString = "iapv_interpret_response: a /verifyReceipt answer, what it grants and what to do next"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .status: MemberSpec("status", .integer, nullable: true, "Apple's status; null when the body has none")
        case .action: MemberSpec("action", .string, values: .words("accept retry_sandbox retry_production retry_later give_up fix_configuration reject"),
            "what to do next (docs/verifyreceipt.md)")
        case .retryAfterMs: MemberSpec("retry_after_ms", .integer, nullable: true, "how long to wait; set only with retry_later (1 s, 2 s, 4 s, 8 s ... up to 60 s)")
        case .deprecations: MemberSpec("deprecations", .array(.string), "old spellings the options used (endpoint for the host, lower-case production), each a sentence saying what to write instead; they stop working in the next release")
        case .environment: MemberSpec("environment", .string, nullable: true, values: .vocabulary(PurchaseEnvironment.self),
            "the receipt's: the body's environment, else its receipt_type, else the host that answered")
        case .receipt: MemberSpec("receipt", .object(ResponseReceiptMember.self), nullable: true,
            "the body's receipt, normalised; null unless the status was 0 or 21006 with a readable receipt")
        }
    }
}

package enum ResponseReceiptMember: SurfaceObject {
    case trusted, style, environment, receiptType, bundleID, appVersion, originalAppVersion, creationDateMs, requestDateMs
    case expirationDateMs, originalPurchaseDateMs, appItemID, downloadID, versionExternalIdentifier, latestReceiptPresent
    case inApp, pendingRenewalInfo

    package static let objectName: StaticString = "response_receipt"
    package static let meaning: StaticString = "a /verifyReceipt body's receipt, normalised"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .trusted: MemberSpec("trusted", .boolean, "true only when the verdict is valid")
        case .style: MemberSpec("style", .string, nullable: true, values: .vocabulary(ResponseStyle.self), "iOS 7 (app receipt) or iOS 6 (transaction receipt) answer")
        case .environment: MemberSpec("environment", .string, nullable: true, values: .vocabulary(PurchaseEnvironment.self), "as the result's environment")
        case .receiptType: MemberSpec("receipt_type", .string, nullable: true, "as Apple wrote it")
        case .bundleID: MemberSpec("bundle_id", .string, nullable: true, "the app's bundle id")
        case .appVersion: MemberSpec("app_version", .string, nullable: true, "the app version the receipt was made for")
        case .originalAppVersion: MemberSpec("original_app_version", .string, nullable: true, "the version first installed")
        case .creationDateMs: MemberSpec("creation_date_ms", .ms, nullable: true, "when Apple made the receipt")
        case .requestDateMs: MemberSpec("request_date_ms", .ms, nullable: true, "when Apple answered")
        case .expirationDateMs: MemberSpec("expiration_date_ms", .ms, nullable: true, "Volume Purchase receipts only")
        case .originalPurchaseDateMs: MemberSpec("original_purchase_date_ms", .ms, nullable: true, "when the app was first bought")
        case .appItemID: MemberSpec("app_item_id", .string, nullable: true, "the App Store id of the app")
        case .downloadID: MemberSpec("download_id", .string, nullable: true, "Apple's download id")
        case .versionExternalIdentifier: MemberSpec("version_external_identifier", .string, nullable: true, "Apple's version id")
        case .latestReceiptPresent: MemberSpec("latest_receipt_present", .boolean, nullable: true, "the body carried latest_receipt")
        case .inApp: MemberSpec("in_app", .array(.object(TransactionDescription.self)),
            "every distinct transaction of in_app and latest_receipt_info, normalised")
        case .pendingRenewalInfo: MemberSpec("pending_renewal_info", .array(.object(RenewalInfoDescription.self)),
            "the body's pending_renewal_info, then the host's renewal_info, normalised")
        }
    }
}
