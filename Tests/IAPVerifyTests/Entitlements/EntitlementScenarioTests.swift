// Entitlements and delivery as a table of scenarios through iapv_compute_entitlements' Swift entry point,
// plus property checks: input order never matters, and expired or revoked extras never grant.

import Foundation
import XCTest
@_spi(Testing) @testable import IAPVerify

let t0: Int64 = 1_700_000_000_000

/// A transaction dictionary in Apple's field names; values as strings, as Apple sends them.
func txn(_ id: String, _ product: String, orig: String? = nil, at purchase: Int64, expires: Int64? = nil,
         cancelled: Int64? = nil, extra: [String: Any] = [:]) -> [String: Any] {
    var d: [String: Any] = ["transaction_id": id, "product_id": product, "original_transaction_id": orig ?? id,
                            "purchase_date_ms": String(purchase), "quantity": "1"]
    if let expires { d["expires_date_ms"] = String(expires) }
    if let cancelled { d["cancellation_date_ms"] = String(cancelled) }
    for (k, v) in extra { d[k] = v }
    return d
}

final class EntitlementScenarioTests: XCTestCase {
    static let catalog: [String: Any] = [
        "pro.monthly": ["type": "auto_renewable", "group": "pro", "level": 2, "entitlements": ["pro"]],
        "pro.yearly": ["type": "auto_renewable", "group": "pro", "level": 1, "entitlements": ["pro"]],
        "plus.monthly": ["type": "auto_renewable", "group": "plus"],
        "lifetime": ["type": "non_consumable", "entitlements": ["lifetime"]],
        "themes": ["type": "non_consumable"],
        "season": ["type": "non_renewing", "duration_ms": 30 * day, "entitlements": ["season"]],
        "coins": ["type": "consumable"],
    ]

    func verifier(grace: String = "honor") throws -> Verifier {
        try makeVerifierOrThrow(["bundle_id": "*", "products": Self.catalog, "grace_period": grace])
    }

    func compute(_ txns: [[String: Any]], renewals: [[String: Any]] = [], now: Int64, grace: String = "honor",
                 options opts: [String: Any] = [:]) throws -> EntitlementReport {
        let input = try JSONSerialization.data(withJSONObject: ["transactions": txns, "renewal_info": renewals])
        let v = try verifier(grace: grace)
        let o = try options(opts, as: EntitlementOptions.self)
        let r = try input.withUnsafeBytes { raw throws(IAPVFailure) in try v.computeEntitlements(raw, options: o, nowMs: now) }
        XCTAssertEqual(r.verdict, .valid, r.judgement.reason)
        return r.entitlements ?? EntitlementReport()
    }

    func pro(_ txns: [[String: Any]], renewals: [[String: Any]] = [], now: Int64, grace: String = "honor") throws -> Entitlement {
        try XCTUnwrap(try compute(txns, renewals: renewals, now: now, grace: grace).entitlement("pro"))
    }

    // MARK: auto-renewable

    func testActiveAndTheExpiryBoundary() throws {
        let t = [txn("1", "pro.monthly", at: t0, expires: t0 + 30 * day)]
        let active = try pro(t, now: t0 + 30 * day - 1)
        XCTAssertTrue(active.active)
        XCTAssertEqual(active.state, .active)
        XCTAssertEqual(active.expiresDateMs, t0 + 30 * day)
        XCTAssertEqual(active.evidence.transactionID, "1")
        let ended = try pro(t, now: t0 + 30 * day)
        XCTAssertFalse(ended.active)
        XCTAssertEqual(ended.state, .expired)
        XCTAssertNil(ended.expirationReason)
        XCTAssertFalse(try pro(t, now: t0 - 1).active)
    }

    func testRenewalsInShuffledOrderPickTheLargestExpiry() throws {
        var chain = (0..<6).map { i in txn("10\(i)", "pro.monthly", orig: "100", at: t0 + Int64(i) * 30 * day, expires: t0 + Int64(i + 1) * 30 * day) }
        for seed in 0..<10 {
            var g = SeededGenerator(seed: UInt64(seed))
            chain.shuffle(using: &g)
            let e = try pro(chain, now: t0 + 170 * day)
            XCTAssertEqual(e.transactionID, "105")
            XCTAssertEqual(e.originalTransactionID, "100")
            XCTAssertTrue(e.active)
        }
    }

    func testRefundInTheMiddleOfAPeriod() throws {
        let t = [txn("1", "pro.monthly", at: t0, expires: t0 + 30 * day),
                 txn("2", "pro.monthly", orig: "1", at: t0 + 30 * day, expires: t0 + 60 * day, cancelled: t0 + 40 * day,
                     extra: ["cancellation_reason": "1"])]
        XCTAssertTrue(try pro(t, now: t0 + 39 * day).active)
        let e = try pro(t, now: t0 + 45 * day)
        XCTAssertFalse(e.active)
        XCTAssertEqual(e.state, .refunded)
        XCTAssertEqual(e.transactionID, "2")
        XCTAssertEqual(e.cancellationReason, "1")
        XCTAssertEqual(e.evidence.rule, .autoRenewableRevokedCoversNow)
    }

    func testUpgradeAndPendingDowngrade() throws {
        // Monthly upgraded to yearly on day 10: the old period is cancelled with is_upgraded.
        let t = [txn("1", "pro.monthly", at: t0, expires: t0 + 30 * day, cancelled: t0 + 10 * day, extra: ["is_upgraded": "true"]),
                 txn("2", "pro.yearly", orig: "1", at: t0 + 10 * day, expires: t0 + 375 * day)]
        let e = try pro(t, now: t0 + 20 * day)
        XCTAssertTrue(e.active)
        XCTAssertEqual(e.productID, "pro.yearly")
        // Only the upgraded transaction known: the state says upgraded, not refunded.
        let only = try pro([t[0]], now: t0 + 20 * day)
        XCTAssertEqual(only.state, .upgraded)
        XCTAssertFalse(only.active)
        // A pending downgrade to monthly at the next renewal.
        let renewal: [String: Any] = ["original_transaction_id": "1", "product_id": "pro.yearly", "auto_renew_product_id": "pro.monthly", "auto_renew_status": "1"]
        let d = try pro(t, renewals: [renewal], now: t0 + 20 * day)
        XCTAssertTrue(d.active)
        XCTAssertEqual(d.renewsTo, "pro.monthly")
        XCTAssertEqual(d.willRenew, true)
    }

    func testAutoRenewOffWhilePaidIsStillActive() throws {
        let renewal: [String: Any] = ["original_transaction_id": "1", "auto_renew_product_id": "pro.monthly", "auto_renew_status": "0"]
        let e = try pro([txn("1", "pro.monthly", at: t0, expires: t0 + 30 * day)], renewals: [renewal], now: t0 + day)
        XCTAssertTrue(e.active)
        XCTAssertEqual(e.willRenew, false)
        XCTAssertNil(e.renewsTo)
    }

    func testGracePeriodVersusBillingRetry() throws {
        let t = [txn("1", "pro.monthly", at: t0, expires: t0 + 30 * day)]
        let retry: [String: Any] = ["original_transaction_id": "1", "is_in_billing_retry_period": "1", "auto_renew_status": "1",
                                    "grace_period_expires_date_ms": String(t0 + 36 * day), "expiration_intent": "2"]
        let grace = try pro(t, renewals: [retry], now: t0 + 32 * day)
        XCTAssertEqual(grace.state, .gracePeriod)
        XCTAssertTrue(grace.active)
        XCTAssertEqual(grace.expiresDateMs, t0 + 36 * day)
        let afterGrace = try pro(t, renewals: [retry], now: t0 + 36 * day)
        XCTAssertEqual(afterGrace.state, .billingRetry)
        XCTAssertFalse(afterGrace.active)
        let ignored = try pro(t, renewals: [retry], now: t0 + 32 * day, grace: "ignore")
        XCTAssertEqual(ignored.state, .billingRetry)
        var noGrace = retry
        noGrace["grace_period_expires_date_ms"] = nil
        XCTAssertEqual(try pro(t, renewals: [noGrace], now: t0 + 32 * day).state, .billingRetry)
    }

    func testEachExpirationIntent() throws {
        let t = [txn("1", "pro.monthly", at: t0, expires: t0 + 30 * day)]
        let cases: [(String, String?)] = [("1", "voluntary"), ("2", "billing_error"), ("3", "price_increase_declined"),
                                          ("4", "product_unavailable"), ("5", "unknown"), ("9", "unknown")]
        for (intent, reason) in cases {
            let renewal: [String: Any] = ["original_transaction_id": "1", "expiration_intent": intent, "auto_renew_status": "0"]
            let e = try pro(t, renewals: [renewal], now: t0 + 40 * day)
            XCTAssertEqual(e.state, .expired)
            XCTAssertEqual(e.expirationReason, reason, intent)
        }
    }

    func testFamilySharedAndPeriods() throws {
        let e = try pro([txn("1", "pro.monthly", at: t0, expires: t0 + 7 * day, extra: ["in_app_ownership_type": "FAMILY_SHARED", "is_trial_period": "true"])], now: t0 + day)
        XCTAssertEqual(e.ownership, .familyShared)
        XCTAssertEqual(e.period, .trial)
        let intro = try pro([txn("1", "pro.monthly", at: t0, expires: t0 + 7 * day, extra: ["is_in_intro_offer_period": true])], now: t0 + day)
        XCTAssertEqual(intro.period, .intro)
        XCTAssertEqual(intro.ownership, .purchased)
        XCTAssertEqual(try pro([txn("1", "pro.monthly", at: t0, expires: t0 + 7 * day)], now: t0 + day).period, .normal)
    }

    func testHighestTierWinsWhenTwoChainsAreActive() throws {
        let t = [txn("1", "pro.monthly", at: t0, expires: t0 + 60 * day), txn("2", "pro.yearly", at: t0, expires: t0 + 30 * day)]
        let e = try pro(t, now: t0 + day)
        XCTAssertEqual(e.productID, "pro.yearly")
        XCTAssertEqual(e.evidence.candidates, 2)
        // When the higher tier lapses, the other chain carries the entitlement.
        XCTAssertEqual(try pro(t, now: t0 + 40 * day).productID, "pro.monthly")
    }

    // MARK: other product types

    func testNonConsumableRefundAndRebuy() throws {
        let bought = txn("1", "lifetime", at: t0)
        let refunded = txn("1", "lifetime", at: t0, cancelled: t0 + day)
        let rebought = txn("2", "lifetime", at: t0 + 2 * day)
        let owned = try XCTUnwrap(try compute([bought], now: t0 + 5 * day).entitlement("lifetime"))
        XCTAssertEqual(owned.state, .owned)
        XCTAssertTrue(owned.active)
        XCTAssertNil(owned.expiresDateMs)
        let gone = try XCTUnwrap(try compute([refunded], now: t0 + 5 * day).entitlement("lifetime"))
        XCTAssertEqual(gone.state, .refunded)
        XCTAssertFalse(gone.active)
        let back = try XCTUnwrap(try compute([refunded, rebought], now: t0 + 5 * day).entitlement("lifetime"))
        XCTAssertEqual(back.state, .owned)
        XCTAssertEqual(back.transactionID, "2")
        XCTAssertEqual(back.evidence.rule, .nonConsumableReboughtAfterRefund)
    }

    func testOverlappingNonRenewingWindows() throws {
        let t = [txn("1", "season", at: t0), txn("2", "season", at: t0 + 20 * day)]
        let mid = try XCTUnwrap(try compute(t, now: t0 + 40 * day).entitlement("season"))
        XCTAssertTrue(mid.active)
        XCTAssertEqual(mid.expiresDateMs, t0 + 50 * day)
        XCTAssertEqual(mid.transactionID, "2")
        let over = try XCTUnwrap(try compute(t, now: t0 + 50 * day).entitlement("season"))
        XCTAssertFalse(over.active)
        XCTAssertEqual(over.state, .expired)
        let refunded = try XCTUnwrap(try compute([txn("1", "season", at: t0, cancelled: t0 + day)], now: t0 + 2 * day).entitlement("season"))
        XCTAssertEqual(refunded.state, .refunded)
    }

    func testNotPurchasedUnknownProductsAndIntroEligibility() throws {
        let r = try compute([txn("1", "mystery", at: t0), txn("2", "pro.monthly", at: t0, expires: t0 + 7 * day, extra: ["is_trial_period": "1"])],
                            now: t0 + day)
        XCTAssertEqual(r.unknownProducts, ["mystery"])
        XCTAssertNil(try XCTUnwrap(r.purchases.first { $0.productID == "mystery" }).type, "a product the catalog does not list")
        XCTAssertEqual(r.entitlement("themes")?.state, .notPurchased)
        XCTAssertEqual(r.entitlement("lifetime")?.state, .notPurchased)
        XCTAssertNil(r.entitlement("mystery"))
        XCTAssertNil(r.entitlement("coins"))
        XCTAssertEqual(r.entitlements.map(\.id), ["lifetime", "plus.monthly", "pro", "season", "themes"])
        XCTAssertEqual(r.introEligible.map { "\($0.group)=\($0.eligible)" }, ["plus=true", "pro=false"])
        XCTAssertTrue(r.delivery.toDeliver.isEmpty)
    }

    func testWithoutACatalogEachProductIsItsOwnEntitlement() throws {
        let v = try makeVerifierOrThrow(["bundle_id": "*"])
        let input = try JSONSerialization.data(withJSONObject: ["transactions": [
            txn("1", "sub", at: t0, expires: t0 + day, extra: ["subscription_group_identifier": "g1", "is_trial_period": "true"]),
            txn("2", "thing", at: t0)]])
        let r = try input.withUnsafeBytes { raw throws(IAPVFailure) in try v.computeEntitlements(raw, nowMs: t0 + 1) }
        let e = try XCTUnwrap(r.entitlements)
        XCTAssertEqual(e.entitlement("sub")?.state, .active)
        XCTAssertEqual(e.entitlement("thing")?.state, .owned)
        XCTAssertEqual(e.purchases.map(\.type), [.autoRenewable, .nonConsumable])
        XCTAssertTrue(e.unknownProducts.isEmpty)
        XCTAssertEqual(e.introEligible.map(\.eligible), [false])
    }

    // MARK: delivery (§8)

    func testConsumablesDeliveredOnceAndRevokedAfterRefund() throws {
        let t = [txn("1", "coins", at: t0), txn("2", "coins", at: t0 + 1000), txn("3", "coins", at: t0 + 2000, cancelled: t0 + 3000),
                 txn("4", "themes", at: t0 + 4000), txn("5", "pro.monthly", at: t0, expires: t0 + day)]
        let r = try compute(t, now: t0 + 10_000, options: ["delivered_transaction_ids": ["1", "3"]])
        XCTAssertEqual(r.delivery.toDeliver.map(\.transactionID), ["2", "4"])
        XCTAssertEqual(r.delivery.toRevoke.map(\.transactionID), ["3"])
        XCTAssertEqual(r.purchases.first { $0.transactionID == "3" }?.revoked, true)
    }

    func testOrdersMatchOneToOneAndNeverAcrossProducts() throws {
        let t = [txn("1", "coins", at: t0), txn("2", "themes", at: t0 + 1000)]
        let orders: [[String: Any]] = [
            ["order_id": "B", "product_id": "themes", "created_ms": t0 - 1000],
            ["order_id": "A2", "product_id": "coins", "created_ms": t0 - 500],
            ["order_id": "A1", "product_id": "coins", "created_ms": t0 - 2000],
            ["order_id": "C", "product_id": "lifetime", "created_ms": t0 - 100],
        ]
        let r = try compute(t, now: t0 + day, options: ["orders": orders])
        let byID = Dictionary(uniqueKeysWithValues: r.delivery.orders.map { ($0.orderID, $0.transactionID) })
        XCTAssertEqual(byID["A1"], "1")             // the oldest order takes the coins purchase
        XCTAssertEqual(byID["A2"], .some(nil))      // one transaction never pays two orders
        XCTAssertEqual(byID["B"], "2")
        XCTAssertEqual(byID["C"], .some(nil))       // a coins or themes purchase never pays a lifetime order
        XCTAssertEqual(r.delivery.orders.map(\.orderID), ["A1", "B", "A2", "C"])
    }

    func testOrderSlackIsFiveMinutes() throws {
        let t = [txn("1", "coins", at: t0)]
        let justInside = try compute(t, now: t0 + day, options: ["orders": [["order_id": "o", "product_id": "coins", "created_ms": t0 + 5 * 60_000]]])
        XCTAssertEqual(justInside.delivery.orders.first?.transactionID, "1")
        let tooOld = try compute(t, now: t0 + day, options: ["orders": [["order_id": "o", "product_id": "coins", "created_ms": t0 + 5 * 60_000 + 1]]])
        XCTAssertNil(tooOld.delivery.orders.first?.transactionID)
        let delivered = try compute(t, now: t0 + day, options: ["delivered_transaction_ids": ["1"],
                                                                  "orders": [["order_id": "o", "product_id": "coins", "created_ms": t0]]])
        XCTAssertNil(delivered.delivery.orders.first?.transactionID)
    }

    func testMalformedInput() throws {
        let v = try verifier()
        for body in ["{}", "[]", "{\"transactions\":{}}", "{\"transactions\":[],\"extra\":1}", "{\"transactions\":[{\"product_id\":\"p\"}]}",
                     "{\"transactions\":[],\"renewal_info\":[{}]}", "nope"] {
            let r = try Array(body.utf8).withUnsafeBytes { raw throws(IAPVFailure) in try v.computeEntitlements(raw, nowMs: 0) }
            XCTAssertEqual(r.verdict, .malformed, body)
        }
    }

    // MARK: properties

    /// A rich mix: chains with renewals, refunds, upgrades, non-consumables, windows, consumables.
    func richInput() -> (txns: [[String: Any]], renewals: [[String: Any]]) {
        var t: [[String: Any]] = []
        for i in 0..<8 { t.append(txn("a\(i)", "pro.monthly", orig: "a0", at: t0 + Int64(i) * 30 * day, expires: t0 + Int64(i + 1) * 30 * day)) }
        t.append(txn("b0", "pro.yearly", at: t0 + 10 * day, expires: t0 + 375 * day, cancelled: t0 + 100 * day))
        t.append(txn("c0", "plus.monthly", at: t0, expires: t0 + 30 * day))
        t.append(txn("c1", "plus.monthly", orig: "c0", at: t0 + 30 * day, expires: t0 + 60 * day, extra: ["in_app_ownership_type": "FAMILY_SHARED"]))
        t.append(txn("d0", "lifetime", at: t0 + 5 * day, cancelled: t0 + 6 * day))
        t.append(txn("d1", "lifetime", at: t0 + 50 * day))
        t.append(txn("e0", "season", at: t0))
        t.append(txn("e1", "season", at: t0 + 45 * day))
        for i in 0..<4 { t.append(txn("f\(i)", "coins", at: t0 + Int64(i) * day)) }
        let r: [[String: Any]] = [["original_transaction_id": "c0", "is_in_billing_retry_period": "1",
                                   "grace_period_expires_date_ms": String(t0 + 66 * day), "auto_renew_status": "1"],
                                  ["original_transaction_id": "a0", "auto_renew_status": "0", "expiration_intent": "1"]]
        return (t, r)
    }

    func resultJSON(_ txns: [[String: Any]], _ renewals: [[String: Any]], now: Int64) throws -> String {
        let input = try JSONSerialization.data(withJSONObject: ["transactions": txns, "renewal_info": renewals])
        let v = try verifier()
        let o = try options(["delivered_transaction_ids": ["f0", "d0"], "orders": [["order_id": "x", "product_id": "coins", "created_ms": t0]]], as: EntitlementOptions.self)
        let r = try input.withUnsafeBytes { raw throws(IAPVFailure) in try v.computeEntitlements(raw, options: o, nowMs: now) }
        return String(decoding: r.resultJSON(), as: UTF8.self)
    }

    func testShufflingTheInputNeverChangesTheResult() throws {
        let (t, r) = richInput()
        for now in stride(from: t0 - day, through: t0 + 400 * day, by: Int64.Stride(7 * day)) {
            let reference = try resultJSON(t, r, now: now)
            for seed in 0..<4 {
                var g = SeededGenerator(seed: UInt64(seed) &+ UInt64(now))
                XCTAssertEqual(try resultJSON(t.shuffled(using: &g), r.shuffled(using: &g), now: now), reference, "now \(now) seed \(seed)")
            }
        }
    }

    func testExpiredOrRevokedExtrasNeverGrantMore() throws {
        let (t, r) = richInput()
        var g = SeededGenerator(seed: 7)
        let products = ["pro.monthly", "pro.yearly", "plus.monthly", "lifetime", "season", "themes"]
        for round in 0..<150 {
            let now = t0 + Int64.random(in: 0...(400 * day), using: &g)
            let base = try compute(t, renewals: r, now: now)
            let product = products.randomElement(using: &g) ?? "themes"
            let start = now - Int64.random(in: (40 * day)...(200 * day), using: &g)
            let chain = ["a0", "c0", "new\(round)"].randomElement(using: &g) ?? "x"
            var extra: [String: Any]
            if Bool.random(using: &g) {  // expired before now
                extra = txn("x\(round)", product, orig: chain, at: start, expires: product.contains("monthly") || product.contains("yearly") ? now - 1 : nil)
                if product == "lifetime" || product == "themes" { extra["cancellation_date_ms"] = String(now - 1) }
            } else {  // revoked at or before now, whatever it covered
                extra = txn("x\(round)", product, orig: chain, at: start, expires: now + 30 * day, cancelled: now - Int64.random(in: 0...day, using: &g))
            }
            let more = try compute(t + [extra], renewals: r, now: now)
            let before = Set(base.entitlements.filter(\.active).map(\.id))
            let after = Set(more.entitlements.filter(\.active).map(\.id))
            XCTAssertTrue(after.isSubset(of: before), "round \(round): \(extra) turned on \(after.subtracting(before))")
        }
    }
}

/// A small deterministic generator (SplitMix64) so shuffles are reproducible.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed &+ 0x9E37_79B9_7F4A_7C15 }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
