// Offer signatures made with the developer's key: V1 over Apple's U+2063-joined string, the three
// V2 JWS kinds with their audiences and claims, and refused requests. (The Python tests verify
// the same signatures with an independent library.)

import Foundation
import XCTest
@_spi(Testing) @testable import IAPVerify

final class OfferSignatureTests: XCTestCase {
    let now: Int64 = 1_767_225_600_123
    let nonce = "5C9E2F5B-2A46-4CC5-8B06-8E3A4FD1D0A4"

    private func sign(_ request: [String: Any]) -> Result<OfferSignature, IAPVFailure> {
        let s = try! FakeApple.signer()
        let bytes = FakeApple.json(request)
        return bytes.withUnsafeBytes { raw in Result { () throws(IAPVFailure) -> OfferSignature in try s.sign(raw, nowMs: now) } }
    }

    private var developerKey: PublicKey {
        let pem = FakeApple.text("developer.pub.pem").split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        return ES256.publicKey(spki: Base64.decode(Array(pem.utf8))!)!
    }

    func testPromotionalOfferV1() throws {
        let s = try sign(["kind": "promotional_offer_v1", "nonce": nonce, "product_id": "pro.monthly", "offer_identifier": "spring",
                          "app_account_token": "7E3FB20B-4CDB-47CC-936D-99D65F608138"]).get()
        XCTAssertEqual(s.nonce, nonce.lowercased())
        XCTAssertEqual(s.timestampMs, now)
        XCTAssertNil(s.jws)
        let message = ["com.example.fake", "FAKEKEY123", "pro.monthly", "spring", "7e3fb20b-4cdb-47cc-936d-99d65f608138",
                       nonce.lowercased(), String(now)].joined(separator: "\u{2063}")
        let der = try XCTUnwrap(Base64.decode(Array(s.signature!.utf8)))
        XCTAssertTrue(Array(message.utf8).withUnsafeBytes { developerKey.verify(signature: der[...], message: $0, digest: .sha256) })
        let other = message.replacingOccurrences(of: "spring", with: "summer")
        XCTAssertFalse(Array(other.utf8).withUnsafeBytes { developerKey.verify(signature: der[...], message: $0, digest: .sha256) })
        // Without an app account token the field is empty, not left out.
        let bare = try sign(["kind": "promotional_offer_v1", "nonce": nonce, "product_id": "p", "offer_identifier": "o"]).get()
        let bareMessage = ["com.example.fake", "FAKEKEY123", "p", "o", "", nonce.lowercased(), String(now)].joined(separator: "\u{2063}")
        let bareDER = try XCTUnwrap(Base64.decode(Array(bare.signature!.utf8)))
        XCTAssertTrue(Array(bareMessage.utf8).withUnsafeBytes { developerKey.verify(signature: bareDER[...], message: $0, digest: .sha256) })
    }

    /// StoreKit 1 apps pass any applicationUsername (often a hash): it is signed lower-cased, as
    /// Apple's creator signs it. Before, anything but a UUID was refused.
    func testPromotionalOfferV1TakesAnyApplicationUsername() throws {
        for (given, signed) in [("Player#42 Ünïcode", "player#42 ünïcode"),
                                ("9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08",
                                 "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08")] {
            for key in ["application_username", "app_account_token"] {
                let s = try sign(["kind": "promotional_offer_v1", "nonce": nonce, "product_id": "p", "offer_identifier": "o", key: given]).get()
                let message = ["com.example.fake", "FAKEKEY123", "p", "o", signed, nonce.lowercased(), String(now)].joined(separator: "\u{2063}")
                let der = try XCTUnwrap(Base64.decode(Array(s.signature!.utf8)))
                XCTAssertTrue(Array(message.utf8).withUnsafeBytes { developerKey.verify(signature: der[...], message: $0, digest: .sha256) }, key)
            }
        }
        for (request, words) in [
            (["kind": "promotional_offer_v1", "nonce": nonce, "product_id": "p", "offer_identifier": "o",
              "application_username": "a\u{2063}b"], "U+2063"),
            (["kind": "promotional_offer_v1", "nonce": nonce, "product_id": "p", "offer_identifier": "o\u{2063}",
              "application_username": "a"], "U+2063"),
            (["kind": "promotional_offer_v1", "nonce": nonce, "product_id": "p", "offer_identifier": "o",
              "application_username": "a", "app_account_token": "b"], "not both"),
        ] as [([String: Any], String)] {
            switch sign(request) {
            case .success: XCTFail("signed \(request)")
            case .failure(let e): XCTAssertTrue(e.message.contains(words), e.message)
            }
        }
    }

    /// The answer to a realtime request: a message, an alternate product, or an offer signed here.
    func testRealtimeResponses() throws {
        let message = "7E3FB20B-4CDB-47CC-936D-99D65F608138"
        let m = try sign(["kind": "realtime_response", "message_identifier": message]).get()
        XCTAssertEqual(m.body, #"{"message":{"messageIdentifier":"7e3fb20b-4cdb-47cc-936d-99d65f608138"}}"#)
        let alt = try sign(["kind": "realtime_response", "message_identifier": message, "alternate_product_id": "pro.yearly"]).get()
        XCTAssertEqual(alt.body, #"{"alternateProduct":{"messageIdentifier":"7e3fb20b-4cdb-47cc-936d-99d65f608138","productId":"pro.yearly"}}"#)

        let v2 = try sign(["kind": "realtime_response", "nonce": nonce, "message_identifier": message,
                           "promotional_offer": ["version": "v2", "product_id": "pro.monthly", "offer_identifier": "stay", "transaction_id": "2001"]]).get()
        let body2 = try JSONSerialization.jsonObject(with: Data(v2.body!.utf8)) as! [String: Any]
        let offer2 = try XCTUnwrap(body2["promotionalOffer"] as? [String: Any])
        let jws = try XCTUnwrap(offer2["promotionalOfferSignatureV2"] as? String)
        XCTAssertEqual(jws, v2.jws)
        XCTAssertTrue(ES256.verifyCompact(Array(jws.utf8), key: developerKey))

        let v1 = try sign(["kind": "realtime_response", "nonce": nonce,
                           "promotional_offer": ["version": "v1", "product_id": "pro.monthly", "offer_identifier": "stay",
                                                 "application_username": "7E3FB20B-4CDB-47CC-936D-99D65F608138"]]).get()
        let body1 = try JSONSerialization.jsonObject(with: Data(v1.body!.utf8)) as! [String: Any]
        let offer1 = try XCTUnwrap((body1["promotionalOffer"] as? [String: Any])?["promotionalOfferSignatureV1"] as? [String: Any])
        XCTAssertEqual(offer1["keyId"] as? String, "FAKEKEY123")
        XCTAssertEqual(offer1["nonce"] as? String, nonce.lowercased())
        XCTAssertEqual(offer1["timestamp"] as? Int64, now)
        XCTAssertEqual(offer1["appAccountToken"] as? String, "7e3fb20b-4cdb-47cc-936d-99d65f608138")
        let signed = ["com.example.fake", "FAKEKEY123", "pro.monthly", "stay", "7e3fb20b-4cdb-47cc-936d-99d65f608138",
                      nonce.lowercased(), String(now)].joined(separator: "\u{2063}")
        let der = try XCTUnwrap(Base64.decode(Array((offer1["encodedSignature"] as! String).utf8)))
        XCTAssertTrue(Array(signed.utf8).withUnsafeBytes { developerKey.verify(signature: der[...], message: $0, digest: .sha256) })

        for (request, words) in [
            (["kind": "realtime_response"], "exactly one"),
            (["kind": "realtime_response", "alternate_product_id": "p", "promotional_offer": ["version": "v2"]], "exactly one"),
            (["kind": "realtime_response", "message_identifier": "m-1"], "UUID"),
            (["kind": "realtime_response", "nonce": nonce, "promotional_offer": ["version": "v3"]], "v1"),
            (["kind": "realtime_response", "promotional_offer": ["version": "v2", "product_id": "p", "offer_identifier": "o"]], "nonce"),
        ] as [([String: Any], String)] {
            switch sign(request) {
            case .success: XCTFail("signed \(request)")
            case .failure(let e): XCTAssertTrue(e.message.contains(words), "\(e.message) should say \(words)")
            }
        }
    }

    func testV2Signatures() throws {
        let cases: [([String: Any], String, [String: Any])] = [
            (["kind": "promotional_offer_v2", "nonce": nonce, "product_id": "pro.monthly", "offer_identifier": "spring", "transaction_id": "2001"],
             "promotional-offer", ["productId": "pro.monthly", "offerIdentifier": "spring", "transactionId": "2001"]),
            (["kind": "introductory_offer_eligibility", "nonce": nonce, "product_id": "pro.monthly", "allow_introductory_offer": false,
              "transaction_id": "2001"],
             "introductory-offer-eligibility", ["productId": "pro.monthly", "allowIntroductoryOffer": false, "transactionId": "2001"]),
            (["kind": "advanced_commerce_request", "nonce": nonce, "request": #"{"operation":"CREATE_SUBSCRIPTION"}"#],
             "advanced-commerce-api", ["request": Data(#"{"operation":"CREATE_SUBSCRIPTION"}"#.utf8).base64EncodedString()]),
        ]
        for (request, audience, specific) in cases {
            let s = try sign(request).get()
            let jws = try XCTUnwrap(s.jws)
            XCTAssertTrue(ES256.verifyCompact(Array(jws.utf8), key: developerKey))
            let parts = jws.split(separator: ".").map(String.init)
            let header = try JSONSerialization.jsonObject(with: Data(CompactJWS.base64URL(Array(parts[0].utf8))!)) as! NSDictionary
            XCTAssertEqual(header, ["alg": "ES256", "kid": "FAKEKEY123", "typ": "JWT"] as NSDictionary)
            var claims = try JSONSerialization.jsonObject(with: Data(CompactJWS.base64URL(Array(parts[1].utf8))!)) as! [String: Any]
            XCTAssertNil(claims["exp"], "Apple refuses these tokens with an exp")
            XCTAssertEqual(claims.removeValue(forKey: "aud") as? String, audience)
            XCTAssertEqual(claims.removeValue(forKey: "iss") as? String, "57246542-96fe-1a63-e053-0824d011072a")
            XCTAssertEqual(claims.removeValue(forKey: "iat") as? Int64, now / 1000)
            XCTAssertEqual(claims.removeValue(forKey: "bid") as? String, "com.example.fake")
            XCTAssertEqual(claims.removeValue(forKey: "nonce") as? String, nonce.lowercased())
            XCTAssertEqual(claims as NSDictionary, specific as NSDictionary)
        }
    }

    func testBadRequests() {
        let cases: [([String: Any], String)] = [
            (["kind": "promotional_offer_v1", "product_id": "p", "offer_identifier": "o"], "nonce"),
            (["kind": "promotional_offer_v1", "nonce": "not-a-uuid", "product_id": "p", "offer_identifier": "o"], "nonce"),
            (["kind": "promotional_offer_v1", "nonce": nonce, "offer_identifier": "o"], "product_id"),
            (["kind": "promotional_offer_v1", "nonce": nonce, "product_id": "", "offer_identifier": "o"], "product_id"),
            (["kind": "gift", "nonce": nonce], "unknown"),
            (["kind": "promotional_offer", "nonce": nonce, "product_id": "p", "offer_identifier": "o"],
             "ambiguous: use \"promotional_offer_v1\""),
            ([:], "kind"),
            (["kind": "promotional_offer_v2", "nonce": nonce, "product_id": "p", "offer_identifier": "o", "request": "{}"], "does not apply"),
            (["kind": "introductory_offer_eligibility", "nonce": nonce, "product_id": "p", "allow_introductory_offer": "yes",
              "transaction_id": "1"], "allow_introductory_offer"),
            (["kind": "introductory_offer_eligibility", "nonce": nonce, "product_id": "p", "allow_introductory_offer": true], "transaction_id"),
            (["kind": "advanced_commerce_request", "nonce": nonce, "request": "[1]"], "JSON object"),
            (["kind": "advanced_commerce_request", "nonce": nonce, "request": ["operation": "x"]], "as text"),
            (["kind": "promotional_offer_v1", "nonce": nonce, "product_id": 5, "offer_identifier": "o"], "product_id"),
        ]
        for (request, words) in cases {
            switch sign(request) {
            case .success: XCTFail("signed \(request)")
            case .failure(let e):
                XCTAssertEqual(e.status, .invalidArgument)
                XCTAssertTrue(e.message.contains(words), "\(e.message) should say \(words)")
            }
        }
    }
}
