// A realtime response's promotional offer is signed by the same step as the offer kinds
// (Signer.signOffer): the members its version takes, this call's nonce, and the signing key
// Trust holds.

import Foundation
import XCTest
@_spi(Testing) @testable import IAPVerify

final class RealtimeOfferTests: XCTestCase {
    let nonce = "5C9E2F5B-2A46-4CC5-8B06-8E3A4FD1D0A4"

    /// The signature, or the message of the argument error that refused the request.
    private func outcome(_ request: [String: Any]) throws -> (signed: OfferSignature?, refusal: String) {
        let signer = try FakeApple.signer()
        do {
            let s = try FakeApple.json(request).withUnsafeBytes { (raw) throws(IAPVFailure) in try signer.sign(raw, nowMs: 1_767_225_600_000) }
            return (s, "")
        } catch let e as IAPVFailure {
            XCTAssertEqual(e.status, .invalidArgument)
            return (nil, e.message)
        }
    }

    private func refusal(_ request: [String: Any]) -> String { (try? outcome(request).refusal) ?? "no signer" }

    func testTheOffersMembersAreCheckedAsItsVersionsKind() {
        let message = refusal(["kind": "realtime_response", "nonce": nonce,
                               "promotional_offer": ["version": "v1", "product_id": "p", "offer_identifier": "o", "transaction_id": "1"]])
        XCTAssertTrue(message.contains("\"transaction_id\" does not apply to promotional_offer_v1"), message)
    }

    func testTheKindAndTheCallsNonceAreNotRepeatedInsideTheOffer() {
        let kind = refusal(["kind": "realtime_response", "nonce": nonce,
                            "promotional_offer": ["version": "v2", "kind": "promotional_offer_v2", "product_id": "p", "offer_identifier": "o"]])
        XCTAssertTrue(kind.contains("promotional_offer.kind is given by the realtime request itself"), kind)
        let twice = refusal(["kind": "realtime_response", "nonce": nonce,
                             "promotional_offer": ["version": "v2", "nonce": nonce, "product_id": "p", "offer_identifier": "o"]])
        XCTAssertTrue(twice.contains("promotional_offer.nonce is given by the realtime request itself"), twice)
        // A member that is not a string is named first, whatever else is wrong.
        let number = refusal(["kind": "realtime_response", "nonce": nonce,
                              "promotional_offer": ["version": "v2", "kind": "x", "product_id": 7, "offer_identifier": "o"]])
        XCTAssertTrue(number.contains("promotional_offer.product_id must be a string"), number)
    }

    func testTheOffersOwnNonceServesWhenTheCallGivesNone() throws {
        let s = try XCTUnwrap(outcome(["kind": "realtime_response",
                                       "promotional_offer": ["version": "v2", "nonce": nonce, "product_id": "p", "offer_identifier": "o"]]).signed)
        XCTAssertEqual(s.nonce, nonce.lowercased())
        XCTAssertNotNil(s.jws)
    }

    func testTheSigningKeyRefusesWhatIsNotAP256PrivateKey() {
        XCTAssertThrowsError(try SigningKey(pem: Array("not a key".utf8))) { XCTAssertEqual($0 as? SigningKey.LoadFailure, .unreadable) }
    }
}
