// The Advanced Commerce API's six server calls: each request's method, path and body (re-written
// from the checked fields in the table's order), the body rules Apple documents, and the answers:
// the signed transaction and renewal info verified, surfaced as transactions and renewal_info.

import Foundation
import XCTest
@_spi(Testing) @testable import IAPVerify

final class AdvancedCommerceCallTests: XCTestCase {
    static let reference = "5C0F3F5B-1D2E-4A8B-9C6D-7E8F9A0B1C2D"
    static let info: [String: Any] = ["requestReferenceId": reference]

    /// One good call of each endpoint and the path it goes to (after advancedCommerce/v1/).
    static let calls: [(call: [String: Any], path: String)] = [
        (["endpoint": "advanced_commerce_cancel_subscription", "transaction_id": "1000",
          "body": ["requestInfo": info, "storefront": "USA"]], "subscription/cancel/1000"),
        (["endpoint": "advanced_commerce_change_subscription_metadata", "transaction_id": "1000",
          "body": ["requestInfo": info, "items": [["currentSKU": "news.basic", "effective": "IMMEDIATELY", "displayName": "News"]]]],
         "subscription/changeMetadata/1000"),
        (["endpoint": "advanced_commerce_change_subscription_price", "transaction_id": "1000",
          "body": ["requestInfo": info, "items": [["SKU": "news.basic", "price": 4990, "dependentSKUs": ["news.extra"]]], "currency": "USD"]],
         "subscription/changePrice/1000"),
        (["endpoint": "advanced_commerce_migrate_subscription", "transaction_id": "1000",
          "body": ["requestInfo": info, "descriptors": ["description": "All news", "displayName": "News"],
                   "items": [["SKU": "news.basic", "description": "Basic news", "displayName": "Basic"]],
                   "targetProductId": "com.example.news", "taxCode": "C003-00-1"]],
         "subscription/migrate/1000"),
        (["endpoint": "advanced_commerce_revoke_subscription", "transaction_id": "1000",
          "body": ["requestInfo": info, "refundRiskingPreference": true, "refundType": "FULL", "refundReason": "LEGAL"]],
         "subscription/revoke/1000"),
        (["endpoint": "advanced_commerce_request_refund", "transaction_id": "2001",
          "body": ["requestInfo": info, "refundRiskingPreference": false, "currency": "EUR", "storefront": "FRA",
                   "items": [["SKU": "news.basic", "refundReason": "UNSATISFIED_WITH_PURCHASE", "refundType": "CUSTOM",
                              "revoke": false, "refundAmount": 1500]]]],
         "transaction/requestRefund/2001"),
    ]

    private func build(_ call: [String: Any]) -> Result<APIRequest, IAPVFailure> {
        let s = try! FakeApple.signer()
        let bytes = FakeApple.json(call)
        return bytes.withUnsafeBytes { raw in
            Result { () throws(IAPVFailure) -> APIRequest in try s.apiRequest(raw, nowMs: FakeApple.now) }
        }
    }

    func testEveryCallIsAPostWithItsCheckedBody() throws {
        XCTAssertEqual(Set(Self.calls.map { $0.call["endpoint"] as! String }),
                       Set(APIEndpoint.allCases.map(\.rawValue).filter { $0.hasPrefix("advanced_commerce_") }))
        for (call, path) in Self.calls {
            let r = try build(call).get()
            XCTAssertEqual(r.method, "POST")
            XCTAssertEqual(r.url, "https://api.storekit.apple.com/advancedCommerce/v1/\(path)")
            XCTAssertEqual(r.headers.map(\.name), ["Authorization", "Accept", "Content-Type"])
            let sent = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(try XCTUnwrap(r.body))) as? [String: Any])
            XCTAssertEqual(sent as NSDictionary, (call["body"] as! [String: Any]).merging(
                ["requestInfo": ["requestReferenceId": Self.reference.lowercased()]]) { $1 } as NSDictionary)
        }
        // The body is written in the table's order (requestInfo first), never in the call's.
        let revoke = try build(["endpoint": "advanced_commerce_revoke_subscription", "transaction_id": "1000", "environment": "Sandbox",
                                "body": ["storefront": "USA", "refundReason": "OTHER", "refundType": "PRORATED",
                                         "refundRiskingPreference": false,
                                         "requestInfo": ["consistencyToken": "ct-1", "appAccountToken": Self.reference,
                                                         "requestReferenceId": Self.reference]]]).get()
        XCTAssertEqual(revoke.url, "https://api.storekit-sandbox.apple.com/advancedCommerce/v1/subscription/revoke/1000")
        let id = Self.reference.lowercased()
        XCTAssertEqual(String(decoding: try XCTUnwrap(revoke.body), as: UTF8.self),
                       "{\"requestInfo\":{\"requestReferenceId\":\"\(id)\",\"appAccountToken\":\"\(id)\",\"consistencyToken\":\"ct-1\"},"
                       + "\"refundRiskingPreference\":false,\"refundType\":\"PRORATED\",\"refundReason\":\"OTHER\",\"storefront\":\"USA\"}")
    }

    func testBodiesAreCheckedAsAppleDocumentsThem() {
        let cancel = "advanced_commerce_cancel_subscription"
        let price = "advanced_commerce_change_subscription_price"
        let refund = "advanced_commerce_request_refund"
        let migrate = "advanced_commerce_migrate_subscription"
        let metadata = "advanced_commerce_change_subscription_metadata"
        func call(_ endpoint: String, _ body: [String: Any], id: String? = "1000") -> [String: Any] {
            var c: [String: Any] = ["endpoint": endpoint, "body": body]
            if let id { c["transaction_id"] = id }
            return c
        }
        let refundItem: [String: Any] = ["SKU": "a", "refundReason": "LEGAL", "refundType": "FULL", "revoke": true]
        let described: [String: Any] = ["SKU": "a", "description": "d", "displayName": "n"]
        let migrateBody: [String: Any] = ["requestInfo": Self.info, "descriptors": ["description": "d", "displayName": "n"],
                                          "items": [described], "targetProductId": "p", "taxCode": "t"]
        let cases: [([String: Any], String)] = [
            (call(cancel, ["requestInfo": Self.info], id: nil), "needs call.transaction_id"),
            (call(cancel, [:]), "needs call.body.requestInfo"),
            (call(cancel, ["requestInfo": ["requestReferenceId": "r-1"]]), "call.body.requestInfo.requestReferenceId must be a UUID"),
            (call(cancel, ["requestInfo": ["appAccountToken": Self.reference]]), "needs requestReferenceId"),
            (call(cancel, ["requestInfo": Self.info, "storefront": "usa"]), "call.body.storefront must be 3 capital letters"),
            (call(cancel, ["requestInfo": Self.info, "storefront": "US"]), "storefront"),
            (call(cancel, ["requestInfo": Self.info, "reason": "x"]), "call.body.reason is not a field"),
            (call(price, ["requestInfo": Self.info]), "needs call.body.items"),
            (call(price, ["requestInfo": Self.info, "items": []]), "must be a non-empty list"),
            (call(price, ["requestInfo": Self.info, "items": [["SKU": "a", "price": -1]]]), "items[0].price"),
            (call(price, ["requestInfo": Self.info, "items": [["SKU": "a", "price": 1]], "currency": "dollars"]), "currency"),
            (call(price, ["requestInfo": Self.info, "items": [["SKU": String(repeating: "s", count: 129), "price": 1]]]), "items[0].SKU"),
            (call(refund, ["requestInfo": Self.info, "items": [refundItem]]), "refundRiskingPreference"),
            (call(refund, ["requestInfo": Self.info, "refundRiskingPreference": true,
                           "items": [refundItem.merging(["refundType": "HALF"]) { $1 }]]), "one of FULL, PRORATED, CUSTOM"),
            (call(refund, ["requestInfo": Self.info, "refundRiskingPreference": true,
                           "items": [refundItem.merging(["refundReason": "BORED"]) { $1 }]]), "refundReason"),
            (call(refund, ["requestInfo": Self.info, "refundRiskingPreference": true,
                           "items": [refundItem.merging(["refundAmount": 3_000_000_000]) { $1 }]]), "refundAmount"),
            (call(refund, ["requestInfo": Self.info, "refundRiskingPreference": true,
                           "items": [refundItem.filter { $0.key != "revoke" }]]), "needs revoke"),
            (call(migrate, migrateBody.filter { $0.key != "taxCode" }), "needs call.body.taxCode"),
            (call(migrate, migrateBody.merging(["descriptors": ["description": String(repeating: "d", count: 46), "displayName": "n"]]) { $1 }),
             "descriptors.description must be a string of at most 45"),
            (call(migrate, migrateBody.merging(["items": [described.merging(["displayName": String(repeating: "n", count: 31)]) { $1 }]]) { $1 }),
             "items[0].displayName must be a string of at most 30"),
            (call(metadata, ["requestInfo": Self.info, "descriptors": ["displayName": "n"]]), "needs effective"),
            (call(metadata, ["requestInfo": Self.info, "items": [["currentSKU": "a", "effective": "LATER"]]]), "IMMEDIATELY, NEXT_BILL_CYCLE"),
        ]
        for (c, expected) in cases {
            switch build(c) {
            case .success(let r): XCTFail("built \(r.url) with \(String(decoding: r.body ?? [], as: UTF8.self))")
            case .failure(let e):
                XCTAssertEqual(e.status, .invalidArgument)
                XCTAssertTrue(e.message.contains(expected), "\(e.message) should say \(expected)")
            }
        }
        // Characters, not bytes, as Apple counts them: 30 accented letters are a good display name.
        XCTAssertNoThrow(try build(call(migrate, migrateBody.merging(
            ["descriptors": ["description": "d", "displayName": String(repeating: "é", count: 30)]]) { $1 })).get())
    }

    // MARK: answers

    private func interpret(_ body: [UInt8], _ endpoint: String, status: Int = 200, environment: String = "Production") throws -> APIResponseReport {
        let v = try XCTUnwrap(FakeApple.verifier())
        return try v.interpretAPIResponse(body, options: apiOptions(endpoint, status: status, environment: environment), nowMs: FakeApple.now)
    }

    private let commerce: [String: Any] = ["advancedCommerceInfo": ["requestReferenceId": reference.lowercased(), "period": "P1M",
                                                                    "taxCode": "C003-00-1", "estimatedTax": 400,
                                                                    "items": [["SKU": "news.basic", "description": "Basic news",
                                                                               "displayName": "Basic", "price": 4990]]]]

    func testAnswersAreVerifiedAndSurfaced() throws {
        let txn = FakeApple.transaction("2001", original: "1000")
        let renewal = FakeApple.renewal(original: "1000", autoRenew: 0)
        let both = FakeApple.json(["signedTransactionInfo": FakeApple.sign(txn), "signedRenewalInfo": FakeApple.sign(renewal)])
        for (call, _) in Self.calls where call["endpoint"] as! String != "advanced_commerce_request_refund" {
            let endpoint = call["endpoint"] as! String
            let r = try interpret(both, endpoint)
            XCTAssertEqual(r.verdict, .valid, "\(endpoint): \(r.judgement.reason)")
            XCTAssertEqual(r.action, .accept)
            XCTAssertEqual(r.signedItems, 2)
            XCTAssertEqual(r.transactions.map(\.transactionID), ["2001"])
            XCTAssertEqual(r.renewals.map(\.originalTransactionID), ["1000"])
            let doc = resultDict(r.resultJSON())
            XCTAssertEqual(doc["endpoint"] as? String, endpoint)
            XCTAssertEqual((doc["transactions"] as? [[String: Any]])?.first?["transaction_id"] as? String, "2001")
            XCTAssertEqual((doc["renewal_info"] as? [[String: Any]])?.count, 1)
            XCTAssertEqual((doc["unsigned"] as? [String: Any])?.count, 0)
        }
        // A refund answers with the transaction alone; its Advanced Commerce fields come through.
        let refunded = FakeApple.transaction("2001", original: "1000", extra: commerce.merging(["revocationDate": FakeApple.signedDate,
                                                                                                 "revocationReason": 0]) { $1 })
        let r = try interpret(FakeApple.json(["signedTransactionInfo": FakeApple.sign(refunded)]), "advanced_commerce_request_refund")
        XCTAssertEqual(r.verdict, .valid, r.judgement.reason)
        XCTAssertEqual(r.signedItems, 1)
        XCTAssertNotNil(r.transactions.first?.commerce.advancedCommerce)
        XCTAssertTrue(r.renewals.isEmpty)
    }

    func testAnAnswerIsTrustedOnlyAsAWhole() throws {
        let endpoint = "advanced_commerce_change_subscription_price"
        let txn = FakeApple.sign(FakeApple.transaction("2001", original: "1000"))
        var parts = FakeApple.sign(FakeApple.renewal(original: "1000")).split(separator: ".").map(String.init)
        parts[1] = Base64.encodeURL(FakeApple.json(FakeApple.renewal(original: "1000", product: "pro.yearly")))
        let cases: [([String: Any], Verdict, String)] = [
            (["signedRenewalInfo": FakeApple.sign(FakeApple.renewal(original: "1000"))], .malformed, "signedTransactionInfo"),
            (["signedTransactionInfo": txn, "signedRenewalInfo": parts.joined(separator: ".")], .signatureInvalid, "signedRenewalInfo"),
            (["signedTransactionInfo": txn, "signedRenewalInfo": FakeApple.sign(FakeApple.renewal(original: "9"))], .malformed, "subscription 9"),
            (["signedTransactionInfo": FakeApple.sign(FakeApple.renewal(original: "1000"))], .malformed, "not a transaction"),
            (["signedTransactionInfo": FakeApple.sign(FakeApple.transaction("2001", environment: "Sandbox"))], .environmentRejected, "Sandbox"),
            (["signedTransactionInfo": FakeApple.sign(FakeApple.transaction("2001", bundleID: "com.other"))], .bundleMismatch, "signedTransactionInfo"),
            (["signedTransactionInfo": 7], .malformed, "must be a JWS string"),
        ]
        for (body, verdict, words) in cases {
            let r = try interpret(FakeApple.json(body), endpoint)
            XCTAssertEqual(r.verdict, verdict, r.judgement.reason)
            XCTAssertTrue(r.judgement.reason.contains(words), "\(r.judgement.reason) should say \(words)")
            XCTAssertEqual(r.action, .reject)
            XCTAssertTrue(r.transactions.isEmpty)
        }
        // Apple's errors go through the action table like every other call's.
        let notFound = FakeApple.json(["errorCode": 4040010, "errorMessage": "Transaction id not found."])
        XCTAssertEqual(try interpret(notFound, endpoint, status: 404).action, .retrySandbox)
        XCTAssertEqual(try interpret(notFound, endpoint, status: 404, environment: "Sandbox").action, .reject)
        let bad = FakeApple.json(["errorCode": 4000000, "errorMessage": "Bad request."])
        XCTAssertEqual(try interpret(bad, "advanced_commerce_request_refund", status: 400).verdict, .rejectedByApple)
    }
}
