// Reports start undecided and become valid only through the last step, when every check ran
// and none failed: a path that forgets to decide grants nothing.

import XCTest
@_spi(Testing) @testable import IAPVerify

final class ReportDecisionTests: XCTestCase {
    func testAnUndecidedReportIsNotValid() {
        let r = ReceiptReport()
        XCTAssertFalse(r.isValid)
        XCTAssertEqual(r.verdict, .malformed)
        XCTAssertFalse(r.trusted)
        XCTAssertEqual(JWSReport().isValid, false)
    }

    func testPassNeedsEveryCheckToHaveRun() {
        var r = ReceiptReport()
        for check in ReceiptCheck.allCases.dropLast() { r.mark(check, .ok) }
        r.pass("too early")
        XCTAssertFalse(r.isValid, "age never ran")
        r.mark(.age, .skipped)
        r.pass("every check ran")
        XCTAssertTrue(r.isValid)
    }

    func testAFailureCannotBeOverriddenByPass() {
        var r = ReceiptReport()
        for check in ReceiptCheck.allCases { r.mark(check, .ok) }
        r.fail(.device, .deviceMismatch, "another device")
        r.pass("looks fine")
        XCTAssertEqual(r.verdict, .deviceMismatch)
    }

    func testCheckNamesAreTheResultKeys() {
        XCTAssertEqual(ReceiptCheck.allCases.map(\.rawValue), [
            "structure", "algorithm", "payload", "chain", "signer", "signature",
            "environment", "bundle_id", "bundle_version", "device", "expiration", "age",
        ])
    }

    func testEveryAppleEnvironmentNameMapsOnce() {
        XCTAssertEqual(PurchaseEnvironment(appleName: "ProductionVPP"), .production)
        XCTAssertEqual(PurchaseEnvironment(appleName: "ProductionVPPSandbox"), .sandbox)
        XCTAssertEqual(PurchaseEnvironment(appleName: "LocalTesting"), .localTesting, "its own environment, as Apple spells it")
        XCTAssertNil(PurchaseEnvironment(appleName: "Staging"))
        XCTAssertNil(PurchaseEnvironment(appleName: nil))
    }

    func testReceiptPoliciesAreChecks8To13InOrder() {
        XCTAssertEqual(ReceiptPolicies.all.map(\.check), Array(ReceiptCheck.allCases.suffix(6)))
    }
}
