// Every signed payload, known kind or not, passes the environment, bundle and app-id rules before
// it can be valid. Before this rule, a realtime request or a payload of an unknown
// shape signed for another app came back valid.

import XCTest
@_spi(Testing) @testable import IAPVerify

final class EveryKindAppRuleTests: XCTestCase {
    static let requestID = "6a0b7d2c-4f7e-4a83-9d59-1f0f3c2a5b10"

    func realtime(appAppleID: Int = 1234, environment: String = "Production", signedDate: Int64 = FakeApple.signedDate,
                  requestIdentifier: String = requestID) -> String {
        FakeApple.sign(["appAppleId": appAppleID, "environment": environment, "originalTransactionId": "1000",
                        "productId": "pro.monthly", "userLocale": "en-US", "requestIdentifier": requestIdentifier,
                        "signedDate": signedDate])
    }

    func check(_ config: [String: Any], _ token: String, _ opts: [String: Any] = [:],
               now: Int64 = FakeApple.signedDate + 1_000) throws -> JWSReport {
        let v = try XCTUnwrap(FakeApple.verifier(config))
        return try verifyJWS(v, token, now: now, opts)
    }

    func testARealtimeRequestForAnotherAppIsRefused() throws {
        let other = try check(["app_apple_id": 99], realtime(appAppleID: 1234))
        XCTAssertEqual(other.verdict, .bundleMismatch, other.judgement.reason)
        XCTAssertEqual(other.kind, .realtimeRequest)
        let json = String(decoding: other.resultJSON(), as: UTF8.self)
        XCTAssertTrue(json.contains("\"action\":\"reject\""), json)
    }

    func testARealtimeRequestForThisAppIsValidWithItsFields() throws {
        let r = try check(["app_apple_id": 1234], realtime())
        XCTAssertEqual(r.verdict, .valid, r.judgement.reason)
        XCTAssertEqual(r.kind, .realtimeRequest)
        let request = try XCTUnwrap(r.realtime)
        XCTAssertEqual(request.originalTransactionID, "1000")
        XCTAssertEqual(request.productID, "pro.monthly")
        XCTAssertEqual(request.userLocale, "en-US")
        XCTAssertEqual(request.requestIdentifier, Self.requestID)
        XCTAssertEqual(request.appAppleID, 1234)
        XCTAssertEqual(request.action, .respond)
        XCTAssertTrue(r.entitlements?.entitlements.isEmpty ?? true, "a realtime request grants nothing")
    }

    func testARealtimeRequestThatCannotBeCheckedNeedsItsKindNamed() throws {
        // Sandbox, no app_apple_id configured: the app id is not checked.
        let unchecked = try check([:], realtime(environment: "Sandbox"))
        XCTAssertEqual(unchecked.verdict, .malformed, unchecked.judgement.reason)
        XCTAssertTrue(unchecked.judgement.reason.contains("app_apple_id"), unchecked.judgement.reason)
        // Production without app_apple_id: the rule Apple's verifier applies refuses it.
        XCTAssertEqual(try check([:], realtime()).verdict, .bundleMismatch)
        let named = try check([:], realtime(environment: "Sandbox"), ["kind": "realtime_request"])
        XCTAssertEqual(named.verdict, .valid, named.judgement.reason)
    }

    func testDuplicateAndStaleRealtimeRequestsAreToldApart() throws {
        let config: [String: Any] = ["app_apple_id": 1234]
        let seen = try check(config, realtime(), ["seen_request_identifiers": [Self.requestID]])
        XCTAssertEqual(seen.verdict, .valid)
        XCTAssertEqual(seen.realtime?.action, .ignoreDuplicate)
        let old = try check(config, realtime(), now: FakeApple.signedDate + 301_000)
        XCTAssertEqual(old.realtime?.action, .ignoreStale)
        let allowed = try check(config, realtime(), ["max_age_ms": 600_000], now: FakeApple.signedDate + 301_000)
        XCTAssertEqual(allowed.realtime?.action, .respond)
        let future = try check(config, realtime(signedDate: FakeApple.signedDate + 120_000))
        XCTAssertEqual(future.realtime?.action, .ignoreStale)
    }

    func testAnUnknownShapeWithAnotherAppsBundleIsRefused() throws {
        // Shaped like nothing this library models, but naming a bundle.
        let token = FakeApple.sign(["bundleId": "com.other.app", "environment": "Production", "signedDate": FakeApple.signedDate,
                                    "productId": "pro.monthly", "purchaseDate": FakeApple.signedDate])
        let r = try check([:], token)
        XCTAssertEqual(r.verdict, .bundleMismatch, r.judgement.reason)
        XCTAssertEqual(r.kind, .unknown)
        let mine = FakeApple.sign(["bundleId": FakeApple.bundle, "environment": "Production", "signedDate": FakeApple.signedDate])
        let ok = try check([:], mine)
        XCTAssertEqual(ok.verdict, .valid, ok.judgement.reason)
        XCTAssertEqual(ok.kind, .unknown)
        XCTAssertNil(ok.transaction)
        let json = String(decoding: ok.resultJSON(), as: UTF8.self)
        XCTAssertTrue(json.contains("\"kind\":\"unknown\""), json)
    }

    func testAnUnknownShapeThatNamesNoAppIsNotValid() throws {
        let token = FakeApple.sign(["environment": "Production", "signedDate": FakeApple.signedDate, "hello": "world"])
        let r = try check([:], token)
        XCTAssertEqual(r.verdict, .malformed, r.judgement.reason)
        // Any app ("*") checks nothing, so an unknown kind is still not valid.
        let any = FakeApple.sign(["bundleId": "com.other.app", "environment": "Production", "signedDate": FakeApple.signedDate])
        XCTAssertEqual(try check(["bundle_id": "*"], any).verdict, .malformed)
    }

    func testAnUnknownShapeForAnotherAppByAppleIDIsRefused() throws {
        let token = FakeApple.sign(["appAppleId": 1234, "environment": "Sandbox", "signedDate": FakeApple.signedDate])
        XCTAssertEqual(try check(["app_apple_id": 99], token).verdict, .bundleMismatch)
        XCTAssertEqual(try check(["app_apple_id": 1234], token).verdict, .valid)
    }

    func testTheExpectedKindIsEnforced() throws {
        let txn = FakeApple.sign(FakeApple.transaction("1"))
        let r = try check([:], txn, ["kind": "renewal_info"])
        XCTAssertEqual(r.verdict, .malformed)
        XCTAssertTrue(r.judgement.reason.contains("not a renewal info"), r.judgement.reason)
        XCTAssertEqual(try check([:], txn, ["kind": "transaction"]).verdict, .valid)
        XCTAssertThrowsError(try check([:], txn, ["kind": "unknown"]))
    }

    // External purchase tokens: Sandbox when externalPurchaseId starts with SANDBOX.
    func externalToken(_ id: String) -> String {
        FakeApple.sign(["notificationType": "EXTERNAL_PURCHASE_TOKEN", "subtype": "UNREPORTED", "version": "2.0",
                        "notificationUUID": "ext-\(id)", "signedDate": FakeApple.signedDate,
                        "externalPurchaseToken": ["externalPurchaseId": id, "tokenCreationDate": FakeApple.signedDate,
                                                  "appAppleId": 1234, "bundleId": FakeApple.bundle]])
    }

    func testExternalPurchaseTokensReadTheirEnvironmentFromTheID() throws {
        let sandbox = externalToken("SANDBOX_b2f3a0e8-5f0c-4bd5-9a51-0f3a6c4a9d21")
        let production = externalToken("b2f3a0e8-5f0c-4bd5-9a51-0f3a6c4a9d21")
        let prodOnly: [String: Any] = ["environments": ["Production"], "app_apple_id": 1234]
        let sandboxOnly: [String: Any] = ["environments": ["Sandbox"], "app_apple_id": 1234]
        let a = try check(prodOnly, sandbox)
        XCTAssertEqual(a.verdict, .environmentRejected, a.judgement.reason)
        let b = try check(sandboxOnly, sandbox)
        XCTAssertEqual(b.verdict, .valid, b.judgement.reason)
        XCTAssertEqual(b.environment, .sandbox)
        XCTAssertEqual(try check(prodOnly, production).verdict, .valid)
        XCTAssertEqual(try check(sandboxOnly, production).verdict, .environmentRejected)
    }

    // A consent change carries the app transaction signed inside: verified like the outer token.
    func consent(appTransactionBundle: String) -> String {
        let app = FakeApple.sign(["bundleId": appTransactionBundle, "receiptType": "Production", "appAppleId": 1234,
                                  "applicationVersion": "1", "originalApplicationVersion": "1",
                                  "receiptCreationDate": FakeApple.signedDate, "signedDate": FakeApple.signedDate])
        return FakeApple.sign(["notificationType": "RESCIND_CONSENT", "version": "2.0", "notificationUUID": "rc-\(appTransactionBundle)",
                               "signedDate": FakeApple.signedDate,
                               "appData": ["appAppleId": 1234, "bundleId": FakeApple.bundle, "environment": "Production",
                                           "signedAppTransactionInfo": app]])
    }

    func testAConsentChangesAppTransactionIsVerifiedAndReturned() throws {
        let r = try check(["app_apple_id": 1234], consent(appTransactionBundle: FakeApple.bundle))
        XCTAssertEqual(r.verdict, .valid, r.judgement.reason)
        let app = try XCTUnwrap(r.notification?.appTransactionJSON)
        let payload = try JSONSerialization.jsonObject(with: Data(app)) as! [String: Any]
        XCTAssertEqual(payload["applicationVersion"] as? String, "1")
        let json = resultDict(r.resultJSON())
        XCTAssertEqual(((json["notification"] as? [String: Any])?["app_transaction"] as? [String: Any])?["bundleId"] as? String, FakeApple.bundle)
        let foreign = try check(["app_apple_id": 1234], consent(appTransactionBundle: "com.other.app"))
        XCTAssertEqual(foreign.verdict, .bundleMismatch, foreign.judgement.reason)
        XCTAssertTrue(foreign.judgement.reason.hasPrefix("appData.signedAppTransactionInfo"), foreign.judgement.reason)
    }

    func testNestedTransactionsCarryTheirBundle() throws {
        let note = FakeApple.sign(["notificationType": "DID_RENEW", "notificationUUID": "n-bundle", "version": "2.0",
                                   "signedDate": FakeApple.signedDate,
                                   "data": ["bundleId": FakeApple.bundle, "environment": "Production", "appAppleId": 1234,
                                            "signedTransactionInfo": FakeApple.sign(FakeApple.transaction("1"))]])
        let r = try check(["app_apple_id": 1234], note)
        XCTAssertEqual(r.verdict, .valid, r.judgement.reason)
        XCTAssertEqual(r.notification?.transaction?.commerce.bundleID, FakeApple.bundle)
        let json = resultDict(r.resultJSON())
        let txn = (json["notification"] as? [String: Any])?["transaction"] as? [String: Any]
        XCTAssertEqual(txn?["bundle_id"] as? String, FakeApple.bundle)
    }

    /// LocalTesting is its own environment, as Apple spells it: signed by a local certificate like
    /// Xcode's (the same opt-in), but a verifier for one refuses the other.
    func testLocalTestingIsItsOwnEnvironment() throws {
        let local: [String: Any] = ["environments": ["LocalTesting"], "xcode": ["accept": true, "roots_pem": [FakeApple.text("root.pem")]]]
        let token = FakeApple.sign(FakeApple.transaction("1", environment: "LocalTesting"))
        let r = try check(local, token)
        XCTAssertEqual(r.verdict, .valid, r.judgement.reason)
        XCTAssertEqual(r.environment, .localTesting)
        XCTAssertEqual(resultDict(r.resultJSON())["environment"] as? String, "LocalTesting")
        let xcodeToken = FakeApple.sign(FakeApple.transaction("1", environment: "Xcode"))
        XCTAssertEqual(try check(local, xcodeToken).verdict, .environmentRejected)
        let xcodeOnly: [String: Any] = ["environments": ["Xcode"], "xcode": ["accept": true, "roots_pem": [FakeApple.text("root.pem")]]]
        XCTAssertEqual(try check(xcodeOnly, token).verdict, .environmentRejected)
        let notAccepted = try check(["environments": ["LocalTesting"]], token)
        XCTAssertEqual(notAccepted.verdict, .environmentRejected)
        XCTAssertTrue(notAccepted.judgement.reason.contains("xcode.accept"), notAccepted.judgement.reason)
    }
}
