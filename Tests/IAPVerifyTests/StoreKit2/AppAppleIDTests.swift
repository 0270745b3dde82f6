// The app rule: a notification names the Apple ID of its app; the config's app_apple_id must
// match, and a Production notification that names one is refused until it is configured.

import XCTest
@_spi(Testing) @testable import IAPVerify

final class AppAppleIDTests: XCTestCase {
    func notification(environment: String, appAppleID: Int?) -> String {
        var data: [String: Any] = ["bundleId": FakeApple.bundle, "environment": environment,
                                   "signedTransactionInfo": FakeApple.sign(FakeApple.transaction("1", environment: environment))]
        if let appAppleID { data["appAppleId"] = appAppleID }
        return FakeApple.sign(["notificationType": "DID_RENEW", "notificationUUID": "n-\(environment)-\(appAppleID ?? 0)",
                               "signedDate": FakeApple.signedDate, "version": "2.0", "data": data])
    }

    func verdict(_ config: [String: Any], _ token: String) throws -> (Verdict, String) {
        let v = try XCTUnwrap(FakeApple.verifier(config))
        let r = try verifyJWS(v, token, now: FakeApple.now)
        return (r.verdict, r.judgement.reason)
    }

    func testProductionNeedsTheAppAppleIDConfiguredAndMatching() throws {
        let token = notification(environment: "Production", appAppleID: 1234)
        let unset = try verdict([:], token)
        XCTAssertEqual(unset.0, .bundleMismatch)
        XCTAssertTrue(unset.1.contains("set app_apple_id"), unset.1)
        XCTAssertEqual(try verdict(["app_apple_id": 1234], token).0, .valid)
        let other = try verdict(["app_apple_id": 99], token)
        XCTAssertEqual(other.0, .bundleMismatch)
        XCTAssertTrue(other.1.contains("1234") && other.1.contains("99"), other.1)
        XCTAssertEqual(try verdict(["bundle_id": "*"], token).0, .valid, "any app: not checked")
    }

    func testSandboxIsCheckedOnlyWhenConfigured() throws {
        let token = notification(environment: "Sandbox", appAppleID: 1234)
        XCTAssertEqual(try verdict([:], token).0, .valid)
        XCTAssertEqual(try verdict(["app_apple_id": 1234], token).0, .valid)
        XCTAssertEqual(try verdict(["app_apple_id": 5], token).0, .bundleMismatch)
    }

    func testAPayloadWithoutAnAppIDIsNotAffected() throws {
        XCTAssertEqual(try verdict(["app_apple_id": 5], notification(environment: "Production", appAppleID: nil)).0, .valid)
    }

    func testTheConfigRefusesAnIDThatIsNotAPositiveInteger() {
        for bad: Any in [0, -1, "1234", 1.5] {
            let config: [String: Any] = ["bundle_id": "com.example.app", "app_apple_id": bad]
            let json = try! JSONSerialization.data(withJSONObject: config)
            XCTAssertThrowsError(try json.withUnsafeBytes { raw throws(IAPVFailure) in try VerifierConfig(json: raw) }, "\(bad)")
        }
    }
}
