// The description of the Server API's documents (JSON/Surface.swift): an answer's result, a built
// request, a token and a signature. APIResultJSON.swift, APIRequest.swift, Signer.swift and
// OfferSignatures.swift write through these enums only. (The JWTs and payloads signed for Apple
// are Apple's documents, written in Apple's names.)

extension APIEndpoint: SurfaceWords {}
extension ServerEnvironment: SurfaceWords {}
extension SignatureKind: SurfaceWords {}

package enum APIResponseResultMember: SurfaceObject {
    case endpoint, environment, httpStatus, action, retryAfterMs, deprecations, errorCode, errorMessage, trusted, nextPage
    case signedItems, orderStatus, transactions, renewalInfo, appTransaction, notifications, subscriptionStatuses
    case statusDisagreements, revocation, unsigned

    package static let objectName: StaticString = "api_response_result"
    package static let meaning: StaticString = "iapv_interpret_api_response: an App Store Server API answer, verified, and what to do next"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .endpoint: MemberSpec("endpoint", .string, values: .vocabulary(APIEndpoint.self), "the endpoint the answer is for (from the options)")
        case .environment: MemberSpec("environment", .string, values: .words("Production Sandbox LocalTesting"), "the host that answered (from the options)")
        case .httpStatus: MemberSpec("http_status", .integer, "the HTTP status (from the options); 0 when Apple did not answer")
        case .action: MemberSpec("action", .string, values: .words("accept next_page retry_later retry_sandbox give_up fix_configuration reject"),
            "what to do next (docs/server-api.md); never accept or next_page unless valid")
        case .retryAfterMs: MemberSpec("retry_after_ms", .integer, nullable: true, "how long to wait before the same call; set only with retry_later (from Retry-After, at most an hour; else 1 s, 2 s, 4 s ... up to 60 s)")
        case .deprecations: MemberSpec("deprecations", .array(.string), "old spellings the call or options used, each with what to write instead")
        case .errorCode: MemberSpec("error_code", .integer, nullable: true, "Apple's errorCode from an error body")
        case .errorMessage: MemberSpec("error_message", .string, nullable: true, "Apple's errorMessage, at most 512 characters")
        case .trusted: MemberSpec("trusted", .boolean, "true only when the verdict is valid")
        case .nextPage: MemberSpec("next_page", .object(NextPageMember.self), nullable: true, "with next_page: what to put in the next call")
        case .signedItems: MemberSpec("signed_items", .integer, "how many signed items of the answer were verified (a notification's nested items count with it)")
        case .orderStatus: MemberSpec("order_status", .integer, nullable: true, "order_lookup: Apple's status (0 valid; 1 makes the verdict rejected_by_apple)")
        case .transactions: MemberSpec("transactions", .array(.object(TransactionDescription.self)), "the verified transactions, in the answer's order (for a notification history, the notifications' nested transactions)")
        case .renewalInfo: MemberSpec("renewal_info", .array(.object(RenewalInfoDescription.self)), "the verified renewal infos")
        case .appTransaction: MemberSpec("app_transaction", .json, nullable: true, "app_transaction_info: the verified app transaction payload, in Apple's field names")
        case .notifications: MemberSpec("notifications", .array(.object(APINotificationMember.self)), "notification_history and test_notification_status: each verified notification")
        case .subscriptionStatuses: MemberSpec("subscription_statuses", .array(.object(StatusCheckMember.self)),
            "subscription_statuses: per subscription, Apple's status beside the engine's state")
        case .statusDisagreements: MemberSpec("status_disagreements", .array(.object(StatusCheckMember.self)), "the subscription_statuses entries whose agrees is false")
        case .revocation: MemberSpec("revocation", .object(RevocationMember.self), nullable: true, "the first signed item's (or the refused item's) revocation facts")
        case .unsigned: MemberSpec("unsigned", .json, nullable: true,
            "the answer's top-level fields that are not signed items, as Apple wrote them (revision, hasMore, ...): data to continue with, not evidence; null when the body was refused as a whole")
        }
    }
}

package enum NextPageMember: SurfaceObject {
    case revision, paginationToken

    package static let objectName: StaticString = "next_page"
    package static let meaning: StaticString = "what to put in the next call of a paged answer: one of the two"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .revision: MemberSpec("revision", .string, presence: .whenPresent, "histories: the next call's revision")
        case .paginationToken: MemberSpec("pagination_token", .string, presence: .whenPresent, "notification history: the next call's pagination_token")
        }
    }
}

package enum APINotificationMember: SurfaceObject {
    case notificationType, subtype, effect, notificationUUID, signedDateMs

    package static let objectName: StaticString = "api_notification"
    package static let meaning: StaticString = "a verified notification of a notification history"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .notificationType: MemberSpec("notification_type", .string, "Apple's notificationType")
        case .subtype: MemberSpec("subtype", .string, nullable: true, "Apple's subtype")
        case .effect: MemberSpec("effect", .string, values: .vocabulary(NotificationEffect.self), "what it does to the subscriber's state")
        case .notificationUUID: MemberSpec("notification_uuid", .string, nullable: true, "Apple's notificationUUID")
        case .signedDateMs: MemberSpec("signed_date_ms", .ms, nullable: true, "when Apple signed it")
        }
    }
}

package enum StatusCheckMember: SurfaceObject {
    case subscriptionGroupIdentifier, originalTransactionID, appleStatus, appleState, engineState, agrees

    package static let objectName: StaticString = "status_check"
    package static let meaning: StaticString = "one subscription's status as Apple states it, beside the engine's state"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .subscriptionGroupIdentifier: MemberSpec("subscription_group_identifier", .string, "the subscription group")
        case .originalTransactionID: MemberSpec("original_transaction_id", .string, "the subscription")
        case .appleStatus: MemberSpec("apple_status", .integer, "Apple's status: 1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked")
        case .appleState: MemberSpec("apple_state", .string, nullable: true, values: .words("active expired billing_retry grace_period revoked"), "Apple's status, named")
        case .engineState: MemberSpec("engine_state", .string, nullable: true, values: .vocabulary(EntitlementState.self), "the engine's state of the same subscription")
        case .agrees: MemberSpec("agrees", .boolean, "whether the two agree")
        }
    }
}

package enum APIRequestResultMember: SurfaceObject {
    case endpoint, environment, method, url, headers, body, bodyBase64, tokenExpiresAtMs, deprecations

    package static let objectName: StaticString = "api_request_result"
    package static let meaning: StaticString = "iapv_api_request: the HTTP request to send, built and signed; the host sends it"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .endpoint: MemberSpec("endpoint", .string, values: .vocabulary(APIEndpoint.self), "the endpoint called")
        case .environment: MemberSpec("environment", .string, values: .vocabulary(ServerEnvironment.self), "the host it goes to")
        case .method: MemberSpec("method", .string, values: .words("GET POST PUT DELETE"), "the HTTP method")
        case .url: MemberSpec("url", .string, "the full URL, path and query encoded")
        case .headers: MemberSpec("headers", .map(.string), "every header to send, the bearer token among them")
        case .body: MemberSpec("body", .string, nullable: true, "the JSON body, exactly as it must be sent; null when the endpoint has none")
        case .bodyBase64: MemberSpec("body_base64", .string, nullable: true, "a binary body (an image), base64; null otherwise")
        case .tokenExpiresAtMs: MemberSpec("token_expires_at_ms", .ms, "when the request's token expires: send before then")
        case .deprecations: MemberSpec("deprecations", .array(.string), "old spellings the call used, each with what to write instead")
        }
    }
}

package enum APITokenMember: SurfaceObject {
    case token, issuedAtMs, expiresAtMs

    package static let objectName: StaticString = "api_token_result"
    package static let meaning: StaticString = "iapv_api_token: a signed bearer token for the App Store Server API"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .token: MemberSpec("token", .string, "the JWT, to send as Authorization: Bearer")
        case .issuedAtMs: MemberSpec("issued_at_ms", .ms, "when it was issued")
        case .expiresAtMs: MemberSpec("expires_at_ms", .ms, "when it expires")
        }
    }
}

package enum SignatureResultMember: SurfaceObject {
    case kind, keyID, nonce, timestampMs, signature, jws, body

    package static let objectName: StaticString = "sign_result"
    package static let meaning: StaticString = "iapv_sign: an offer signature, a signed request or a realtime response"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .kind: MemberSpec("kind", .string, values: .vocabulary(SignatureKind.self), "what was signed")
        case .keyID: MemberSpec("key_id", .string, "the signing key's id")
        case .nonce: MemberSpec("nonce", .string, "the nonce signed")
        case .timestampMs: MemberSpec("timestamp_ms", .ms, "the timestamp signed")
        case .signature: MemberSpec("signature", .string, nullable: true, "promotional offer V1: base64 of the DER ECDSA signature")
        case .jws: MemberSpec("jws", .string, nullable: true, "the compact JWS, for the kinds signed as one")
        case .body: MemberSpec("body", .string, nullable: true, "realtime_response: the JSON body to answer Apple with")
        }
    }
}
