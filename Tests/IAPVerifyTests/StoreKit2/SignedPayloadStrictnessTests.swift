// Signed payloads are read strictly (the types Apple signs), unsigned Apple bodies and the
// entitlement input tolerantly: "1" is true in a /verifyReceipt body, malformed in a JWS.

import Foundation
import XCTest
@_spi(Testing) @testable import IAPVerify

final class SignedPayloadStrictnessTests: XCTestCase {
    func verdict(_ payload: [String: Any]) throws -> (Verdict, String) {
        let v = try XCTUnwrap(FakeApple.verifier())
        let r = try verifyJWS(v, FakeApple.sign(payload), now: FakeApple.now)
        return (r.verdict, r.judgement.reason)
    }

    func testASignedTransactionHasTheTypesAppleSigns() throws {
        XCTAssertEqual(try verdict(FakeApple.transaction("1")).0, .valid)
        for (key, value) in [("quantity", "2" as Any), ("isUpgraded", "1"), ("isUpgraded", 1), ("transactionId", 1001),
                             ("purchaseDate", "1767225600000")] {
            let (v, why) = try verdict(FakeApple.transaction("1", extra: [key: value]))
            XCTAssertEqual(v, .malformed, "\(key): \(value)")
            XCTAssertTrue(why.contains(key), why)
        }
    }

    func testARenewalInfosAutoRenewStatusIsTheNumberAppleSigns() throws {
        let v = try XCTUnwrap(FakeApple.verifier())
        for (value, expected) in [(1 as Any, true), (0, false)] {
            let r = try verifyJWS(v, FakeApple.sign(FakeApple.renewal(extra: ["autoRenewStatus": value])), now: FakeApple.now)
            XCTAssertEqual(r.verdict, .valid, r.judgement.reason)
            XCTAssertEqual(r.renewal?.autoRenewStatus, expected)
        }
        for bad: Any in ["1", 2] {
            let r = try verifyJWS(v, FakeApple.sign(FakeApple.renewal(extra: ["autoRenewStatus": bad])), now: FakeApple.now)
            XCTAssertEqual(r.verdict, .malformed, "\(bad)")
        }
    }

    func testTheEntitlementInputStaysTolerant() throws {
        let v = try makeVerifierOrThrow(["bundle_id": "*"])
        let input = #"{"transactions":[{"transaction_id":1001,"product_id":"p","purchase_date_ms":"1700000000000","is_upgraded":"0","quantity":"1"}]}"#
        let r = try v.computeEntitlements(Array(input.utf8), nowMs: 1_700_000_100_000)
        XCTAssertEqual(r.verdict, .valid, r.judgement.reason)
    }
}
