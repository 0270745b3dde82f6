// One bundle rule for receipts, responses and JWS: UTF-8 bytes compared exactly, and a
// payload that should name its app but does not fails closed, even under bundle_id "*".

import XCTest
@_spi(Testing) @testable import IAPVerify

final class BundleRuleTests: XCTestCase {
    let composed = "com.caf\u{E9}.app"          // é as one code point
    let decomposed = "com.cafe\u{301}.app"      // e + combining acute: canonically equal in Swift

    func testTheRuleItself() {
        let exact = VerifierConfig(bundleID: composed)
        XCTAssertEqual(exact.checkBundle(composed, what: "x"), .ok)
        XCTAssertTrue(composed == decomposed, "Swift's String == would call these equal")
        guard case .failed = exact.checkBundle(decomposed, what: "x") else { return XCTFail("bytes differ: mismatch") }
        guard case .failed = exact.checkBundle(nil, what: "x") else { return XCTFail("absent: mismatch") }
        let any = VerifierConfig(bundleID: "*")
        XCTAssertEqual(any.checkBundle(decomposed, what: "x"), .notChecked)
        guard case .failed(_, let why) = any.checkBundle(nil, what: "transaction") else { return XCTFail("absent under *: mismatch") }
        XCTAssertTrue(why.contains("carries no bundle id"), why)
    }

    func testResponsesCompareBytes() throws {
        let v = try makeVerifierOrThrow(["bundle_id": composed])
        let body: [String: Any] = ["status": 0, "environment": "Production", "receipt": ["bundle_id": decomposed, "in_app": []]]
        XCTAssertEqual(try interpret(v, json: body, now: 0).verdict, .bundleMismatch)
        let same: [String: Any] = ["status": 0, "environment": "Production", "receipt": ["bundle_id": composed, "in_app": []]]
        XCTAssertEqual(try interpret(v, json: same, now: 0).verdict, .valid)
        let any = try makeVerifierOrThrow(["bundle_id": "*"])
        let none: [String: Any] = ["status": 0, "environment": "Production", "receipt": ["in_app": []]]
        let r = try interpret(any, json: none, now: 0)
        XCTAssertEqual(r.verdict, .bundleMismatch, r.judgement.reason)
        XCTAssertEqual(r.action, .reject)
    }
}
