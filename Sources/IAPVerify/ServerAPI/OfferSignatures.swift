// Signatures an app asks its server for, made with the developer's key (the Signer): the
// promotional offer signature of StoreKit 1 / early StoreKit 2 (V1: ECDSA over Apple's
// U+2063-joined string, base64 DER) and the JWS that sign App Store requests (V2: promotional
// offers, introductory offer eligibility, Advanced Commerce in-app requests). The host passes the
// nonce and the time; nothing here is random or reads a clock.

public enum SignatureKind: String, CaseIterable, Sendable {
    case promotionalOfferV1 = "promotional_offer_v1"
    case promotionalOfferV2 = "promotional_offer_v2"
    case introductoryOfferEligibility = "introductory_offer_eligibility"
    case advancedCommerceRequest = "advanced_commerce_request"
    /// The body a server answers a Retention Messaging realtime request with: a message, an
    /// alternate product, or a promotional offer signed here (V1 or V2).
    case realtimeResponse = "realtime_response"

    /// The `aud` of the V2 JWS.
    var audience: String? {
        switch self {
        case .promotionalOfferV1, .realtimeResponse: return nil
        case .promotionalOfferV2: return "promotional-offer"
        case .introductoryOfferEligibility: return "introductory-offer-eligibility"
        case .advancedCommerceRequest: return "advanced-commerce-api"
        }
    }
}

public struct OfferSignature: Sendable {
    public internal(set) var kind: SignatureKind
    public internal(set) var keyID: String
    public internal(set) var nonce: String
    public internal(set) var timestampMs: Int64
    /// V1: base64 of the DER ECDSA signature.
    public internal(set) var signature: String?
    /// V2: the compact JWS.
    public internal(set) var jws: String?
    /// realtime_response: the JSON body to answer Apple with, as text.
    public internal(set) var body: String?

    public func resultJSON() -> [UInt8] {
        var w = JSONWriter(capacity: 512 + (jws?.utf8.count ?? 0))
        w.beginObject()
        w.field(SignatureResultMember.kind, kind.rawValue)
        w.field(SignatureResultMember.keyID, keyID)
        w.field(SignatureResultMember.nonce, nonce)
        w.field(SignatureResultMember.timestampMs, timestampMs)
        w.field(SignatureResultMember.signature, signature)
        w.field(SignatureResultMember.jws, jws)
        w.field(SignatureResultMember.body, body)
        w.endObject()
        return w.bytes
    }
}

/// A signature request's members by name, read for the kind they ask for.
struct OfferRequest {
    let kind: SignatureKind
    var fields: [String: ConfigJSONValue]
    /// The nonce given outside `fields`: a realtime response's own, which its offer is signed with.
    var nonce: String? = nil

    /// The members each kind takes.
    /// (The description says which: SignRequestMember.kinds.)
    static func allowed(_ kind: SignatureKind) -> Set<String> {
        Set(SignRequestMember.allCases.filter { $0.kinds.contains(kind) }.map { "\($0.spec.name)" })
    }

    /// Refuses a member the kind does not take.
    func checkMembers() throws(IAPVFailure) {
        let allowed = Self.allowed(kind)
        for key in fields.keys where !allowed.contains(key) {
            throw .argument("signature request: \"\(key)\" does not apply to \(kind.rawValue) (expected \(allowed.sorted().joined(separator: ", ")))")
        }
    }

    /// A text member: at most 512 characters, no control characters or U+2063 (the V1 separator).
    func text(_ key: String, required: Bool = true) throws(IAPVFailure) -> String? {
        let given: String?
        if key == "nonce", let nonce {
            given = nonce
        } else {
            guard let v = fields[key], !v.isNull else {
                if required { throw .argument("\(kind.rawValue) needs \"\(key)\"") }
                return nil
            }
            given = v.string
        }
        guard let s = given, s.utf8.count <= 512, !s.utf8.contains(where: { $0 < 0x20 }), !s.contains("\u{2063}") else {
            throw .argument("signature request \"\(key)\" must be a string of at most 512 characters without control characters or U+2063 (the V1 separator)")
        }
        guard required == false || !s.isEmpty else { throw .argument("\(kind.rawValue) needs a non-empty \"\(key)\"") }
        return s
    }
}

extension Signer {
    /// V1's fifth field: StoreKit 1's `applicationUsername` (any string, often a hash of the
    /// account; StoreKit 2 passes the appAccountToken UUID there), lower-cased as Apple's own
    /// signature creator does. Empty when absent. `app_account_token` is the same field under the
    /// name this library used first. Only U+2063 is refused: inside a field, the joined string
    /// would read two ways.
    private func applicationUsername(_ fields: [String: ConfigJSONValue]) throws(IAPVFailure) -> String {
        if fields["application_username"].map({ !$0.isNull }) == true, fields["app_account_token"].map({ !$0.isNull }) == true {
            throw .argument("promotional_offer_v1: give \"application_username\" or its older name \"app_account_token\", not both")
        }
        guard let value = fields["application_username"] ?? fields["app_account_token"], !value.isNull else { return "" }
        guard let s = value.string else { throw .argument("promotional_offer_v1 \"application_username\" must be a string") }
        guard s.utf8.count <= 4096 else { throw .argument("promotional_offer_v1 \"application_username\" is \(s.utf8.count) bytes; at most 4096") }
        guard !s.unicodeScalars.contains("\u{2063}") else {
            throw .argument("promotional_offer_v1 \"application_username\" contains U+2063, the separator of the signed string: it would read two ways")
        }
        return s.lowercased()
    }

    /// Signs what `request` describes: {"kind": ..., "nonce": "<UUID>", and the kind's fields}.
    public func sign(_ request: UnsafeRawBufferPointer, nowMs: Int64) throws(IAPVFailure) -> OfferSignature {
        try Admission.clock(nowMs)
        guard request.count <= 64 * 1024 else { throw .argument("the signature request is \(request.count) bytes; at most 65536") }
        let doc = try ConfigJSONDocument(bytes: request, what: "signature request", status: .invalidArgument)
        guard let members = doc.root.members else { throw .argument("signature request: expected a JSON object, got \(doc.root.typeName)") }
        var fields: [String: ConfigJSONValue] = [:]
        for (k, v) in members { fields[k] = v }
        let offer = OfferRequest(kind: try Self.signatureKind(fields["kind"]), fields: fields)
        try offer.checkMembers()
        if offer.kind == .realtimeResponse { return try realtimeResponse(fields, nowMs: nowMs) }
        return try signOffer(offer, nowMs: nowMs)
    }

    /// The request's `kind`, named exactly: the unsuffixed "promotional_offer" is refused.
    private static func signatureKind(_ value: ConfigJSONValue?) throws(IAPVFailure) -> SignatureKind {
        guard let kindText = value?.string else {
            throw .argument("signature request needs \"kind\": one of " + SignatureKind.allCases.map(\.rawValue).joined(separator: ", "))
        }
        if kindText == "promotional_offer" {
            // Apple's libraries mean V1 by the unsuffixed name, this library's first versions V2:
            // neither is guessed.
            throw .argument("signature request kind \"promotional_offer\" is ambiguous: use \"promotional_offer_v1\" (the StoreKit 1 signature over Apple's joined string) or \"promotional_offer_v2\" (the JWS StoreKit 2 takes)")
        }
        guard let kind = SignatureKind(rawValue: kindText) else {
            throw .argument("signature request kind \"\(kindText)\" is unknown; expected one of " + SignatureKind.allCases.map(\.rawValue).joined(separator: ", "))
        }
        return kind
    }

    /// The one signing step of every offer kind (a realtime response's offer included): the
    /// nonce, then the V1 signature or the V2 JWS.
    private func signOffer(_ offer: OfferRequest, nowMs: Int64) throws(IAPVFailure) -> OfferSignature {
        // The nonce: a UUID, sent lowercase as Apple requires.
        guard let rawNonce = try offer.text("nonce"), APIURL.isUUID(rawNonce) else {
            throw .argument("\(offer.kind.rawValue) needs \"nonce\": a UUID the server made for this one request")
        }
        let nonce = rawNonce.lowercased()
        switch offer.kind {
        case .promotionalOfferV1:
            let product = try offer.text("product_id")!
            let identifier = try offer.text("offer_identifier")!
            let account = try applicationUsername(offer.fields)
            let message = [bundleID, keyID, product, identifier, account, nonce, String(nowMs)].joined(separator: "\u{2063}")
            guard let der = key.signDER(Array(message.utf8)) else { throw IAPVFailure(.internal, "OpenSSL could not sign with the signer's key") }
            return OfferSignature(kind: offer.kind, keyID: keyID, nonce: nonce, timestampMs: nowMs, signature: Base64.encode(der), jws: nil)
        case .realtimeResponse:
            throw IAPVFailure(.internal, "realtime responses are built by realtimeResponse")
        case .promotionalOfferV2, .introductoryOfferEligibility, .advancedCommerceRequest:
            let payload = try v2Payload(offer, nonce: nonce, nowMs: nowMs)
            let jws = try compactJWS(header: jwtHeader, payload: payload)
            return OfferSignature(kind: offer.kind, keyID: keyID, nonce: nonce, timestampMs: (nowMs / 1000) * 1000, signature: nil, jws: jws)
        }
    }

    /// The claims of a V2 JWS: issuer, time, audience, bundle and nonce, then the kind's own.
    private func v2Payload(_ offer: OfferRequest, nonce: String, nowMs: Int64) throws(IAPVFailure) -> [UInt8] {
        var p = JSONWriter(capacity: 512)
        p.beginObject()
        p.field("iss", issuerID)
        p.field("iat", nowMs / 1000)
        p.field("aud", offer.kind.audience)
        p.field("bid", bundleID)
        p.field("nonce", nonce)
        // No exp: Apple refuses these tokens when they carry one and times them from iat.
        switch offer.kind {
        case .promotionalOfferV2:
            p.field("productId", try offer.text("product_id"))
            p.field("offerIdentifier", try offer.text("offer_identifier"))
            if let t = try offer.text("transaction_id", required: false) { p.field("transactionId", t) }
        case .introductoryOfferEligibility:
            p.field("productId", try offer.text("product_id"))
            guard let allow = offer.fields["allow_introductory_offer"]?.bool else {
                throw .argument("introductory_offer_eligibility needs \"allow_introductory_offer\": true or false")
            }
            p.field("allowIntroductoryOffer", allow)
            p.field("transactionId", try offer.text("transaction_id"))
        case .advancedCommerceRequest:
            p.field("request", try Self.advancedCommerceRequest(offer.fields["request"]))
        case .promotionalOfferV1, .realtimeResponse:
            break
        }
        p.endObject()
        return p.bytes
    }

    /// The Advanced Commerce request as signed: the text of a JSON object, base64, byte for byte.
    private static func advancedCommerceRequest(_ value: ConfigJSONValue?) throws(IAPVFailure) -> String {
        guard let body = value?.string, !body.isEmpty else {
            throw .argument("advanced_commerce_request needs \"request\": the request JSON as text (it is signed byte for byte)")
        }
        guard body.utf8.count <= 32 * 1024 else {
            throw .argument("advanced_commerce_request \"request\" is \(body.utf8.count) bytes; at most 32768")
        }
        let bytes = Array(body.utf8)
        let parsed = bytes.withUnsafeBytes { ConfigJSONDocument.parse($0, what: "request", status: .invalidArgument) }
        guard case .success(let d) = parsed, d.root.kind == .object else {
            throw .argument("advanced_commerce_request \"request\" must be the text of a JSON object")
        }
        return Base64.encode(bytes)
    }
}

extension Signer {
    /// The answer to a realtime request: exactly one of a message, an alternate product (with an
    /// optional message) or a promotional offer (with an optional message), whose signature is
    /// made here with the nonce and time of this call.
    fileprivate func realtimeResponse(_ fields: [String: ConfigJSONValue], nowMs: Int64) throws(IAPVFailure) -> OfferSignature {
        func present(_ key: String) -> ConfigJSONValue? { fields[key].flatMap { $0.isNull ? nil : $0 } }
        var message: String?
        if let m = present("message_identifier") {
            guard let s = m.string, APIURL.isUUID(s) else {
                throw .argument("realtime_response \"message_identifier\" must be the UUID of a message you uploaded")
            }
            message = s.lowercased()
        }
        let product = present("alternate_product_id")
        let offer = present("promotional_offer")
        let chosen = [product != nil, offer != nil].filter { $0 }.count
        guard chosen <= 1, chosen == 1 || message != nil else {
            throw .argument("realtime_response needs exactly one answer: message_identifier alone, alternate_product_id, or promotional_offer (each with an optional message_identifier)")
        }
        var result = OfferSignature(kind: .realtimeResponse, keyID: keyID, nonce: "", timestampMs: nowMs, signature: nil, jws: nil)
        var w = JSONWriter(capacity: 1024)
        w.beginObject()
        if let product {
            guard let id = product.string, !id.isEmpty, id.utf8.count <= 512 else {
                throw .argument("realtime_response \"alternate_product_id\" must be a product id")
            }
            w.key("alternateProduct")
            w.beginObject()
            w.field("messageIdentifier", message)
            w.field("productId", id)
            w.endObject()
        } else if let offer {
            let request = try realtimeOffer(offer, nonce: fields["nonce"]?.string)
            let signed = try signOffer(request, nowMs: nowMs)
            (result.nonce, result.timestampMs, result.signature, result.jws) = (signed.nonce, signed.timestampMs, signed.signature, signed.jws)
            writePromotionalOffer(signed, request.fields, message: message, into: &w)
        } else {
            w.key("message")
            w.beginObject()
            w.field("messageIdentifier", message)
            w.endObject()
        }
        w.endObject()
        result.body = String(decoding: w.bytes, as: UTF8.self)
        return result
    }

    /// A realtime response's `promotional_offer` as the offer request it is signed as: its
    /// version names the kind, this call's nonce (when it is a string) is its nonce, and its other
    /// members are texts or null.
    private func realtimeOffer(_ offer: ConfigJSONValue, nonce: String?) throws(IAPVFailure) -> OfferRequest {
        guard let members = offer.members else {
            throw .argument("realtime_response \"promotional_offer\" must be an object: {\"version\": \"v1\" or \"v2\", \"product_id\", \"offer_identifier\", ...}")
        }
        var inner: [String: ConfigJSONValue] = [:]
        for (k, v) in members { inner[k] = v }
        guard let version = inner.removeValue(forKey: "version")?.string, version == "v1" || version == "v2" else {
            throw .argument("realtime_response promotional_offer.version must be \"v1\" or \"v2\"")
        }
        for (k, v) in members where k != "version" && v.string == nil && !v.isNull {
            throw .argument("realtime_response promotional_offer.\(k) must be a string")
        }
        // The kind, and the nonce when this call gives one, are the realtime request's own.
        for (k, _) in members where k == "kind" || (k == "nonce" && nonce != nil) {
            throw .argument("realtime_response promotional_offer.\(k) is given by the realtime request itself; remove it from promotional_offer")
        }
        let request = OfferRequest(kind: version == "v1" ? .promotionalOfferV1 : .promotionalOfferV2, fields: inner, nonce: nonce)
        try request.checkMembers()
        return request
    }

    /// The `promotionalOffer` answer: the V2 JWS, or the V1 signature with what it was made over.
    private func writePromotionalOffer(_ signed: OfferSignature, _ inner: [String: ConfigJSONValue], message: String?,
                                       into w: inout JSONWriter) {
        w.key("promotionalOffer")
        w.beginObject()
        w.field("messageIdentifier", message)
        if let jws = signed.jws {
            w.field("promotionalOfferSignatureV2", jws)
        } else {
            w.key("promotionalOfferSignatureV1")
            w.beginObject()
            w.field("encodedSignature", signed.signature)
            w.field("productId", inner["product_id"]?.string)
            w.field("nonce", signed.nonce)
            w.field("timestamp", signed.timestampMs)
            w.field("keyId", keyID)
            w.field("offerIdentifier", inner["offer_identifier"]?.string)
            if let account = (inner["application_username"] ?? inner["app_account_token"])?.string, !account.isEmpty {
                w.field("appAccountToken", account.lowercased())
            }
            w.endObject()
        }
        w.endObject()
    }
}
