// A forged receipt costs no more than a genuine one: before the chain and signature
// pass, only the receipt type and creation date are read, and a result decided at checks 2–7
// carries no purchases. The forgery keeps the real 187-purchase receipt's Apple chain and signer
// and swaps its payload for 100,000 minimal purchases.

import XCTest
@_spi(Testing) @testable import IAPVerify

final class ForgedReceiptTests: XCTestCase {
    static let genuine = "receipts/sandbox_2020-05-06_com.nutcall.alert_187iap.der"

    /// The genuine receipt with its payload replaced: its own app-level attributes, then
    /// `count` in-app records of an empty SET each (12 bytes apiece).
    static func forged(count: Int) throws -> [UInt8] {
        let original = Fixtures.data(genuine)
        var root = try XCTUnwrap(UnsignedFieldTests.Node.parse(original))
        let contentPath = UnsignedFieldTests.signedData + [2, 1, 0]
        guard case .primitive(_, let payload) = root[contentPath] else { throw XCTSkip("content is not primitive") }
        let attributes = try XCTUnwrap(AttributeSet.direct(payload[...]))
        var body: [UInt8] = []
        for a in attributes where a.type != 17 {
            body += UnsignedFieldTests.tlv(0x30, UnsignedFieldTests.tlv(0x02, [UInt8(a.type)]) + [0x02, 0x01, UInt8(a.version)]
                                           + UnsignedFieldTests.tlv(0x04, Array(a.value)))
        }
        let record: [UInt8] = [0x30, 0x0A, 0x02, 0x01, 0x11, 0x02, 0x01, 0x01, 0x04, 0x02, 0x31, 0x00]
        body.reserveCapacity(body.count + count * record.count)
        for _ in 0..<count { body += record }
        root[contentPath] = .primitive(0x04, UnsignedFieldTests.tlv(0x31, body))
        return root.encoded
    }

    func testForgedPayloadIsNeitherDecodedNorReported() throws {
        let v = try makeVerifierOrThrow(["bundle_id": "*", "environments": ["Production", "Sandbox"]])
        let bytes = try Self.forged(count: 100_000)
        XCTAssertGreaterThan(bytes.count, 1_200_000)
        XCTAssertLessThan(bytes.count, v.config.maxInputBytes)
        for path in [CryptoPath.cached, .reference] {
            let r = try v.verify(bytes, now: jan2030, path: path)
            XCTAssertEqual(r.verdict, .signatureInvalid, "\(path): \(r.judgement.reason)")
            XCTAssertFalse(r.payloadIsComplete, "\(path)")
            XCTAssertEqual(r.payload?.inApp.count, 0, "\(path): nothing of the forged payload is decoded")
            let json = r.resultJSON()
            XCTAssertLessThanOrEqual(json.count, 64 * 1024, "\(path)")
            let doc = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json)) as? [String: Any])
            let receipt = try XCTUnwrap(doc["receipt"] as? [String: Any])
            XCTAssertEqual(receipt["trusted"] as? Bool, false)
            XCTAssertNil(receipt["in_app"], "\(path): a result decided at checks 2-7 lists no purchases")
            XCTAssertEqual(Set(receipt.keys), ["trusted", "environment", "receipt_type", "creation_date_ms"])
            XCTAssertEqual((doc["purchases"] as? [Any])?.count ?? 0, 0)
        }
    }

    /// The genuine receipt still reports every purchase, and its payload is decoded once verified.
    func testGenuineReceiptStillListsItsPurchases() throws {
        let v = try makeVerifierOrThrow(["bundle_id": "*", "environments": ["Production", "Sandbox"]])
        let r = try v.verify(Fixtures.data(Self.genuine), now: jan2030)
        XCTAssertEqual(r.verdict, .valid, r.judgement.reason)
        XCTAssertTrue(r.payloadIsComplete)
        XCTAssertEqual(r.payload?.inApp.count, 187)
        let doc = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.resultJSON())) as? [String: Any])
        XCTAssertEqual(((doc["receipt"] as? [String: Any])?["in_app"] as? [Any])?.count, 187)
    }

    /// A payload fault outside the header is read only once the signature holds; before that,
    /// a fake chain decides. (Under a trusted chain the same fault is `malformed`: FakePKITests.)
    func testHeaderFaultsAreStillMalformedBeforeTheChain() throws {
        let v = try makeVerifierOrThrow(["bundle_id": "*", "environments": ["Production", "Sandbox"]])
        let original = Fixtures.data(Self.genuine)
        var root = try XCTUnwrap(UnsignedFieldTests.Node.parse(original))
        let contentPath = UnsignedFieldTests.signedData + [2, 1, 0]
        guard case .primitive(_, let payload) = root[contentPath] else { throw XCTSkip("content is not primitive") }
        // Attribute 12 twice: the creation date is ambiguous, so no validation time can be picked.
        let attributes = try XCTUnwrap(AttributeSet.direct(payload[...]))
        let creation = try XCTUnwrap(attributes.first { $0.type == 12 })
        let extra = UnsignedFieldTests.tlv(0x30, [0x02, 0x01, 0x0C, 0x02, 0x01, UInt8(creation.version)] + UnsignedFieldTests.tlv(0x04, Array(creation.value)))
        guard case .constructed(_, let setContent) = UnsignedFieldTests.Node.parse(Array(payload))! else { return XCTFail() }
        root[contentPath] = .primitive(0x04, UnsignedFieldTests.tlv(0x31, setContent.flatMap { $0.encoded } + extra))
        let r = try v.verify(root.encoded, now: jan2030)
        XCTAssertEqual(r.verdict, .malformed, r.judgement.reason)
        XCTAssertEqual(r.state(.payload), .failed)
    }

    /// Per-call options are capped by max_input_bytes like the input they come with.
    func testOptionsAreCappedLikeTheInput() throws {
        let v = try makeVerifierOrThrow(["bundle_id": "*", "max_input_bytes": 1000])
        let small = Array(#"{"delivered_transaction_ids":["1"]}"#.utf8)
        XCTAssertNoThrow(try small.withUnsafeBytes { raw throws(IAPVFailure) in try v.options(json: raw, as: EntitlementOptions.self) })
        let big = Array(("{\"delivered_transaction_ids\":[" + (0..<300).map { "\"\($0)\"" }.joined(separator: ",") + "]}").utf8)
        XCTAssertGreaterThan(big.count, 1000)
        XCTAssertThrowsError(try big.withUnsafeBytes { raw throws(IAPVFailure) in try v.options(json: raw, as: EntitlementOptions.self) }) {
            XCTAssertEqual(($0 as? IAPVFailure)?.status, .tooLarge)
        }
    }
}
