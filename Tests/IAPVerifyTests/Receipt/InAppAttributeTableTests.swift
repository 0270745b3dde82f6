import Foundation
import XCTest
@testable import IAPVerify

/// The in-app record's table (ReceiptRecordTable.swift) drives the decoder's two readings, the
/// result's `in_app` row and the engine's transactions: each row is checked through all of them.
final class InAppAttributeTableTests: XCTestCase {
    private func tlv(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] { AttributeDER.tlv(tag, content) }
    private func integer(_ v: Int64) -> [UInt8] { AttributeDER.integer(v) }
    private func attribute(_ type: Int64, _ value: [UInt8]) -> [UInt8] { AttributeDER.attribute(type, value) }

    /// A value of each kind, and what the result writes for it.
    private func sample(_ a: InAppAttribute) -> (der: [UInt8], json: Any) {
        switch a.value {
        case .integer: return (integer(3), 3)
        case .decimal: return (integer(1_000_000_123_456_789), "1000000123456789")
        case .flag: return (integer(1), true)
        case .text: return (tlv(0x0C, Array("t\(a.type)".utf8)), "t\(a.type)")
        case .date: return (tlv(0x16, Array("2020-05-06T07:08:09Z".utf8)), 1_588_748_889_000)
        }
    }

    /// A record holding every attribute of the table, plus one the table does not list.
    private func fullRecord() -> [UInt8] {
        AttributeDER.set(InAppAttributes.rows.map { attribute($0.type, sample($0).der) } + [attribute(1799, tlv(0x0C, [0x41]))])
    }

    func testEveryTypeOnceInApplesRangeWithItsOwnName() {
        let types = InAppAttributes.rows.map(\.type)
        XCTAssertEqual(Set(types).count, types.count)
        XCTAssertTrue(types.allSatisfy { (1700...1763).contains($0) })
        let names = InAppAttributes.rows.map { "\($0.name)" }
        XCTAssertEqual(Set(names).count, names.count)
        XCTAssertEqual(Set(InAppAttributes.rows.map(\.offset)).count, types.count, "two rows share a property")
        for type in Int64(1600)...1800 {
            XCTAssertEqual(ReceiptPayloadDecoder.readsInApp(type), types.contains(type), "type \(type)")
        }
    }

    /// The plain walk and the tree reading give the same purchase, every row read.
    func testBothReadersFillEveryRow() throws {
        let record = fullRecord()
        let plain = try ReceiptPayloadDecoder.inAppPurchase(record[...])
        XCTAssertTrue(plain.isPlainDER)
        var viaTree = InAppPurchase()
        viaTree.record = record[...]
        try AttributeSet.viaTree(record[...], what: "a record") { (type, version, value) throws(PayloadProblem) in
            try ReceiptPayloadDecoder.applyInApp(type, version, value, to: &viaTree)
        }
        viaTree.isPlainDER = true
        XCTAssertEqual(plain, viaTree)
        XCTAssertEqual(plain.unknownAttributes.map(\.type), [1799])
        XCTAssertEqual(plain.quantity, 3)
        XCTAssertEqual(plain.productID, "t1702")
        XCTAssertEqual(plain.webOrderLineItemID, "1000000123456789")
        XCTAssertEqual(plain.isInIntroOfferPeriod, true)
        XCTAssertEqual(plain.promotionalOfferID, "t1721")
        XCTAssertEqual(plain.productType, 3)
    }

    private func row(_ p: InAppPurchase) throws -> (keys: [String], object: [String: Any]) {
        var w = JSONWriter(capacity: 1024)
        w.beginObject()
        withUnsafePointer(to: p) { p in
            p.pointee.record.withUnsafeBufferPointer { InAppAttributes.writeMembers(of: p, text: $0, plan: InAppAttributes.plan, into: &w) }
        }
        w.endObject()
        let bytes = w.finish().bytes
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        // Member order, from the text (a dictionary forgets it).
        let text = String(decoding: bytes, as: UTF8.self)
        let keys = object.keys.sorted { text.range(of: "\"\($0)\":")!.lowerBound < text.range(of: "\"\($1)\":")!.lowerBound }
        return (keys, object)
    }

    /// The result's row: the Transaction table's members in its order, each row's value under its
    /// name, then the rows that table does not name.
    func testTheResultRowWritesEveryRowInTheTransactionShape() throws {
        let p = try ReceiptPayloadDecoder.inAppPurchase(fullRecord()[...])
        let (keys, object) = try row(p)
        let extras = InAppAttributes.extras.map { "\(InAppAttributes.rows[$0].name)" }
        XCTAssertEqual(extras, ["product_type"])
        XCTAssertEqual(keys, TransactionRecord.fields.alwaysWrittenNames + extras)
        XCTAssertEqual(InAppAttributes.columns.count, 16)
        for a in InAppAttributes.rows {
            let written = try XCTUnwrap(object["\(a.name)"], "\(a.name)")
            XCTAssertEqual(written as? NSObject, sample(a).json as? NSObject, "\(a.name)")
        }
        // What a receipt does not carry, as an empty transaction has it.
        XCTAssertTrue(object["cancellation_reason"] is NSNull)
        XCTAssertEqual(object["is_upgraded"] as? Bool, false)
    }

    /// A record with no attributes: every member as an empty transaction writes it (quantity 1,
    /// flags false, ids null) and no extras.
    func testAnEmptyRecordIsWrittenAsAnEmptyTransaction() throws {
        let p = try ReceiptPayloadDecoder.inAppPurchase([0x31, 0x00][...])
        let (keys, object) = try row(p)
        XCTAssertEqual(keys, TransactionRecord.fields.alwaysWrittenNames)
        XCTAssertEqual(object["quantity"] as? Int, 1)
        XCTAssertEqual(object["is_trial_period"] as? Bool, false)
        XCTAssertTrue(object["transaction_id"] is NSNull)
        XCTAssertTrue(object["purchase_date_ms"] is NSNull)
    }

    /// The transaction the engine and Swift callers get is written exactly as the result's row
    /// (the row's extras aside); the engine's leaves out only the rows it never reads.
    func testTheTransactionAgreesWithTheResultRow() throws {
        let p = try ReceiptPayloadDecoder.inAppPurchase(fullRecord()[...])
        var t = try XCTUnwrap(Transaction(p))
        var w = JSONWriter(capacity: 1024)
        TransactionRecord.write(&t, into: &w)
        let written = w.finish().bytes
        let transaction = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(written)) as? [String: Any])
        var (_, object) = try row(p)
        object["product_type"] = nil
        XCTAssertEqual(transaction as NSDictionary, object as NSDictionary)

        let engine = try XCTUnwrap(Transaction.all([p]).first)
        XCTAssertNil(engine.webOrderLineItemID)
        XCTAssertNil(engine.promotionalOfferID)
        var full = t
        full.webOrderLineItemID = nil
        full.promotionalOfferID = nil
        XCTAssertEqual(engine, full)
        XCTAssertEqual(Set(InAppTransactionFill.plan.targets.filter { !$0.attribute.engine }.map { "\($0.attribute.name)" }),
                       ["web_order_line_item_id", "promotional_offer_id"])
    }

    /// `iapverify fields`: the receipt record's members carry their attribute numbers.
    func testTheCatalogListsEveryAttribute() throws {
        let inApp = try XCTUnwrap(FieldCatalog.records.first { $0.record == "receipt_in_app" })
        XCTAssertEqual(Set(inApp.fields.compactMap(\.attribute)), Set(InAppAttributes.rows.map(\.type)))
        XCTAssertEqual(inApp.fields.last?.name, "unknown_attributes")
        let transaction = try XCTUnwrap(FieldCatalog.records.first { $0.record == "transaction" })
        XCTAssertEqual(transaction.fields.filter { $0.written == "always" }.map(\.name), TransactionRecord.fields.alwaysWrittenNames)
    }
}
