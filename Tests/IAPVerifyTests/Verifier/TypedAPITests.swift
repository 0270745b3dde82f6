// The Swift core without JSON or unsafe buffers: a config built in code, byte arrays in, typed
// reports out. The C boundary and the CLI sit on the same calls.

import XCTest
@testable import IAPVerify

final class TypedAPITests: XCTestCase {
    func testAConfigBuiltInCodeAndByteArrays() throws {
        var config = VerifierConfig(bundleID: "com.revenuecat.sampleapp")
        config.environments = [.production, .sandbox]
        config.products = ["com.revenuecat.lifetime": ProductRule(type: .nonConsumable, entitlements: ["pro"])]
        let verifier = try Verifier(config: config)
        let receipt: [UInt8] = Fixtures.data("receipts/sandbox_2020-07-22_com.revenuecat.sampleapp.der")
        let report = try verifier.verifyReceipt(receipt, nowMs: jan2030)
        XCTAssertEqual(report.verdict, .valid, report.judgement.reason)
        XCTAssertEqual(report.state(.signature), .ok)
        XCTAssertEqual(try verifier.verifyReceipt(receipt[...], nowMs: jan2030).verdict, .valid)

        var options = EntitlementOptions()
        options.orders = [PendingOrder(orderID: "o1", productID: "com.example.none", createdMs: 0)]
        let input = Array(#"{"transactions":[]}"#.utf8)
        let e = try verifier.computeEntitlements(input, options: options, nowMs: jan2030)
        XCTAssertTrue(e.isValid, e.judgement.reason)
    }
}
