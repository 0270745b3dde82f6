// iOS 6 style transaction receipts: the transaction id is read, marked unverified, never valid;
// anything that is not one is malformed with a reason.

import XCTest
@_spi(Testing) @testable import IAPVerify

final class TransactionReceiptTests: XCTestCase {
    static let purchaseInfo = """
    {
    \t"original-purchase-date-pst" = "2012-04-30 08:05:55 America/Los_Angeles";
    \t"original-transaction-id" = "1000000046178817";
    \t"transaction-id" = "1000000046178818";
    \t"quantity" = "1";
    \t"product-id" = "com.example.coins";
    \t"bid" = "com.example.app";
    \t"purchase-date-ms" = "1335798355868";
    \t"note" = "a \\"quoted\\" word";
    }
    """

    static func receipt(info: String = purchaseInfo, extra: String = "\t\"environment\" = \"Sandbox\";\n") -> String {
        let outer = "{\n\t\"signature\" = \"AluGxOuMy+RT1gkyFCoD1i1KT3KUZl+F5FAAW0ELBlCU\";\n\t\"purchase-info\" = \""
            + Base64.encode(Array(info.utf8)) + "\";\n" + extra + "\t\"pod\" = \"100\";\n\t\"signing-status\" = \"0\";\n}"
        return Base64.encode(Array(outer.utf8))
    }

    func read(_ text: String) -> TransactionReceiptReport {
        Array(text.utf8).withUnsafeBytes { TransactionReceiptReader.read($0) }
    }

    func testTheTransactionIDIsReadAndMarkedUnverified() throws {
        let r = read(Self.receipt())
        XCTAssertTrue(r.isRead, r.reason)
        XCTAssertEqual(r.verdictName, "unverified")
        XCTAssertEqual(r.transactionID, "1000000046178818")
        XCTAssertEqual(r.environment, "Sandbox")
        XCTAssertEqual(r.purchaseInfo.first { $0.key == "note" }?.value, "a \"quoted\" word")
        let json = try JSONSerialization.jsonObject(with: Data(r.resultJSON())) as! [String: Any]
        XCTAssertEqual(json["verdict"] as? String, "unverified")
        XCTAssertEqual(json["trusted"] as? Bool, false)
        XCTAssertEqual(json["transaction_id"] as? String, "1000000046178818")
        XCTAssertTrue((json["reason"] as? String ?? "").contains("not verified"))
        // The property list itself, not base64, reads the same; production receipts name no environment.
        let plain = String(decoding: Base64.decode(Array(Self.receipt(extra: "").utf8))!, as: UTF8.self)
        let p = read(plain)
        XCTAssertEqual(p.transactionID, "1000000046178818")
        XCTAssertNil(p.environment)
        XCTAssertTrue(Array(plain.utf8).withUnsafeBytes { TransactionReceiptReader.looksLikeOne($0) })
    }

    func testWhatIsNotOneIsMalformed() {
        let cases: [(String, String)] = [
            ("", "empty"),
            ("not base64 at all!", "neither"),
            (Base64.encode(Array("{ \"a\" = \"b\"; }".utf8)), "purchase-info"),
            (Self.receipt(info: "{ \"quantity\" = \"1\"; }"), "transaction-id"),
            (Self.receipt(info: "{ \"transaction-id\" = \"1/../2\"; }"), "not an id"),
            (Self.receipt(info: "{ \"transaction-id\" = (\"1\"); }"), "not a property list"),
            (Self.receipt(info: "{ \"transaction-id\" = \"1\"; \"transaction-id\" = \"2\"; }"), "twice"),
            (Base64.encode(Array("{ \"purchase-info\" = \"x\" }".utf8)), "\";\" is missing"),
            (Base64.encode(Array("{ \"purchase-info\" = \"%%%\"; }".utf8)), "not base64"),
            (Base64.encode(Array("{ \"purchase-info\" = \"e30=\"; } trailing".utf8)), "follow"),
        ]
        for (text, words) in cases {
            let r = read(text)
            XCTAssertFalse(r.isRead, text)
            XCTAssertEqual(r.verdictName, "malformed")
            XCTAssertTrue(r.reason.contains(words), "\(r.reason) should say \(words)")
            XCTAssertNil(r.transactionID)
        }
        // JSON is not a transaction receipt, even with the key (inspect sends it elsewhere).
        for json in [#" {"status":0}"#, #"{"purchase-info": "e30="}"#] {
            XCTAssertFalse(Array(json.utf8).withUnsafeBytes { TransactionReceiptReader.looksLikeOne($0) }, json)
        }
        // An app receipt is not a transaction receipt.
        let app = Fixtures.data("receipts/sandbox_2020-07-22_com.revenuecat.sampleapp.der")
        XCTAssertFalse(app.withUnsafeBytes { TransactionReceiptReader.looksLikeOne($0) })
    }
}
