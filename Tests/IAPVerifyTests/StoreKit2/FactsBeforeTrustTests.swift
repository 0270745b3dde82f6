// JWS reads only its facts before the chain and signature and builds its records after the
// decision; the answers keep one order whatever the stages: a record that cannot be read is
// malformed before any refusal, and a refused token still shows the records it decoded.

import Foundation
import XCTest
@_spi(Testing) @testable import IAPVerify

final class FactsBeforeTrustTests: XCTestCase {
    /// The token with one character of its signature changed (not the last, whose low bits are
    /// padding): the chain holds, the signature not.
    func forged(_ payload: [String: Any]) -> String {
        var text = Array(FakeApple.sign(payload).utf8)
        let i = text.count - 10
        text[i] = text[i] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        return String(decoding: text, as: UTF8.self)
    }

    func testAnUnreadableRecordIsMalformedBeforeAnyRefusal() throws {
        let bad = FakeApple.transaction("1", extra: ["quantity": "2"])
        let trusted = try XCTUnwrap(FakeApple.verifier())
        let otherApp = try XCTUnwrap(FakeApple.verifier(["bundle_id": "com.example.other"]))
        let noRoot = try XCTUnwrap(makeVerifier(["bundle_id": FakeApple.bundle, "environments": ["Production"]]))
        for (v, token, what) in [(trusted, FakeApple.sign(bad), "signed"), (trusted, forged(bad), "forged"),
                                 (otherApp, FakeApple.sign(bad), "another app"), (noRoot, FakeApple.sign(bad), "no root")] {
            let r = try verifyJWS(v, token, now: FakeApple.now)
            XCTAssertEqual(r.verdict, .malformed, what)
            XCTAssertTrue(r.judgement.reason.contains("quantity"), "\(what): \(r.judgement.reason)")
            // Refused before the decision was shown: no instant, no chain, no kind.
            XCTAssertNil(r.validatedAtMs, what)
            XCTAssertTrue(r.chain.isEmpty, what)
            XCTAssertNil(r.kind, what)
            XCTAssertEqual(r.signedDateMs, FakeApple.signedDate, what)
        }
    }

    func testARefusedTokenStillShowsItsRecords() throws {
        let v = try XCTUnwrap(FakeApple.verifier())
        let r = try verifyJWS(v, forged(FakeApple.transaction("7")), now: FakeApple.now)
        XCTAssertEqual(r.verdict, .signatureInvalid, r.judgement.reason)
        XCTAssertEqual(r.kind, .transaction)
        XCTAssertEqual(r.transaction?.id.string, "7")
        XCTAssertEqual(r.chain.count, 3)
        XCTAssertEqual(r.validatedAtMs, FakeApple.signedDate)
        XCTAssertNil(r.entitlements)
    }

    func testTheKindAskedForIsCheckedBeforeTheSigner() throws {
        let v = try XCTUnwrap(FakeApple.verifier())
        let r = try verifyJWS(v, forged(FakeApple.transaction("7")), now: FakeApple.now, ["kind": "renewal_info"])
        XCTAssertEqual(r.verdict, .malformed)
        XCTAssertEqual(r.judgement.reason, "the token is a transaction, not a renewal info")
        XCTAssertNil(r.validatedAtMs)
        XCTAssertEqual(r.transaction?.id.string, "7")
    }
}
