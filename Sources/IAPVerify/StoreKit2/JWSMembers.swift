// The description of a JWS result (JSON/Surface.swift): the token's facts, its records, the
// notification and the realtime request. JWSResultJSON.swift writes through these enums only.

extension JWSKind: SurfaceWords {}
extension NotificationEffect: SurfaceWords {}
extension NotificationAction: SurfaceWords { package static var surfaceWords: [String] { every.map(\.rawValue) } }
extension RealtimeAction: SurfaceWords { package static var surfaceWords: [String] { every.map(\.rawValue) } }

package enum JWSResultMember: SurfaceObject {
    case trusted, kind, environment, bundleID, signedDateMs, validatedAtMs, chain, revocation, transaction
    case appAccountToken, productType, renewalInfo, notification, realtimeRequest, payload

    package static let objectName: StaticString = "jws_result"
    package static let meaning: StaticString = "iapv_verify_jws: a StoreKit 2 signed transaction, renewal info, app transaction, notification or realtime request"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .trusted: MemberSpec("trusted", .boolean, "true only when the verdict is valid")
        case .kind: MemberSpec("kind", .string, nullable: true, values: .vocabulary(JWSKind.self),
            "the payload's kind; unknown: signed by Apple but of no modelled shape (valid only when its bundleId or appAppleId matched); null when not even that was read")
        case .environment: MemberSpec("environment", .string, nullable: true, values: .vocabulary(PurchaseEnvironment.self), "the environment the payload names")
        case .bundleID: MemberSpec("bundle_id", .string, nullable: true, "the bundle id the payload names")
        case .signedDateMs: MemberSpec("signed_date_ms", .ms, nullable: true, "the payload's signedDate")
        case .validatedAtMs: MemberSpec("validated_at_ms", .ms, nullable: true,
            "the instant the chain was validated at: signedDate, else receiptCreationDate, else now_ms")
        case .chain: MemberSpec("chain", .array(.object(CertificateMember.self)), "the verified x5c chain, leaf first; empty unless it verified")
        case .revocation: MemberSpec("revocation", .object(RevocationMember.self), nullable: true, "the leaf's revocation facts: the OCSP request to send and what the answers passed said; null until the chain verified, kept when the token is refused later")
        case .transaction: MemberSpec("transaction", .object(TransactionDescription.self), nullable: true, "kind transaction: the normalised transaction")
        case .appAccountToken: MemberSpec("app_account_token", .string, nullable: true, "kind transaction: the UUID the app set at purchase (compare as lower-case UUIDs)")
        case .productType: MemberSpec("product_type", .string, nullable: true, "kind transaction: Apple's product type, as signed")
        case .renewalInfo: MemberSpec("renewal_info", .object(RenewalInfoDescription.self), nullable: true, "kind renewal_info: the normalised renewal info")
        case .notification: MemberSpec("notification", .object(NotificationMember.self), nullable: true, "kind notification: what it says and what to do")
        case .realtimeRequest: MemberSpec("realtime_request", .object(RealtimeRequestMember.self), nullable: true,
            "kind realtime_request: a Retention Messaging request and whether to answer it")
        case .payload: MemberSpec("payload", .json, nullable: true, "the decoded payload exactly as signed (Apple's field names)")
        }
    }
}

package enum NotificationMember: SurfaceObject {
    case notificationType, subtype, notificationUUID, signedDateMs, effect, action, transaction, renewalInfo, appTransaction
    case externalPurchaseToken

    package static let objectName: StaticString = "notification"
    package static let meaning: StaticString = "an App Store Server Notification (V2), its nested records verified like the outer token"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .notificationType: MemberSpec("notification_type", .string, "Apple's notificationType")
        case .subtype: MemberSpec("subtype", .string, nullable: true, "Apple's subtype")
        case .notificationUUID: MemberSpec("notification_uuid", .string, nullable: true, "Apple's notificationUUID: apply each once")
        case .signedDateMs: MemberSpec("signed_date_ms", .ms, nullable: true, "when Apple signed it")
        case .effect: MemberSpec("effect", .string, values: .vocabulary(NotificationEffect.self),
            "what the notification does to the subscriber's state (docs/storekit2.md); unknown changes nothing")
        case .action: MemberSpec("action", .string, values: .vocabulary(NotificationAction.self), "what the host does with it; reject unless valid")
        case .transaction: MemberSpec("transaction", .object(TransactionDescription.self), nullable: true, "data.signedTransactionInfo, verified and normalised")
        case .renewalInfo: MemberSpec("renewal_info", .object(RenewalInfoDescription.self), nullable: true, "data.signedRenewalInfo, verified and normalised")
        case .appTransaction: MemberSpec("app_transaction", .json, nullable: true,
            "a consent change's appData.signedAppTransactionInfo, verified: the payload in Apple's field names")
        case .externalPurchaseToken: MemberSpec("external_purchase_token", .object(ExternalPurchaseTokenMember.self), presence: .whenPresent,
            "EXTERNAL_PURCHASE_TOKEN notifications (subtypes UNREPORTED, ACTIVE_TOKEN_REMINDER, CREATED): the token")
        }
    }
}

package enum ExternalPurchaseTokenMember: SurfaceObject {
    case externalPurchaseID, tokenCreationDateMs, appAppleID, bundleID, tokenType, tokenExpirationDateMs

    package static let objectName: StaticString = "external_purchase_token"
    package static let meaning: StaticString = "an external purchase token (Apple's externalPurchaseToken)"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .externalPurchaseID: MemberSpec("external_purchase_id", .string, nullable: true, "the token's id; one that starts with SANDBOX is a sandbox token")
        case .tokenCreationDateMs: MemberSpec("token_creation_date_ms", .ms, nullable: true, "when the token was made")
        case .appAppleID: MemberSpec("app_apple_id", .integer, nullable: true, "the app's Apple id")
        case .bundleID: MemberSpec("bundle_id", .string, nullable: true, "the app's bundle id")
        case .tokenType: MemberSpec("token_type", .string, nullable: true, values: .open("ACQUISITION SERVICES"),
            "the kind of token; a value Apple has not documented is kept as given")
        case .tokenExpirationDateMs: MemberSpec("token_expiration_date_ms", .ms, nullable: true, "when the token expires")
        }
    }
}

package enum RealtimeRequestMember: SurfaceObject {
    case originalTransactionID, productID, userLocale, requestIdentifier, appAppleID, signedDateMs, action

    package static let objectName: StaticString = "realtime_request"
    package static let meaning: StaticString = "a Retention Messaging realtime request: Apple asks what to show a subscriber about to cancel"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .originalTransactionID: MemberSpec("original_transaction_id", .string, "the subscription")
        case .productID: MemberSpec("product_id", .string, "the product")
        case .userLocale: MemberSpec("user_locale", .string, "the subscriber's locale")
        case .requestIdentifier: MemberSpec("request_identifier", .string, "Apple's id of the request: answer each once")
        case .appAppleID: MemberSpec("app_apple_id", .integer, nullable: true, "the app's Apple id")
        case .signedDateMs: MemberSpec("signed_date_ms", .ms, "when Apple signed it")
        case .action: MemberSpec("action", .string, values: .vocabulary(RealtimeAction.self), "respond, or why not; reject unless valid")
        }
    }
}
