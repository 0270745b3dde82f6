// The description (JSON/Surface.swift) of the Server API's input documents: the signer config
// (iapv_signer_new), a call (iapv_api_request) and a signature request (iapv_sign). Their readers
// take keys through these enums, so a key the description lacks is refused with the nearest one.

package enum SignerConfigMember: SurfaceObject {
    case privateKeyPEM, keyID, issuerID, bundleID, testBaseURL, localTestingBaseURL

    package static let objectName: StaticString = "signer_config"
    package static let meaning: StaticString = "iapv_signer_new: the developer's App Store Connect key and the app it signs for (docs/server-api.md)"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .privateKeyPEM: MemberSpec("private_key_pem", .string, "the .p8 key's PEM text (required)")
        case .keyID: MemberSpec("key_id", .string, "the key's id in App Store Connect (required)")
        case .issuerID: MemberSpec("issuer_id", .string, "the issuer id of the team's keys (required)")
        case .bundleID: MemberSpec("bundle_id", .string, "the app the tokens are for (required)")
        case .testBaseURL: MemberSpec("test_base_url", .json, presence: .whenPresent,
            "tests only: one base URL for both hosts, or {\"Production\": ..., \"Sandbox\": ...}, instead of Apple's")
        case .localTestingBaseURL: MemberSpec("local_testing_base_url", .string, presence: .whenPresent,
            "http(s)://host[:port]: where calls with environment LocalTesting go")
        }
    }
}

package enum CallMember: SurfaceObject {
    case endpoint, environment, tokenLifetimeSeconds, query, body, bodyBase64

    package static let objectName: StaticString = "api_call"
    package static let meaning: StaticString = "iapv_api_request: which endpoint to call, where, and its parameters (each endpoint's are in `endpoints`)"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .endpoint: MemberSpec("endpoint", .string, values: .vocabulary(APIEndpoint.self), "the endpoint to call (required): one of the names of the endpoints table")
        case .environment: MemberSpec("environment", .string, values: .words("Production Sandbox LocalTesting"), default: "\"Production\"",
            "which host: LocalTesting calls the signer's local_testing_base_url; the lower-case production and sandbox of 0.1 still work, with a note in deprecations")
        case .tokenLifetimeSeconds: MemberSpec("token_lifetime_seconds", .integer, default: "300", "the bearer token's lifetime, 1 to 3600 seconds")
        case .query: MemberSpec("query", .json, nullable: true, default: "null", "an object of the endpoint's query filters, in Apple's names")
        case .body: MemberSpec("body", .json, nullable: true, default: "null", "an object of the endpoint's body fields, in Apple's names, checked field by field")
        case .bodyBase64: MemberSpec("body_base64", .string, nullable: true, default: "null",
            "upload_image only: the PNG file's bytes, base64 (the Python binding takes bytes as body; Go marshals a []byte to base64)")
        }
    }
}

package enum SignRequestMember: SurfaceObject {
    case kind, nonce, productID, offerIdentifier, applicationUsername, appAccountToken, transactionID, allowIntroductoryOffer
    case request, messageIdentifier, alternateProductID, promotionalOffer

    package static let objectName: StaticString = "sign_request"
    package static let meaning: StaticString = "iapv_sign: what to sign; each kind takes the members that name it in `kinds` (docs/offer-signatures.md)"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .kind: MemberSpec("kind", .string, values: .vocabulary(SignatureKind.self), "what to sign (required)")
        case .nonce: MemberSpec("nonce", .string, "a UUID the host made for this signature (required)")
        case .productID: MemberSpec("product_id", .string, presence: .whenPresent, "the product the offer is for")
        case .offerIdentifier: MemberSpec("offer_identifier", .string, presence: .whenPresent, "the promotional offer's id")
        case .applicationUsername: MemberSpec("application_username", .string, presence: .whenPresent, "V1: StoreKit 1's applicationUsername (signed lower-cased)")
        case .appAccountToken: MemberSpec("app_account_token", .string, presence: .whenPresent, "V1: the older name of application_username")
        case .transactionID: MemberSpec("transaction_id", .string, presence: .whenPresent, "the customer's transaction id, where the kind binds one")
        case .allowIntroductoryOffer: MemberSpec("allow_introductory_offer", .boolean, presence: .whenPresent, "introductory offer eligibility: the answer to sign")
        case .request: MemberSpec("request", .json, presence: .whenPresent, "an Advanced Commerce in-app request, by Apple's names")
        case .messageIdentifier: MemberSpec("message_identifier", .string, presence: .whenPresent, "realtime response: the message to show")
        case .alternateProductID: MemberSpec("alternate_product_id", .string, presence: .whenPresent, "realtime response: the product to offer instead")
        case .promotionalOffer: MemberSpec("promotional_offer", .json, presence: .whenPresent, "realtime response: a promotional offer to sign with it")
        }
    }

    /// The kinds that take this member.
    var kinds: [SignatureKind] {
        switch self {
        case .kind, .nonce: return SignatureKind.allCases
        case .productID: return [.promotionalOfferV1, .promotionalOfferV2, .introductoryOfferEligibility]
        case .offerIdentifier: return [.promotionalOfferV1, .promotionalOfferV2]
        case .applicationUsername, .appAccountToken: return [.promotionalOfferV1]
        case .transactionID: return [.promotionalOfferV2, .introductoryOfferEligibility]
        case .allowIntroductoryOffer: return [.introductoryOfferEligibility]
        case .request: return [.advancedCommerceRequest]
        case .messageIdentifier, .alternateProductID, .promotionalOffer: return [.realtimeResponse]
        }
    }
}

extension APIParameter {
    /// What the parameter is, for the description (the endpoints table says which take it).
    var meaning: String {
        switch self {
        case .transactionID: return "a transaction id, as Apple gave it (the path of most endpoints)"
        case .originalTransactionID: return "the subscription's original transaction id"
        case .orderID: return "the order id of the customer's e-mail receipt (order_lookup)"
        case .revision: return "histories: the previous page's revision (paging)"
        case .paginationToken: return "notification history: the previous page's paginationToken (paging)"
        case .productID: return "a product id"
        case .requestIdentifier: return "mass_extend_status: the requestIdentifier you sent with mass_extend_renewal_date"
        case .testNotificationToken: return "test_notification_status: the token test_notification answered"
        case .imageIdentifier: return "Retention Messaging: an image's id, a UUID you make (sent in lower case)"
        case .messageIdentifier: return "Retention Messaging: a message's id, a UUID you make (sent in lower case)"
        case .locale: return "Retention Messaging: the default message's locale"
        case .requestID: return "Retention Messaging: a performance test's request id"
        }
    }

    /// The endpoints whose path or paging takes it, for the description.
    var endpoints: [APIEndpoint] {
        APIEndpoint.allCases.filter { $0.spec.pathParameters.contains(self) || $0.spec.queryParameters[self] != nil }
    }
}

extension APIEndpointSpec {
    /// The path with its parameters in braces: `inApps/v1/transactions/{transaction_id}`.
    var pathTemplate: String {
        path.map { part in
            switch part {
            case .literal(let text): return text
            case .parameter(let p): return "{\(p.rawValue)}"
            }
        }.joined(separator: "/")
    }
}
