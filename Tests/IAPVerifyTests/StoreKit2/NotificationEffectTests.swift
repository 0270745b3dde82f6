// Every App Store Server Notification V2 type and subtype: its effect, the action it asks of the
// host, and what it does to access. Then a subscription's whole life told by notifications,
// applied in order and shuffled with duplicates: the final state is the same.

import Foundation
import XCTest
@_spi(Testing) @testable import IAPVerify

final class NotificationEffectTests: XCTestCase {
    static let day: Int64 = 86_400_000
    static let t0 = FakeApple.signedDate

    /// A notification signed by the fake Apple, carrying a transaction and a renewal info.
    static func notification(_ type: String, _ subtype: String?, signed: Int64, transaction: [String: Any]?,
                             renewal: [String: Any]?, uuid: String, scope: String = "data") -> String {
        var data: [String: Any] = ["bundleId": FakeApple.bundle, "environment": "Production", "appAppleId": 1]
        if let transaction { data["signedTransactionInfo"] = FakeApple.sign(transaction) }
        if let renewal { data["signedRenewalInfo"] = FakeApple.sign(renewal) }
        if scope == "externalPurchaseToken" {
            data = ["bundleId": FakeApple.bundle, "appAppleId": 1, "externalPurchaseId": "e-1", "tokenCreationDate": signed]
        }
        var payload: [String: Any] = ["notificationType": type, "notificationUUID": uuid, "signedDate": signed, "version": "2.0",
                                      scope: data]
        if let subtype { payload["subtype"] = subtype }
        return FakeApple.sign(payload)
    }

    static func txn(_ id: String, purchase: Int64, expires: Int64, signed: Int64, extra: [String: Any] = [:]) -> [String: Any] {
        var t = FakeApple.transaction(id, original: "9000", expires: expires, extra: extra)
        t["purchaseDate"] = purchase
        t["signedDate"] = signed
        return t
    }

    static func renewal(signed: Int64, extra: [String: Any] = [:]) -> [String: Any] {
        var r = FakeApple.renewal(original: "9000", extra: extra)
        r["signedDate"] = signed
        return r
    }

    private func verify(_ token: String, now: Int64, options: JWSOptions = JWSOptions()) throws -> JWSReport {
        let v = try XCTUnwrap(FakeApple.verifier(["app_apple_id": 1]))   // the app these notifications name
        return try v.verifyJWS(Array(token.utf8), options: options, nowMs: now)
    }

    func testEveryTypeAndSubtype() throws {
        let t = Self.txn("9001", purchase: Self.t0, expires: Self.t0 + 30 * Self.day, signed: Self.t0)
        let r = Self.renewal(signed: Self.t0)
        let cases: [(String, String?, NotificationEffect, NotificationAction, String)] = [
            ("SUBSCRIBED", "INITIAL_BUY", .subscriptionStarted, .apply, "data"),
            ("SUBSCRIBED", "RESUBSCRIBE", .subscriptionResumed, .apply, "data"),
            ("DID_RENEW", nil, .renewed, .apply, "data"),
            ("DID_RENEW", "BILLING_RECOVERY", .billingRecovered, .apply, "data"),
            ("DID_CHANGE_RENEWAL_PREF", "UPGRADE", .upgraded, .apply, "data"),
            ("DID_CHANGE_RENEWAL_PREF", "DOWNGRADE", .downgradeScheduled, .apply, "data"),
            ("DID_CHANGE_RENEWAL_PREF", nil, .downgradeCancelled, .apply, "data"),
            ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED", .autoRenewEnabled, .apply, "data"),
            ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", .autoRenewDisabled, .apply, "data"),
            ("OFFER_REDEEMED", "UPGRADE", .offerRedeemed, .apply, "data"),
            ("OFFER_REDEEMED", "DOWNGRADE", .offerRedeemed, .apply, "data"),
            ("OFFER_REDEEMED", nil, .offerRedeemed, .apply, "data"),
            ("DID_FAIL_TO_RENEW", "GRACE_PERIOD", .gracePeriodStarted, .apply, "data"),
            ("DID_FAIL_TO_RENEW", nil, .billingRetryStarted, .apply, "data"),
            ("GRACE_PERIOD_EXPIRED", nil, .gracePeriodEnded, .apply, "data"),
            ("EXPIRED", "VOLUNTARY", .expired, .apply, "data"),
            ("EXPIRED", "BILLING_RETRY", .expired, .apply, "data"),
            ("EXPIRED", "PRICE_INCREASE", .expired, .apply, "data"),
            ("EXPIRED", "PRODUCT_NOT_FOR_SALE", .expired, .apply, "data"),
            ("EXPIRED", nil, .expired, .apply, "data"),
            ("PRICE_INCREASE", "PENDING", .priceIncreasePending, .apply, "data"),
            ("PRICE_INCREASE", "ACCEPTED", .priceIncreaseAccepted, .apply, "data"),
            ("REFUND", nil, .refunded, .apply, "data"),
            ("REFUND_DECLINED", nil, .refundDeclined, .apply, "data"),
            ("REFUND_REVERSED", nil, .refundReversed, .apply, "data"),
            ("REVOKE", nil, .revoked, .apply, "data"),
            ("RENEWAL_EXTENDED", nil, .renewalExtended, .apply, "data"),
            ("RENEWAL_EXTENSION", "SUMMARY", .renewalExtensionSummary, .apply, "summary"),
            ("RENEWAL_EXTENSION", "FAILURE", .renewalExtensionFailed, .apply, "data"),
            ("CONSUMPTION_REQUEST", nil, .consumptionInfoRequested, .sendConsumptionInfo, "data"),
            ("ONE_TIME_CHARGE", nil, .oneTimePurchase, .apply, "data"),
            ("EXTERNAL_PURCHASE_TOKEN", "UNREPORTED", .externalPurchaseToken, .apply, "externalPurchaseToken"),
            ("EXTERNAL_PURCHASE_TOKEN", "ACTIVE_TOKEN_REMINDER", .externalPurchaseToken, .apply, "externalPurchaseToken"),
            ("EXTERNAL_PURCHASE_TOKEN", "CREATED", .externalPurchaseToken, .apply, "externalPurchaseToken"),
            ("METADATA_UPDATE", nil, .metadataUpdated, .apply, "data"),
            ("MIGRATION", nil, .migrated, .apply, "data"),
            ("PRICE_CHANGE", nil, .priceChanged, .apply, "data"),
            ("RESCIND_CONSENT", nil, .consentRescinded, .apply, "appData"),
            ("TEST", nil, .test, .apply, "data"),
            ("A_TYPE_FROM_2030", nil, .unknown, .recordOnly, "data"),
            ("DID_RENEW", "A_SUBTYPE_FROM_2030", .unknown, .recordOnly, "data"),
        ]
        var seen = Set<NotificationEffect>()
        for (i, (type, subtype, effect, action, scope)) in cases.enumerated() {
            let carries = scope == "data"
            let token = Self.notification(type, subtype, signed: Self.t0, transaction: carries ? t : nil, renewal: carries ? r : nil,
                                          uuid: "u-\(i)", scope: scope)
            let report = try verify(token, now: Self.t0 + Self.day)
            XCTAssertEqual(report.verdict, .valid, "\(type) \(subtype ?? "-"): \(report.judgement.reason)")
            XCTAssertEqual(report.notification?.effect, effect, "\(type) \(subtype ?? "-")")
            XCTAssertEqual(report.notification?.action, action, "\(type) \(subtype ?? "-")")
            let doc = resultDict(report.resultJSON())
            let n = doc["notification"] as? [String: Any]
            XCTAssertEqual(n?["effect"] as? String, effect.rawValue)
            XCTAssertEqual(n?["action"] as? String, action.rawValue)
            let active = (doc["entitlements"] as? [[String: Any]])?.filter { $0["active"] as? Bool == true }.count
            // An unknown type or subtype is kept as data and changes nothing.
            XCTAssertEqual(active, effect == .unknown || !carries ? 0 : 1, "\(type) \(subtype ?? "-")")
            seen.insert(effect)
        }
        XCTAssertEqual(seen, Set(NotificationEffect.allCases), "every effect has a case")
    }

    func testWhatEachChangeDoesToAccess() throws {
        let now = Self.t0 + 10 * Self.day
        func entitlement(_ type: String, _ subtype: String?, _ t: [String: Any], _ r: [String: Any]) throws -> Entitlement? {
            try verify(Self.notification(type, subtype, signed: now, transaction: t, renewal: r, uuid: type), now: now).entitlements?.entitlements.first
        }
        let paid = Self.txn("9001", purchase: Self.t0, expires: Self.t0 + 30 * Self.day, signed: now)
        var e = try entitlement("REFUND", nil, Self.txn("9001", purchase: Self.t0, expires: Self.t0 + 30 * Self.day, signed: now,
                                                        extra: ["revocationDate": now - Self.day, "revocationReason": 1,
                                                                "revocationType": "REFUND_PRORATED", "revocationPercentage": 66_667]),
                                Self.renewal(signed: now))
        XCTAssertEqual(e?.state, .refunded)
        XCTAssertEqual(e?.active, false)
        XCTAssertEqual(e?.revocationType, "REFUND_PRORATED")
        e = try entitlement("REVOKE", nil, Self.txn("9001", purchase: Self.t0, expires: Self.t0 + 30 * Self.day, signed: now,
                                                    extra: ["revocationDate": now - Self.day, "revocationType": "FAMILY_REVOKE",
                                                            "inAppOwnershipType": "FAMILY_SHARED"]), Self.renewal(signed: now))
        XCTAssertEqual(e?.state, .refunded)
        XCTAssertEqual(e?.ownership, .familyShared)
        e = try entitlement("PRICE_INCREASE", "PENDING", paid, Self.renewal(signed: now, extra: ["priceIncreaseStatus": 0]))
        XCTAssertEqual(e?.priceIncrease, "pending")
        XCTAssertEqual(e?.active, true)
        e = try entitlement("PRICE_INCREASE", "ACCEPTED", paid, Self.renewal(signed: now, extra: ["priceIncreaseStatus": 1]))
        XCTAssertEqual(e?.priceIncrease, "accepted")
        e = try entitlement("DID_FAIL_TO_RENEW", "GRACE_PERIOD",
                            Self.txn("9001", purchase: Self.t0 - 30 * Self.day, expires: now - Self.day, signed: now),
                            Self.renewal(signed: now, extra: ["isInBillingRetryPeriod": true, "gracePeriodExpiresDate": now + 5 * Self.day]))
        XCTAssertEqual(e?.state, .gracePeriod)
        XCTAssertEqual(e?.active, true)
        e = try entitlement("DID_FAIL_TO_RENEW", nil, Self.txn("9001", purchase: Self.t0 - 30 * Self.day, expires: now - Self.day, signed: now),
                            Self.renewal(signed: now, extra: ["isInBillingRetryPeriod": true]))
        XCTAssertEqual(e?.state, .billingRetry)
        XCTAssertEqual(e?.active, false)
        e = try entitlement("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", paid, Self.renewal(signed: now, extra: ["autoRenewStatus": 0]))
        XCTAssertEqual(e?.active, true, "auto-renew off does not end the paid period")
        XCTAssertEqual(e?.willRenew, false)
    }

    func testNewFieldsAreReadAndWrongTypesAreMalformed() throws {
        let now = Self.t0 + Self.day
        let rich = Self.txn("9001", purchase: Self.t0, expires: Self.t0 + 30 * Self.day, signed: Self.t0, extra: [
            "offerType": 4, "offerIdentifier": "winback-1", "offerDiscountType": "PAY_AS_YOU_GO", "offerPeriod": "P1M",
            "price": 9_990, "currency": "EUR", "storefront": "FRA", "storefrontId": "143442",
            "appAccountToken": "7e3fb20b-4cdb-47cc-936d-99d65f608138", "appTransactionId": "704", "transactionReason": "PURCHASE",
            "billingPlanType": "MONTHLY",
            "commitmentInfo": ["billingPeriodNumber": 3, "totalBillingPeriods": 12, "commitmentExpiresDate": Self.t0 + 365 * Self.day,
                               "commitmentPrice": 119_880]])
        let richRenewal = Self.renewal(signed: Self.t0, extra: [
            "renewalPrice": 10_990, "currency": "EUR", "offerType": 2, "offerIdentifier": "promo", "eligibleWinBackOfferIds": ["a", "b"],
            "renewalDate": Self.t0 + 30 * Self.day, "renewalBillingPlanType": "BILLED_UPFRONT",
            "commitmentInfo": ["commitmentAutoRenewProductId": "pro.yearly", "commitmentAutoRenewStatus": 1,
                               "commitmentRenewalPrice": 99_990]])
        let r = try verify(Self.notification("DID_RENEW", nil, signed: Self.t0, transaction: rich, renewal: richRenewal, uuid: "f"), now: now)
        XCTAssertEqual(r.verdict, .valid, r.judgement.reason)
        let c = try XCTUnwrap(r.notification?.transaction?.commerce)
        XCTAssertEqual(c.offerType, 4)
        XCTAssertEqual(c.price, 9_990)
        XCTAssertEqual(c.storefront, "FRA")
        XCTAssertEqual(c.billingPlanType, "MONTHLY")
        XCTAssertEqual(c.commitmentTotalBillingPeriods, 12)
        XCTAssertEqual(r.notification?.renewal?.commerce.eligibleWinBackOfferIDs ?? [], ["a", "b"])
        XCTAssertEqual(r.notification?.renewal?.commerce.commitmentAutoRenewStatus, true)
        // The normalised JSON carries them, and the entitlement input reads them back unchanged.
        let n = try XCTUnwrap(resultDict(r.resultJSON())["notification"] as? [String: Any])
        let t = try XCTUnwrap(n["transaction"] as? [String: Any])
        XCTAssertEqual(t["offer_type"] as? Int, 4)
        XCTAssertEqual((t["commitment"] as? [String: Any])?["commitment_price"] as? Int, 119_880)
        let input = try JSONSerialization.data(withJSONObject: ["transactions": [t], "renewal_info": [n["renewal_info"]!]])
        let v = try XCTUnwrap(FakeApple.verifier(["app_apple_id": 1]))   // the app these notifications name
        XCTAssertEqual(try v.computeEntitlements([UInt8](input), nowMs: now).verdict, .valid)
        let tBytes = [UInt8](try JSONSerialization.data(withJSONObject: t))
        let doc = try tBytes.withUnsafeBytes { raw throws(IAPVFailure) in try JSONDocument(bytes: raw, what: "t", status: .invalidArgument) }
        XCTAssertEqual(try TransactionJSON.transaction(doc.root, path: "t").commerce, c)

        // Wrong types are malformed, naming the field; unknown enum values pass through as data.
        for (field, value) in [("price", "ten" as Any), ("offerType", ["x"]), ("revocationPercentage", true as Any),
                               ("commitmentInfo", 5 as Any), ("storefront", ["FRA"] as Any)] {
            let bad = Self.txn("9001", purchase: Self.t0, expires: Self.t0 + 30 * Self.day, signed: Self.t0, extra: [field: value])
            let report = try verify(Self.notification("DID_RENEW", nil, signed: Self.t0, transaction: bad, renewal: nil, uuid: field), now: now)
            XCTAssertEqual(report.verdict, .malformed, field)
            XCTAssertTrue(report.judgement.reason.contains(field), report.judgement.reason)
        }
        let badRenewal = Self.renewal(signed: Self.t0, extra: ["eligibleWinBackOfferIds": "a"])
        let report = try verify(Self.notification("DID_RENEW", nil, signed: Self.t0, transaction: nil, renewal: badRenewal, uuid: "w"), now: now)
        XCTAssertEqual(report.verdict, .malformed)
        let odd = Self.txn("9001", purchase: Self.t0, expires: Self.t0 + 30 * Self.day, signed: Self.t0,
                           extra: ["revocationType": "SOMETHING_NEW", "offerDiscountType": "SOMETHING_NEW", "offerType": 9])
        let o = try verify(Self.notification("DID_RENEW", nil, signed: Self.t0, transaction: odd, renewal: nil, uuid: "o"), now: now)
        XCTAssertEqual(o.verdict, .valid)
        XCTAssertEqual(o.notification?.transaction?.commerce.revocationType, "SOMETHING_NEW")
    }

    /// The life of one subscription, as the notifications tell it.
    static func life() -> [(name: String, token: String)] {
        let d = day, t0 = Self.t0
        var out: [(String, String)] = []
        func add(_ type: String, _ subtype: String?, at: Int64, _ t: [String: Any], _ r: [String: Any]) {
            out.append(("\(type) \(subtype ?? "")", notification(type, subtype, signed: at, transaction: t, renewal: r, uuid: "life-\(out.count)")))
        }
        add("SUBSCRIBED", "INITIAL_BUY", at: t0, txn("9001", purchase: t0, expires: t0 + 30 * d, signed: t0), renewal(signed: t0))
        add("DID_RENEW", nil, at: t0 + 30 * d, txn("9002", purchase: t0 + 30 * d, expires: t0 + 60 * d, signed: t0 + 30 * d),
            renewal(signed: t0 + 30 * d))
        add("PRICE_INCREASE", "PENDING", at: t0 + 40 * d, txn("9002", purchase: t0 + 30 * d, expires: t0 + 60 * d, signed: t0 + 40 * d),
            renewal(signed: t0 + 40 * d, extra: ["priceIncreaseStatus": 0]))
        add("PRICE_INCREASE", "ACCEPTED", at: t0 + 45 * d, txn("9002", purchase: t0 + 30 * d, expires: t0 + 60 * d, signed: t0 + 45 * d),
            renewal(signed: t0 + 45 * d, extra: ["priceIncreaseStatus": 1]))
        add("DID_FAIL_TO_RENEW", "GRACE_PERIOD", at: t0 + 60 * d,
            txn("9002", purchase: t0 + 30 * d, expires: t0 + 60 * d, signed: t0 + 60 * d),
            renewal(signed: t0 + 60 * d, extra: ["isInBillingRetryPeriod": true, "gracePeriodExpiresDate": t0 + 66 * d, "priceIncreaseStatus": 1]))
        add("DID_RENEW", "BILLING_RECOVERY", at: t0 + 62 * d, txn("9003", purchase: t0 + 62 * d, expires: t0 + 92 * d, signed: t0 + 62 * d),
            renewal(signed: t0 + 62 * d))
        add("REFUND", nil, at: t0 + 70 * d,
            txn("9003", purchase: t0 + 62 * d, expires: t0 + 92 * d, signed: t0 + 70 * d,
                extra: ["revocationDate": t0 + 70 * d, "revocationReason": 0, "revocationType": "REFUND_FULL", "revocationPercentage": 100_000]),
            renewal(signed: t0 + 70 * d))
        add("REFUND_REVERSED", nil, at: t0 + 75 * d, txn("9003", purchase: t0 + 62 * d, expires: t0 + 92 * d, signed: t0 + 75 * d),
            renewal(signed: t0 + 75 * d))
        add("RENEWAL_EXTENDED", nil, at: t0 + 80 * d, txn("9003", purchase: t0 + 62 * d, expires: t0 + 99 * d, signed: t0 + 80 * d),
            renewal(signed: t0 + 80 * d))
        add("EXPIRED", "VOLUNTARY", at: t0 + 99 * d, txn("9003", purchase: t0 + 62 * d, expires: t0 + 99 * d, signed: t0 + 99 * d),
            renewal(signed: t0 + 99 * d, extra: ["autoRenewStatus": 0, "expirationIntent": 1]))
        return out
    }

    /// What a host stores: each verified notification's transaction and renewal info, as the
    /// normalised JSON the result carries; the state is computed from all of them at once.
    private func state(after tokens: [String], at now: Int64) throws -> String {
        let v = try XCTUnwrap(FakeApple.verifier(["app_apple_id": 1]))   // the app these notifications name
        var transactions: [String] = [], renewals: [String] = []
        for token in tokens {
            let r = try v.verifyJWS(Array(token.utf8), nowMs: now)
            XCTAssertEqual(r.verdict, .valid, r.judgement.reason)
            let n = try XCTUnwrap(resultDict(r.resultJSON())["notification"] as? [String: Any])
            if let t = n["transaction"] as? [String: Any] { transactions.append(String(decoding: try JSONSerialization.data(withJSONObject: t), as: UTF8.self)) }
            if let x = n["renewal_info"] as? [String: Any] { renewals.append(String(decoding: try JSONSerialization.data(withJSONObject: x), as: UTF8.self)) }
        }
        let input = "{\"transactions\":[\(transactions.joined(separator: ","))],\"renewal_info\":[\(renewals.joined(separator: ","))]}"
        let report = try v.computeEntitlements(Array(input.utf8), nowMs: now)
        XCTAssertEqual(report.verdict, .valid, report.judgement.reason)
        // The state, without the reason line (it counts the records received, duplicates too).
        var doc = try JSONSerialization.jsonObject(with: Data(report.resultJSON())) as! [String: Any]
        doc["reason"] = nil
        return String(decoding: try JSONSerialization.data(withJSONObject: doc, options: [.sortedKeys]), as: UTF8.self)
    }

    func testALifeInOrderAndShuffledGivesOneState() throws {
        let life = Self.life()
        let tokens = life.map(\.token)
        let effects = try life.map { try verify($0.token, now: Self.t0).notification!.effect }
        XCTAssertEqual(effects, [.subscriptionStarted, .renewed, .priceIncreasePending, .priceIncreaseAccepted, .gracePeriodStarted,
                                 .billingRecovered, .refunded, .refundReversed, .renewalExtended, .expired])
        // Mid-life checkpoints, from what had arrived by then.
        let d = Self.day, t0 = Self.t0
        func entitlement(_ count: Int, at now: Int64) throws -> [String: Any] {
            let doc = try JSONSerialization.jsonObject(with: Data(try state(after: Array(tokens.prefix(count)), at: now).utf8)) as! [String: Any]
            return (doc["entitlements"] as! [[String: Any]])[0]
        }
        XCTAssertEqual(try entitlement(3, at: t0 + 41 * d)["price_increase"] as? String, "pending")
        XCTAssertEqual(try entitlement(4, at: t0 + 46 * d)["price_increase"] as? String, "accepted")
        XCTAssertEqual(try entitlement(5, at: t0 + 61 * d)["state"] as? String, "grace_period")
        XCTAssertEqual(try entitlement(7, at: t0 + 71 * d)["state"] as? String, "refunded")
        XCTAssertEqual(try entitlement(8, at: t0 + 76 * d)["state"] as? String, "active", "a reversed refund gives access back")
        let extended = try entitlement(9, at: t0 + 95 * d)
        XCTAssertEqual(extended["state"] as? String, "active", "the extension moved the expiry")
        XCTAssertEqual(extended["expires_date_ms"] as? Int64, t0 + 99 * d)
        // The end, in order, shuffled, and shuffled with every notification delivered twice.
        let end = t0 + 100 * d
        let inOrder = try state(after: tokens, at: end)
        XCTAssertTrue(inOrder.contains("\"state\":\"expired\""), inOrder)
        var generator = SeededGenerator(seed: 7)
        let atReversal = try state(after: Array(tokens.prefix(8)), at: t0 + 76 * d)
        for round in 0..<5 {
            var shuffled = tokens + (round % 2 == 0 ? tokens : [])
            shuffled.shuffle(using: &generator)
            XCTAssertEqual(try state(after: shuffled, at: end), inOrder, "round \(round)")
            var firstEight = Array(tokens.prefix(8)) + Array(tokens.prefix(8 - round))
            firstEight.shuffle(using: &generator)
            XCTAssertEqual(try state(after: firstEight, at: t0 + 76 * d), atReversal, "round \(round) at the reversal")
        }
    }
}
