// One gate to `valid` (issue 36): every entry point names its required checks, and a report is
// valid only when every one of them ran and none failed. A check not run or a failed check never
// makes a report valid, whichever entry point it belongs to.

import Foundation
import XCTest
@_spi(Testing) @testable import IAPVerify

final class CheckGateTests: XCTestCase {
    private enum Step: CaseIterable, RequiredCheck { case first, second, third }

    private func allRan<Check: RequiredCheck>(_ gate: CheckGate<Check>, _ file: StaticString = #filePath, _ line: UInt = #line) {
        XCTAssertFalse(gate.states.contains(.notRun), "a check did not run: \(gate.states)", file: file, line: line)
        XCTAssertFalse(gate.states.contains(.failed), file: file, line: line)
    }

    // MARK: - The gate itself

    func testAGateWithACheckNotRunIsNeverValid() {
        var gate = CheckGate<Step>()
        gate.mark(.first, .ok)
        gate.mark(.third, .skipped)
        XCTAssertFalse(gate.pass("too early"))
        XCTAssertNotEqual(gate.judgement.verdict, .valid)
        XCTAssertTrue(gate.judgement.isUndecided)
        gate.mark(.second, .notChecked)
        XCTAssertTrue(gate.pass("every check ran"))
        XCTAssertEqual(gate.judgement, Judgement(.valid, "every check ran (bundle id not checked: the config accepts any app)"),
                       "a check deliberately not performed is said in the reason")
    }

    func testAFailedCheckIsNeverValidWhateverRunsAfterIt() {
        var gate = CheckGate<Step>()
        gate.fail(.second, .bundleMismatch, "another app")
        for step in Step.allCases where step != .second { gate.mark(step, .ok) }
        XCTAssertFalse(gate.pass("looks fine"))
        XCTAssertEqual(gate.judgement.verdict, .bundleMismatch)
        // Marking the failed check again does not undo the decision either.
        gate.mark(.second, .ok)
        XCTAssertFalse(gate.pass("looks fine"))
        XCTAssertEqual(gate.judgement.verdict, .bundleMismatch)
    }

    func testARefusalAtTheFirstCheckIsNeverValid() {
        var gate = CheckGate<Step>()
        gate.fail(.first, .malformed, "not an input at all")
        for step in Step.allCases where step != .first { gate.mark(step, .ok) }
        XCTAssertEqual(gate.state(.first), .failed)
        XCTAssertFalse(gate.pass("every check ran"))
        XCTAssertEqual(gate.judgement.verdict, .malformed)
    }

    func testAPassedGateIsDecidedOnce() {
        var gate = CheckGate<Step>()
        for step in Step.allCases { gate.mark(step, .ok) }
        XCTAssertTrue(gate.pass("first"))
        XCTAssertFalse(gate.pass("second"))
        XCTAssertEqual(gate.judgement.reason, "first")
    }

    // MARK: - Each entry point's report

    func testAResponseWithACheckNotRunIsNotValid() {
        var gate = CheckGate<ResponseCheck>()
        for check in ResponseCheck.allCases where check != .bundle { gate.mark(check, .ok) }
        let grants = EngineSettings(catalog: nil, grace: .honor).evaluate([], ownRenewals: [], host: EntitlementOptions(), nowMs: 0)
        let r = ResponseReport(accepted: "the bundle was never checked", gate: gate, status: 0, environment: .production,
                               receipt: ResponseReceipt(style: .ios7), transactions: [], renewals: [], entitlements: grants,
                               deprecations: [])
        XCTAssertFalse(r.isValid)
        XCTAssertEqual(r.action, .reject)
        XCTAssertTrue(r.judgement.isUndecided)
    }

    func testAnAPIAnswerWithACheckNotRunIsNotValid() {
        var r = APIResponseReport(options: apiOptions("transaction_history", status: 200), endpoint: .transactionHistory)
        for check in APICheck.allCases where check != .items { r.gate.mark(check, .ok) }
        r.accept("the signed items were never verified")
        XCTAssertFalse(r.isValid)
        XCTAssertEqual(r.action, .reject)
        r.refuse(.items, .signatureInvalid, "an item is forged")
        r.gate.mark(.items, .ok)
        r.accept("every check ran, one failed")
        XCTAssertEqual(r.verdict, .signatureInvalid)
        XCTAssertEqual(r.action, .reject)
    }

    func testAJWSWithACheckNotRunIsNotValid() {
        var r = JWSReport()
        for check in JWSCheck.allCases where check != .signer { r.gate.mark(check, .ok) }
        XCTAssertFalse(r.gate.pass("the signer was never checked"))
        XCTAssertFalse(r.isValid)
        r.fail(.signer, .signatureInvalid, "forged")
        XCTAssertFalse(r.gate.pass("every check ran, one failed"))
        XCTAssertEqual(r.verdict, .signatureInvalid)
    }

    // MARK: - Real inputs: a valid answer ran every required check

    func testAValidJWSRanEveryCheck() throws {
        let v = try XCTUnwrap(FakeApple.verifier())
        let r = try verifyJWS(v, FakeApple.sign(FakeApple.transaction("7")), now: FakeApple.now)
        XCTAssertTrue(r.isValid, r.judgement.reason)
        allRan(r.gate)
        XCTAssertEqual(r.gate.state(.nested), .skipped, "only a notification carries nested tokens")
    }

    func testARefusedJWSNamesTheCheckThatFailed() throws {
        let v = try XCTUnwrap(FakeApple.verifier(["bundle_id": "com.example.other"]))
        let r = try verifyJWS(v, FakeApple.sign(FakeApple.transaction("7")), now: FakeApple.now)
        XCTAssertEqual(r.verdict, .bundleMismatch)
        XCTAssertEqual(r.gate.state(.environment), .ok)
        XCTAssertEqual(r.gate.state(.bundle), .failed)
        XCTAssertEqual(r.gate.state(.appAppleID), .notRun)
    }

    func testAValidAPIAnswerRanEveryCheck() throws {
        let v = try XCTUnwrap(FakeApple.verifier())
        let page = FakeApple.history([FakeApple.transaction("1")])
        let r = try v.interpretAPIResponse(page, options: apiOptions("transaction_history", status: 200), nowMs: FakeApple.now)
        XCTAssertTrue(r.isValid, r.judgement.reason)
        allRan(r.gate)
    }

    func testAValidDirectInputRanEveryCheck() {
        let input = Array(#"{"transactions": [], "renewal_info": []}"#.utf8)
        let r = input.withUnsafeBytes {
            EntitlementInputChecker(engine: EngineSettings(catalog: nil, grace: .honor)).compute($0, host: EntitlementOptions(), nowMs: 0)
        }
        XCTAssertTrue(r.isValid, r.judgement.reason)
        allRan(r.gate)
        let bad = Array(#"{"transactions": [{}]}"#.utf8).withUnsafeBytes {
            EntitlementInputChecker(engine: EngineSettings(catalog: nil, grace: .honor)).compute($0, host: EntitlementOptions(), nowMs: 0)
        }
        XCTAssertEqual(bad.verdict, .malformed)
        XCTAssertEqual(bad.gate.state(.shape), .ok)
        XCTAssertEqual(bad.gate.state(.records), .failed)
    }

    /// Every entry point runs the same app rules in the same order: one list.
    func testTheAppRulesRunInOneOrder() {
        XCTAssertEqual(AppRule.allCases, [.environment, .bundle, .appAppleID])
        XCTAssertEqual(ReceiptPolicies.all.prefix(2).map(\.check), [.environment, .bundleID])
        XCTAssertEqual(JWSCheck.allCases.filter { [.environment, .bundle, .appAppleID].contains($0) }, AppRule.allCases.map(JWSCheck.init))
        XCTAssertEqual(ResponseCheck.allCases.suffix(3), AppRule.allCases.map(ResponseCheck.init)[...])
    }
}
