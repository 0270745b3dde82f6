// Advanced Commerce and billing plans: the items Apple signs with a purchase are read into the
// record, written as `advanced_commerce`, and judged one by one beside the entitlement; a monthly
// plan with a commitment shows where the customer is in it.

import XCTest
@_spi(Testing) @testable import IAPVerify

final class AdvancedCommerceTests: XCTestCase {
    static let info: [String: Any] = [
        "requestReferenceId": "ref-1", "period": "P1M", "taxCode": "C003-00-1", "taxRate": "0.08", "estimatedTax": 800,
        "taxExclusivePrice": 10000, "descriptors": ["displayName": "Studio", "description": "Everything"],
        "items": [
            ["SKU": "studio.base", "displayName": "Base", "description": "The base plan", "price": 8000,
             "offer": ["period": "P1M", "periodCount": 3, "price": 4000, "reason": "ACQUISITION"]],
            ["SKU": "studio.addon", "displayName": "Add-on", "description": "More", "price": 2000,
             "revocationDate": FakeApple.signedDate - 86_400_000,
             "refunds": [["refundAmount": 2000, "refundDate": FakeApple.signedDate - 86_400_000, "refundReason": "LEGAL",
                          "refundType": "FULL"]]],
        ]]

    func testItemsAreReadWrittenAndJudgedOneByOne() throws {
        let txn = FakeApple.transaction("1", extra: ["advancedCommerceInfo": Self.info, "billingPlanType": "MONTHLY",
                                                     "commitmentInfo": ["billingPeriodNumber": 2, "totalBillingPeriods": 12,
                                                                        "commitmentExpiresDate": FakeApple.signedDate + 300 * 86_400_000]])
        let v = try XCTUnwrap(FakeApple.verifier())
        let r = try verifyJWS(v, FakeApple.sign(txn), now: FakeApple.now)
        XCTAssertEqual(r.verdict, .valid, r.judgement.reason)
        let info = try XCTUnwrap(r.transaction?.commerce.advancedCommerce)
        XCTAssertEqual(info.items.map(\.sku), ["studio.base", "studio.addon"])
        XCTAssertEqual(info.items[0].offerPeriodCount, 3)
        XCTAssertEqual(info.items[1].refunds.first?.type, "FULL")

        let json = resultDict(r.resultJSON())
        let ac = try XCTUnwrap((json["transaction"] as? [String: Any])?["advanced_commerce"] as? [String: Any])
        XCTAssertEqual(ac["display_name"] as? String, "Studio")
        XCTAssertEqual(((ac["items"] as? [[String: Any]])?.first?["offer"] as? [String: Any])?["price"] as? Int, 4000)
        let entitlement = try XCTUnwrap((json["entitlements"] as? [[String: Any]])?.first)
        XCTAssertEqual(entitlement["active"] as? Bool, true)
        let items = try XCTUnwrap(entitlement["items"] as? [[String: Any]])
        XCTAssertEqual(items.map { $0["sku"] as? String }, ["studio.base", "studio.addon"])
        XCTAssertEqual(items.map { $0["active"] as? Bool }, [true, false], "the revoked add-on grants nothing; the base does")
        let billing = try XCTUnwrap((entitlement["evidence"] as? [String: Any])?["billing"] as? [String: Any])
        XCTAssertEqual(billing["plan_type"] as? String, "MONTHLY")
        XCTAssertEqual(billing["billing_period_number"] as? Int, 2)
        XCTAssertEqual(billing["total_billing_periods"] as? Int, 12)
    }

    func testARenewalInfoCarriesItsItems() throws {
        var renewal = FakeApple.renewal()
        renewal["advancedCommerceInfo"] = ["consistencyToken": "ct-1", "period": "P1M",
                                           "items": [["SKU": "studio.base", "price": 8000,
                                                      "priceIncreaseInfo": ["status": "SCHEDULED", "price": 9000]]]]
        let v = try XCTUnwrap(FakeApple.verifier())
        let r = try verifyJWS(v, FakeApple.sign(renewal), now: FakeApple.now)
        XCTAssertEqual(r.verdict, .valid, r.judgement.reason)
        let json = resultDict(r.resultJSON())
        let ac = try XCTUnwrap((json["renewal_info"] as? [String: Any])?["advanced_commerce"] as? [String: Any])
        XCTAssertEqual(ac["consistency_token"] as? String, "ct-1")
        let increase = ((ac["items"] as? [[String: Any]])?.first?["price_increase"] as? [String: Any])
        XCTAssertEqual(increase?["status"] as? String, "SCHEDULED")
    }

    func testAnItemWithoutASKUIsMalformed() throws {
        let txn = FakeApple.transaction("1", extra: ["advancedCommerceInfo": ["items": [["price": 1]]]])
        let v = try XCTUnwrap(FakeApple.verifier())
        let r = try verifyJWS(v, FakeApple.sign(txn), now: FakeApple.now)
        XCTAssertEqual(r.verdict, .malformed)
        XCTAssertTrue(r.judgement.reason.contains("SKU"), r.judgement.reason)
    }
}
