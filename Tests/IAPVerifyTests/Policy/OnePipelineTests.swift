// One fail-closed pipeline: every entry point starts undecided (a report nobody decided grants
// nothing), and applies the app policies in one order (environment, then bundle), so an input
// that fails both gets the same verdict whichever entry point reads it.

import Foundation
import XCTest
@_spi(Testing) @testable import IAPVerify

final class OnePipelineTests: XCTestCase {
    func testAReportNobodyDecidedIsNotValid() {
        let response = ResponseReport(undecidedStatus: 0)
        XCTAssertFalse(response.isValid)
        XCTAssertEqual(response.action, .reject)
        XCTAssertTrue(response.judgement.isUndecided)
        let api = APIResponseReport(options: apiOptions("transaction_history", status: 200), endpoint: .transactionHistory)
        XCTAssertFalse(api.isValid)
        XCTAssertEqual(api.action, .reject)
        XCTAssertTrue(api.judgement.isUndecided)
        XCTAssertFalse(JWSReport().isValid)
        XCTAssertTrue(JWSReport().judgement.isUndecided)
    }

    /// A sandbox purchase of another app, read by a verifier for com.other.app in Production only.
    func testAnInputFailingEnvironmentAndBundleGetsTheSameVerdictEverywhere() throws {
        let strict: [String: Any] = ["bundle_id": "com.other.app", "environments": ["Production"]]

        // A receipt (the fake PKI's sandbox receipt of com.example.fake).
        let receiptVerifier = try makeVerifierOrThrow(strict.merging(
            ["trust": ["roots_pem": [Fixtures.fakeRootPEM], "include_apple_roots": false]]) { $1 })
        let receipt = try receiptVerifier.verify(Fixtures.data("fakepki/sandbox_rejected.der"), now: 1705399200000)

        // A /verifyReceipt answer (Sandbox, com.test.app).
        let body = Fixtures.data("verifyreceipt/alexalok_Valid_Sandbox_Consumable_And_Active_Subscription_Excluding_Old_Transactions.json")
        let response = try interpret(try makeVerifierOrThrow(strict), body, now: 1608230700000, ["endpoint": "sandbox"])

        // A StoreKit 2 transaction (Sandbox, another app).
        let jws = try verifyJWS(try makeVerifierOrThrow(strict),
                                Fixtures.text("jws/transaction_autorenew_sandbox_2022-11.jws").trimmingCharacters(in: .whitespacesAndNewlines),
                                now: jan2030)

        // An App Store Server API answer that says Sandbox, for com.example.fake, from the production host.
        let apiVerifier = try XCTUnwrap(FakeApple.verifier(["bundle_id": "com.other.app"], environments: ["Production"]))
        let page = FakeApple.history([FakeApple.transaction("1", environment: "Sandbox")], environment: "Sandbox")
        let api = try apiVerifier.interpretAPIResponse(page, options: apiOptions("transaction_history", status: 200), nowMs: FakeApple.now)

        let verdicts = ["receipt": receipt.verdict, "response": response.verdict, "jws": jws.verdict, "api": api.verdict]
        XCTAssertEqual(Set(verdicts.values), [.environmentRejected], "\(verdicts)")
    }
}
