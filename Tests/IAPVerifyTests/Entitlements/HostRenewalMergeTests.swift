// The host's renewal infos are merged by the engine (EngineSettings.evaluate(_:ownRenewals:)),
// after the call's own: of two statements that rank alike, the call's is kept.

import XCTest
@testable import IAPVerify

final class HostRenewalMergeTests: XCTestCase {
    let now: Int64 = 1_700_000_000_000
    let engine = EngineSettings(catalog: nil, grace: .honor)

    private func subscription() -> Transaction {
        var t = Transaction(transactionID: "1001", productID: "pro.monthly")
        t.originalTransactionID = "1001"
        t.purchaseDateMs = now - 1_000
        t.expiresDateMs = now + 86_400_000
        return t
    }

    private func renewal(consent: String) -> RenewalInfo {
        var r = RenewalInfo(originalTransactionID: "1001")
        r.autoRenewStatus = true
        r.autoRenewProductID = "pro.monthly"
        r.priceConsentStatus = consent
        return r
    }

    func testTheCallsOwnRenewalInfoIsKeptOverTheHostsWhenTheyRankAlike() {
        let host = EntitlementOptions(renewalInfo: [renewal(consent: "0")])
        let report = engine.evaluate([subscription()], ownRenewals: [renewal(consent: "1")], host: host, nowMs: now)
        XCTAssertEqual(report.entitlement("pro.monthly")?.priceIncrease, "accepted")
    }

    func testTheHostsRenewalInfoAppliesWhenTheCallHasNone() {
        let host = EntitlementOptions(renewalInfo: [renewal(consent: "0")])
        let report = engine.evaluate([subscription()], ownRenewals: [], host: host, nowMs: now)
        XCTAssertEqual(report.entitlement("pro.monthly")?.priceIncrease, "pending")
    }

    func testMergingInTheEngineEqualsMergingAtTheCallSite() {
        let own = [renewal(consent: "1")], host = EntitlementOptions(renewalInfo: [renewal(consent: "0")])
        let merged = engine.evaluate([subscription()], ownRenewals: own, host: host, nowMs: now)
        let given = engine.evaluate([subscription()], renewals: own + host.renewalInfo, host: host, nowMs: now)
        XCTAssertEqual(merged.entitlements, given.entitlements)
    }
}
