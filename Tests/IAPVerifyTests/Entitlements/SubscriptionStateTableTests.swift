// SubscriptionStates (the table `iapverify states` draws into docs/subscription-states.svg) against
// the entitlement engine. Each state has a stored history that gives it; each arrow is replayed
// as the signed records its notification carries, added to the history of its "from" state, and
// the engine must then give the arrow's "to" state. A row the engine does not produce fails here.

import Foundation
import XCTest
@_spi(Testing) @testable import IAPVerify

final class SubscriptionStateTableTests: XCTestCase {
    static let hour: Int64 = 3_600_000
    static let period = 30 * day
    /// When the first period (transaction "1", bought at t0) ends.
    static let end = t0 + period
    /// When the grace period of the first failed renewal ends.
    static let graceEnd = end + 6 * day

    static let catalog: [String: Any] = [
        "pro.weekly": ["type": "auto_renewable", "group": "pro", "level": 4, "entitlements": ["pro"]],
        "pro.monthly": ["type": "auto_renewable", "group": "pro", "level": 3, "entitlements": ["pro"]],
        "pro.yearly": ["type": "auto_renewable", "group": "pro", "level": 2, "entitlements": ["pro"]],
        // The top tier grants something else: upgrading to it leaves "pro" upgraded.
        "max.yearly": ["type": "auto_renewable", "group": "pro", "level": 1, "entitlements": ["max"]],
    ]

    /// What a host has stored for one subscription (original transaction "1"), and when it asks.
    struct History {
        var transactions: [[String: Any]] = []
        var renewals: [[String: Any]] = []
        var now: Int64
        var grace = "honor"
    }

    // MARK: - Records, as Apple signs them

    static func purchase(_ id: String, _ product: String = "pro.monthly", from start: Int64, length: Int64 = period,
                         extra: [String: Any] = [:]) -> [String: Any] {
        var more = extra
        more["signed_date_ms"] = more["signed_date_ms"] ?? start
        return txn(id, product, orig: "1", at: start, expires: start + length, extra: more)
    }

    static func renewal(signed: Int64, product: String = "pro.monthly", autoRenew: Bool = true, retry: Bool = false,
                        graceEnds: Int64? = nil, intent: String? = nil, extra: [String: Any] = [:]) -> [String: Any] {
        var r: [String: Any] = ["original_transaction_id": "1", "auto_renew_product_id": product,
                                "auto_renew_status": autoRenew ? "1" : "0", "is_in_billing_retry_period": retry ? "1" : "0",
                                "signed_date_ms": signed]
        if let graceEnds { r["grace_period_expires_date_ms"] = String(graceEnds) }
        if let intent { r["expiration_intent"] = intent }
        for (k, v) in extra { r[k] = v }
        return r
    }

    /// A later signed copy of `record`: revoked at `at`, or (`revocation` nil) with no revocation.
    static func copy(_ record: [String: Any], signed at: Int64, revokedAs revocation: String?,
                     extra: [String: Any] = [:]) -> [String: Any] {
        var r = record
        r["signed_date_ms"] = at
        if let revocation {
            r["cancellation_date_ms"] = String(at)
            r["revocation_type"] = revocation
        } else {
            r["cancellation_date_ms"] = nil
            r["revocation_type"] = nil
        }
        for (k, v) in extra { r[k] = v }
        return r
    }

    static func ms(_ record: [String: Any], _ key: String) -> Int64 {
        if let s = record[key] as? String { return Int64(s) ?? 0 }
        return (record[key] as? Int64) ?? 0
    }

    /// The stored record of the current period: the latest expiry, then the latest signature.
    static func latest(_ h: History) -> [String: Any]? {
        h.transactions.max { a, b in
            (ms(a, "expires_date_ms"), ms(a, "signed_date_ms")) < (ms(b, "expires_date_ms"), ms(b, "signed_date_ms"))
        }
    }

    static func nextID(_ h: History) -> String {
        String((h.transactions.compactMap { Int($0["transaction_id"] as? String ?? "") }.max() ?? 0) + 1)
    }

    // MARK: - A history for each state

    static func history(_ state: EntitlementState) -> History? {
        let first = purchase("1", from: t0)
        let bought = renewal(signed: t0)
        switch state {
        case .notPurchased:
            return History(now: t0)
        case .active:
            return History(transactions: [first], renewals: [bought], now: t0 + 10 * day)
        case .gracePeriod:
            return History(transactions: [first], renewals: [bought, renewal(signed: end, retry: true, graceEnds: graceEnd, intent: "2")],
                           now: end + day)
        case .billingRetry:
            return History(transactions: [first], renewals: [bought, renewal(signed: end, retry: true, intent: "2")], now: end + day)
        case .expired:
            return History(transactions: [first], renewals: [bought, renewal(signed: end, autoRenew: false, intent: "1")],
                           now: end + 5 * day)
        case .refunded:
            return History(transactions: [first, copy(first, signed: t0 + 10 * day, revokedAs: "REFUND_FULL")],
                           renewals: [bought], now: t0 + 10 * day + hour)
        case .upgraded:
            let upgradedAt = t0 + 10 * day
            return History(transactions: [first, copy(first, signed: upgradedAt, revokedAs: nil,
                                                       extra: ["cancellation_date_ms": String(upgradedAt), "is_upgraded": "true"]),
                                          purchase("2", "max.yearly", from: upgradedAt, length: 365 * day)],
                           renewals: [bought, renewal(signed: upgradedAt, product: "max.yearly")], now: upgradedAt + hour)
        case .owned:
            return nil  // non-consumables only
        }
    }

    // MARK: - What each notification carries

    /// `h` once the records of a notification with `row`'s effect (in `row.when`'s case) are
    /// stored; nil when no scenario is written for it. `now` becomes the time it arrives.
    static func apply(_ row: SubscriptionTransition, to base: History) -> History? {
        var h = base
        var at = base.now + hour
        let head = latest(base)
        let headEnd = head.map { ms($0, "expires_date_ms") } ?? base.now
        typealias S = SubscriptionStates
        switch (row.effect, row.when) {
        case (.subscriptionStarted, nil), (.subscriptionResumed, nil), (.billingRecovered, nil):
            h.transactions.append(purchase(nextID(h), from: at))
            h.renewals.append(renewal(signed: at))
        case (.offerRedeemed, nil):
            h.transactions.append(purchase(nextID(h), from: at, extra: ["promotional_offer_id": "welcome", "is_in_intro_offer_period": "true"]))
            h.renewals.append(renewal(signed: at))
        case (.renewed, nil):
            // Apple charges at the period's end and the new period follows on.
            at = headEnd + 60_000
            h.transactions.append(purchase(nextID(h), from: headEnd, extra: ["signed_date_ms": at]))
            h.renewals.append(renewal(signed: at))
        case (.upgraded, S.whenNewTierGrants), (.upgraded, S.whenNewTierDoesNot):
            guard let head else { return nil }
            let product = row.when == S.whenNewTierGrants ? "pro.yearly" : "max.yearly"
            h.transactions.append(copy(head, signed: at, revokedAs: nil, extra: ["cancellation_date_ms": String(at), "is_upgraded": "true"]))
            h.transactions.append(purchase(nextID(h), product, from: at, length: 365 * day))
            h.renewals.append(renewal(signed: at, product: product))
        case (.renewalExtended, nil):
            guard let head else { return nil }
            h.transactions.append(copy(head, signed: at, revokedAs: nil, extra: ["expires_date_ms": String(headEnd + 7 * day)]))
        case (.downgradeScheduled, nil):
            h.renewals.append(renewal(signed: at, product: "pro.weekly"))
        case (.downgradeCancelled, nil), (.autoRenewEnabled, nil):
            h.renewals.append(renewal(signed: at))
        case (.autoRenewDisabled, nil):
            h.renewals.append(renewal(signed: at, autoRenew: false))
        case (.priceIncreasePending, nil):
            h.renewals.append(renewal(signed: at, extra: ["price_increase_status": 0]))
        case (.priceIncreaseAccepted, nil):
            h.renewals.append(renewal(signed: at, extra: ["price_increase_status": 1]))
        case (.refundDeclined, nil), (.renewalExtensionSummary, nil), (.renewalExtensionFailed, nil), (.consumptionInfoRequested, nil):
            break  // nothing new is signed about this subscription
        case (.gracePeriodStarted, S.whenGraceHonoured), (.gracePeriodStarted, S.whenGraceIgnored):
            at = headEnd + hour
            h.renewals.append(renewal(signed: at, retry: true, graceEnds: headEnd + 6 * day, intent: "2"))
            h.grace = row.when == S.whenGraceIgnored ? "ignore" : "honor"
        case (.billingRetryStarted, nil):
            at = headEnd + hour
            h.renewals.append(renewal(signed: at, retry: true, intent: "2"))
        case (.gracePeriodEnded, S.whenStillRetrying):
            at = headEnd + 6 * day + hour
            h.renewals.append(renewal(signed: at, retry: true, graceEnds: headEnd + 6 * day, intent: "2"))
        case (.gracePeriodEnded, S.whenRetryStopped):
            at = headEnd + 6 * day + hour
            h.renewals.append(renewal(signed: at, autoRenew: false, intent: "2"))
        case (.expired, nil):
            at = max(base.now, headEnd) + hour
            h.renewals.append(renewal(signed: at, autoRenew: false, intent: base.renewals.contains { $0["is_in_billing_retry_period"] as? String == "1" } ? "2" : "1"))
        case (.refunded, nil), (.revoked, nil):
            guard let head else { return nil }
            h.transactions.append(copy(head, signed: at, revokedAs: row.effect == .refunded ? "REFUND_FULL" : "FAMILY_REVOKE"))
        case (.refundReversed, S.whenPeriodCoversNow), (.refundReversed, S.whenPeriodEnded):
            guard let head else { return nil }
            if row.when == S.whenPeriodEnded { at = headEnd + day }
            h.transactions.append(copy(head, signed: at, revokedAs: nil))
        default:
            return nil
        }
        h.now = at
        return h
    }

    // MARK: - The check

    private static var verifiers: [String: Verifier] = [:]

    static func evaluate(_ h: History) throws -> Entitlement {
        let v = try verifiers[h.grace] ?? makeVerifierOrThrow(["bundle_id": "*", "products": catalog, "grace_period": h.grace])
        verifiers[h.grace] = v
        let input = try JSONSerialization.data(withJSONObject: ["transactions": h.transactions, "renewal_info": h.renewals])
        let r = try input.withUnsafeBytes { raw throws(IAPVFailure) in try v.computeEntitlements(raw, options: EntitlementOptions(), nowMs: h.now) }
        guard r.verdict == .valid, let e = r.entitlements?.entitlement("pro") else {
            throw IAPVFailure(.internal, "no pro entitlement: \(r.verdict.rawValue) \(r.judgement.reason)")
        }
        return e
    }

    /// Every way `rows` disagree with the engine, in words; empty when they all hold.
    static func mismatches(_ rows: [SubscriptionTransition]) -> [String] {
        var out: [String] = []
        for row in rows {
            for from in row.from {
                let name = "\(from.rawValue) --\(row.effect.rawValue)\(row.when.map { " (\($0))" } ?? "")--> \(row.to.rawValue)"
                guard let base = history(from) else { out.append("\(name): no history gives \(from.rawValue)"); continue }
                guard let after = apply(row, to: base) else { out.append("\(name): no scenario for this notification"); continue }
                if after.now <= base.now { out.append("\(name): the notification cannot come after \(from.rawValue)"); continue }
                do {
                    let before = try evaluate(base)
                    if before.state != from { out.append("\(name): the history of \(from.rawValue) gives \(before.state.rawValue)") }
                    let e = try evaluate(after)
                    if e.state != row.to { out.append("\(name): the engine gives \(e.state.rawValue) (\(e.reason))") }
                    if e.active != SubscriptionStates.row(row.to)?.active { out.append("\(name): the engine gives active \(e.active)") }
                } catch {
                    out.append("\(name): \(error)")
                }
            }
        }
        return out
    }

    // MARK: - Tests

    func testEveryArrowIsWhatTheEngineGives() {
        let problems = Self.mismatches(SubscriptionStates.transitions)
        XCTAssertEqual(problems, [], problems.joined(separator: "\n"))
    }

    func testEachStateHasAHistoryAndItsActiveFlag() throws {
        for row in SubscriptionStates.states {
            let h = try XCTUnwrap(Self.history(row.state), row.state.rawValue)
            let e = try Self.evaluate(h)
            XCTAssertEqual(e.state, row.state)
            XCTAssertEqual(e.active, row.active, row.state.rawValue)
        }
    }

    func testEveryStateASubscriptionCanBeInIsInTheTable() {
        let listed = SubscriptionStates.states.map(\.state)
        XCTAssertEqual(Set(listed).count, listed.count, "a state is listed twice")
        XCTAssertEqual(Set(listed).union(SubscriptionStates.notSubscriptionStates), Set(EntitlementState.allCases))
        XCTAssertTrue(Set(listed).isDisjoint(with: SubscriptionStates.notSubscriptionStates))
        XCTAssertTrue(listed.contains(SubscriptionStates.start))
        // Every state is on an arrow, and every arrow joins listed states.
        var onArrows = Set<EntitlementState>([SubscriptionStates.start])
        for t in SubscriptionStates.transitions {
            XCTAssertFalse(t.from.isEmpty, "\(t.effect.rawValue): no from state")
            for s in t.from + [t.to] {
                XCTAssertTrue(listed.contains(s), "\(t.effect.rawValue): \(s.rawValue) is not a listed state")
                onArrows.insert(s)
            }
        }
        XCTAssertEqual(onArrows, Set(listed), "states no arrow reaches or leaves")
        // Every state but the start is reached by some arrow.
        let reached = Set(SubscriptionStates.transitions.map(\.to))
        XCTAssertEqual(reached.union([SubscriptionStates.start]), Set(listed))
    }

    func testEveryNotificationEffectIsDrawnOrSaysWhyNot() {
        let drawn = Set(SubscriptionStates.transitions.map(\.effect))
        let notDrawn = SubscriptionStates.notDrawn.map(\.effect)
        XCTAssertEqual(Set(notDrawn).count, notDrawn.count)
        XCTAssertTrue(drawn.isDisjoint(with: notDrawn), "drawn and explained: \(drawn.intersection(notDrawn))")
        XCTAssertEqual(drawn.union(notDrawn), Set(NotificationEffect.allCases),
                       "effects the table does not mention: \(Set(NotificationEffect.allCases).subtracting(drawn).subtracting(notDrawn))")
    }

    func testAWrongArrowFails() {
        let S = SubscriptionStates.self
        let wrong: [SubscriptionTransition] = [
            .init(from: [.active], effect: .gracePeriodStarted, to: .gracePeriod, when: S.whenGraceIgnored),
            .init(from: [.gracePeriod], effect: .gracePeriodEnded, to: .gracePeriod, when: S.whenStillRetrying),
            .init(from: [.active], effect: .refunded, to: .expired, when: nil),
            .init(from: [.refunded], effect: .refundReversed, to: .active, when: S.whenPeriodEnded),
            .init(from: [.active], effect: .upgraded, to: .upgraded, when: S.whenNewTierGrants),
            // A notification that cannot arrive in that state: the renewal comes before this expiry.
            .init(from: [.expired], effect: .renewed, to: .active, when: nil),
        ]
        for row in wrong {
            XCTAssertFalse(Self.mismatches([row]).isEmpty, "\(row.effect.rawValue) to \(row.to.rawValue) passed")
        }
    }
}
