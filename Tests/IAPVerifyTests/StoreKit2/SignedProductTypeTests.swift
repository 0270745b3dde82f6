// Apple's signed product type decides when the catalog is silent: a consumable that StoreKit 2
// signed as "Consumable" is delivered, never owned. A catalog that says otherwise is used, and the
// result reports the contradiction.

import XCTest
@_spi(Testing) @testable import IAPVerify

final class SignedProductTypeTests: XCTestCase {
    let consumableNotifications = ["jws/notification_ONE_TIME_CHARGE_sandbox_2025-02.jws",
                                   "jws/notification_REFUND_sandbox_2025-02a.jws",
                                   "jws/notification_CONSUMPTION_REQUEST_sandbox_2025-02.jws"]

    func token(_ path: String) -> String {
        Fixtures.text(path).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func testWithoutACatalogASignedConsumableIsDeliveredNotOwned() throws {
        let v = try makeVerifierOrThrow(["bundle_id": "*", "environments": ["Sandbox"]])
        let r = try verifyJWS(v, token(consumableNotifications[0]), now: jan2030)
        XCTAssertEqual(r.verdict, .valid, r.judgement.reason)
        XCTAssertEqual(r.notification?.transaction?.commerce.type, "Consumable")
        let report = try XCTUnwrap(r.entitlements)
        XCTAssertEqual(report.entitlements, [], "a consumable grants no entitlement")
        XCTAssertEqual(report.purchases.map(\.type), [.consumable])
        XCTAssertEqual(report.delivery.toDeliver.map(\.productID), ["cynet.coci.1usd"])
    }

    func testEveryConsumableFixtureGrantsNothingWithoutACatalog() throws {
        let v = try makeVerifierOrThrow(["bundle_id": "*", "environments": ["Sandbox"]])
        for file in consumableNotifications {
            let r = try verifyJWS(v, token(file), now: jan2030)
            XCTAssertEqual(r.verdict, .valid, "\(file): \(r.judgement.reason)")
            XCTAssertFalse(r.entitlements?.entitlements.contains { $0.state == .owned } ?? true, file)
        }
    }

    func testACatalogThatContradictsAppleIsUsedAndReported() throws {
        let product = "cynet.coci.1usd"
        let v = try makeVerifierOrThrow(["bundle_id": "*", "environments": ["Sandbox"],
                                         "products": [product: ["type": "non_consumable"]]])
        let r = try verifyJWS(v, token(consumableNotifications[0]), now: jan2030)
        let report = try XCTUnwrap(r.entitlements)
        XCTAssertEqual(report.catalogConflicts, [CatalogConflict(productID: product, catalogType: .nonConsumable,
                                                                 signedType: "Consumable")])
        XCTAssertEqual(report.entitlement(product)?.state, .owned, "the catalog is the developer's decision")
        let json = String(decoding: r.resultJSON(), as: UTF8.self)
        XCTAssertTrue(json.contains(#""catalog_conflicts":[{"product_id":"cynet.coci.1usd","catalog_type":"non_consumable","signed_type":"Consumable"}]"#), json)
    }

    func testSignedTypesThatDisagreeOrAreUnknownGrantNothing() {
        var a = Transaction(transactionID: "1", productID: "p")
        a.purchaseDateMs = 1
        var b = a
        b.transactionID = "2"
        var ca = CommerceFields(), cb = CommerceFields()
        ca.type = "Non-Consumable"
        cb.type = "Consumable"
        a.commerce = ca
        b.commerce = cb
        let mixed = EntitlementEngine.evaluate(transactions: [a, b], renewals: [], catalog: nil, grace: .honor, nowMs: 10)
        XCTAssertEqual(mixed.entitlements, [])
        XCTAssertEqual(mixed.unknownProducts, ["p"])
        XCTAssertEqual(mixed.delivery.toDeliver, [])
        var unknown = a
        var cu = CommerceFields()
        cu.type = "Something New"
        unknown.commerce = cu
        let r = EntitlementEngine.evaluate(transactions: [unknown], renewals: [], catalog: nil, grace: .honor, nowMs: 10)
        XCTAssertEqual(r.entitlements, [])
        XCTAssertEqual(r.unknownProducts, ["p"])
    }
}
