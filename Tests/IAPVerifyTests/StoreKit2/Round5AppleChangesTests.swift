// Apple's 2026 additions and the rules decided with them: an external purchase token's type and
// expiry, offerType 5 (retention), Advanced Commerce's dependentSKUs, one whitespace rule for a
// compact JWS, a signed date after now that orders nothing, and bundle_id "*" said in the reason.

import Foundation
import XCTest
@_spi(Testing) @testable import IAPVerify

final class Round5AppleChangesTests: XCTestCase {
    private typealias N = NotificationEffectTests
    private let day: Int64 = 86_400_000

    private func verify(_ token: String, now: Int64 = FakeApple.now, _ opts: [String: Any] = [:],
                        config: [String: Any] = ["app_apple_id": 1]) throws -> JWSReport {
        let v = try XCTUnwrap(FakeApple.verifier(config))
        return try verifyJWS(v, token, now: now, opts)
    }

    private func externalToken(_ token: [String: Any], subtype: String) -> String {
        var scope: [String: Any] = ["bundleId": FakeApple.bundle, "appAppleId": 1, "externalPurchaseId": "e-1",
                                    "tokenCreationDate": FakeApple.signedDate]
        for (k, v) in token { scope[k] = v }
        return FakeApple.sign(["notificationType": "EXTERNAL_PURCHASE_TOKEN", "subtype": subtype, "notificationUUID": "u-\(subtype)",
                               "signedDate": FakeApple.signedDate, "version": "2.0", "externalPurchaseToken": scope])
    }

    func testAnExternalPurchaseTokenCarriesItsTypeAndExpiry() throws {
        for subtype in ["UNREPORTED", "ACTIVE_TOKEN_REMINDER", "CREATED"] {
            let r = try verify(externalToken(["tokenType": "SERVICES", "tokenExpirationDate": FakeApple.signedDate + 30 * day], subtype: subtype))
            XCTAssertEqual(r.verdict, .valid, r.judgement.reason)
            XCTAssertEqual(r.notification?.effect, .externalPurchaseToken)
            let token = try XCTUnwrap((resultDict(r.resultJSON())["notification"] as? [String: Any])?["external_purchase_token"] as? [String: Any])
            XCTAssertEqual(token["token_type"] as? String, "SERVICES")
            XCTAssertEqual(token["token_expiration_date_ms"] as? Int64, FakeApple.signedDate + 30 * day)
            XCTAssertEqual(token["external_purchase_id"] as? String, "e-1")
            XCTAssertEqual(token["token_creation_date_ms"] as? Int64, FakeApple.signedDate)
        }
    }

    func testATokenTypeAppleHasNotDocumentedIsKeptAsGiven() throws {
        let r = try verify(externalToken(["tokenType": "SOMETHING_NEW"], subtype: "CREATED"))
        XCTAssertEqual(r.verdict, .valid, r.judgement.reason)
        XCTAssertEqual(r.notification?.externalPurchaseToken?.tokenType, "SOMETHING_NEW")
        XCTAssertNil(r.notification?.externalPurchaseToken?.tokenExpirationDateMs)
    }

    func testOtherNotificationsCarryNoExternalToken() throws {
        let t = N.txn("9001", purchase: FakeApple.signedDate, expires: FakeApple.signedDate + 30 * day, signed: FakeApple.signedDate)
        let r = try verify(N.notification("DID_RENEW", nil, signed: FakeApple.signedDate, transaction: t, renewal: nil, uuid: "u1"))
        XCTAssertEqual(r.verdict, .valid, r.judgement.reason)
        XCTAssertNil((resultDict(r.resultJSON())["notification"] as? [String: Any])?["external_purchase_token"])
    }

    func testOfferTypesAreNamedInTheEvidenceAndUnknownOnesPassAsNumbers() throws {
        for (type, name) in [(1, "introductory"), (4, "win_back"), (5, "retention"), (9, "unknown")] {
            let r = try verify(FakeApple.sign(FakeApple.transaction("1", extra: ["offerType": type, "offerIdentifier": "keep"])), config: [:])
            XCTAssertEqual(r.verdict, .valid, r.judgement.reason)
            XCTAssertEqual(r.transaction?.commerce.offerType, Int64(type))
            let json = resultDict(r.resultJSON())
            XCTAssertEqual((json["transaction"] as? [String: Any])?["offer_type"] as? Int, type)
            let evidence = try XCTUnwrap(((json["entitlements"] as? [[String: Any]])?.first)?["evidence"] as? [String: Any])
            XCTAssertEqual(evidence["offer_type"] as? Int, type)
            XCTAssertEqual(evidence["offer"] as? String, name)
        }
        XCTAssertEqual(OfferType(rawValue: 5), .retention)
    }

    func testDependentSKUsOfAPriceIncreaseAreKept() throws {
        var renewal = FakeApple.renewal()
        renewal["advancedCommerceInfo"] = ["period": "P1M", "items": [["SKU": "a", "price": 1000,
            "priceIncreaseInfo": ["status": "SCHEDULED", "price": 1200, "dependentSKUs": ["b", "c"]]]]]
        let r = try verify(FakeApple.sign(renewal), config: [:])
        XCTAssertEqual(r.verdict, .valid, r.judgement.reason)
        XCTAssertEqual(r.renewal?.commerce.advancedCommerce?.items.first?.priceIncreaseDependentSKUs, ["b", "c"])
        let ac = (resultDict(r.resultJSON())["renewal_info"] as? [String: Any])?["advanced_commerce"] as? [String: Any]
        let increase = ((ac?["items"] as? [[String: Any]])?.first?["price_increase"] as? [String: Any])
        XCTAssertEqual(increase?["dependent_skus"] as? [String], ["b", "c"])
    }

    func testWhitespaceAroundAJWSIsNotPartOfItAndInsideItIsMalformed() throws {
        let token = FakeApple.sign(FakeApple.transaction("1"))
        for wrapped in [token + "\n", "  " + token + "\r\n", "\t" + token] {
            XCTAssertEqual(try verify(wrapped, config: [:]).verdict, .valid)
        }
        let parts = token.split(separator: ".")
        let inside = parts[0] + ".\n" + parts[1] + "." + parts[2]
        XCTAssertEqual(try verify(String(inside), config: [:]).verdict, .malformed)
        XCTAssertEqual(try verify(" \n ", config: [:]).verdict, .malformed)
    }

    func testAFutureSignedNotificationNeverMakesALaterGenuineOneStale() throws {
        let t0 = FakeApple.signedDate
        let future = t0 + 3650 * day
        // The host applied a notification Apple dated ten years ahead and kept its date as its last.
        let refund = N.txn("9001", purchase: t0 - day, expires: t0 + 29 * day, signed: t0,
                           extra: ["revocationDate": t0, "revocationReason": 0, "revocationType": "REFUND_FULL"])
        let r = try verify(N.notification("REFUND", nil, signed: t0, transaction: refund, renewal: nil, uuid: "r1"),
                           now: t0 + 60_000, ["last_signed_date_ms": future])
        XCTAssertEqual(r.verdict, .valid, r.judgement.reason)
        XCTAssertEqual(r.notification?.action, .apply, "a last date after now orders nothing")
        XCTAssertEqual(r.entitlements?.entitlements.first?.active, false)
        // A last date within the skew still orders.
        let stale = try verify(N.notification("REFUND", nil, signed: t0, transaction: refund, renewal: nil, uuid: "r2"),
                               now: t0 + 60_000, ["last_signed_date_ms": t0 + 30_000])
        XCTAssertEqual(stale.notification?.action, .ignoreStale)
    }

    func testAFutureSignedStatementNeverWinsOverAGenuineOne() {
        let now: Int64 = 1_000_000_000_000
        var genuine = Transaction(id: IDText("1"), productID: "p")
        genuine.commerce.signedDateMs = now - 1000
        genuine.cancellationDateMs = now - 2000
        var future = Transaction(id: IDText("1"), productID: "p")
        future.commerce.signedDateMs = now + 3650 * day
        XCTAssertFalse(Transaction.prefersSecond(genuine, future, nowMs: now), "the revoking record stands")
        XCTAssertTrue(Transaction.prefersSecond(future, genuine, nowMs: now))
        future.commerce.signedDateMs = now + 1000
        XCTAssertTrue(Transaction.prefersSecond(genuine, future, nowMs: now), "within the skew, the later statement wins")
    }

    func testAnyAppIsSaidInEveryValidReason() throws {
        let jws = try verify(FakeApple.sign(FakeApple.transaction("1")), config: ["bundle_id": "*"])
        XCTAssertEqual(jws.verdict, .valid, jws.judgement.reason)
        XCTAssertTrue(jws.judgement.reason.hasSuffix("(bundle id not checked: the config accepts any app)"), jws.judgement.reason)
        let checked = try verify(FakeApple.sign(FakeApple.transaction("1")), config: [:])
        XCTAssertFalse(checked.judgement.reason.contains("not checked"), checked.judgement.reason)
    }

    func testAConfigTypoGetsTheNearestKey() {
        XCTAssertTrue(configError(#"{"bundle_id":"a","environment":["Sandbox"]}"#)?.message.contains(#"did you mean "environments"?"#) == true)
        XCTAssertTrue(configError(#"{"bundle_id":"a","trust":{"roots_pm":[]}}"#)?.message.contains(#"did you mean "roots_pem"?"#) == true)
        XCTAssertTrue(configError(#"{"bundle_id":"a","products":{"p":{"typ":"consumable"}}}"#)?.message.contains(#"did you mean "type"?"#) == true)
        XCTAssertEqual(configError(#"{"bundle_id":"a","zzz":1}"#)?.message, #"config: unknown key "zzz""#)
    }
}
