// The 34 real Apple receipts and 6 Xcode receipts: verdicts at their creation date + 1 day and
// at 2030-01-01 on both crypto paths, and decoded fields against the facts in MANIFEST.md.

import Foundation
import XCTest
@_spi(Testing) @testable import IAPVerify

final class RealReceiptTests: XCTestCase {
    static let expected = Fixtures.json("expected-receipts.json")["receipts"] as? [String: [String: Any]] ?? [:]

    func testAll34RealReceiptsAreValidAtCreationPlusOneDayAndIn2030() throws {
        let files = Fixtures.list("receipts")
        XCTAssertEqual(files.count, 34)
        for file in files {
            let facts = try XCTUnwrap(Self.expected[file], file)
            let bundle = try XCTUnwrap(facts["bundle_id"] as? String)
            let created = try XCTUnwrap(RFC3339.milliseconds(Array((facts["created"] as? String ?? "").utf8)))
            guard let v = makeVerifier(["bundle_id": bundle, "environments": ["Production", "Sandbox"]]) else { return }
            let bytes = Fixtures.data("receipts/\(file)")
            for now in [created + day, jan2030] {
                for path in [CryptoPath.cached, .reference] {
                    let r = try v.verify(bytes, now: now, path: path)
                    XCTAssertEqual(r.verdict, .valid, "\(file) at \(now) via \(path): \(r.judgement.reason)")
                    XCTAssertTrue(r.trusted)
                    XCTAssertEqual(r.chain.count, 3, file)
                }
            }
        }
    }

    func testDecodedFieldsMatchTheManifest() throws {
        for file in Fixtures.list("receipts") {
            let facts = try XCTUnwrap(Self.expected[file])
            guard let v = makeVerifier(["bundle_id": "*", "environments": ["Production", "Sandbox"]]) else { return }
            let r = try v.verify(Fixtures.data("receipts/\(file)"), now: jan2030)
            let p = try XCTUnwrap(r.payload, file)
            XCTAssertEqual(p.bundleID, facts["bundle_id"] as? String, file)
            XCTAssertEqual(p.appVersion, facts["app_version"] as? String, file)
            if let orig = facts["original_app_version"] as? String { XCTAssertEqual(p.originalAppVersion, orig, file) }
            XCTAssertEqual(p.creationDateMs, RFC3339.milliseconds(Array((facts["created"] as? String ?? "").utf8)), file)
            if let item = facts["app_item_id"] as? String { XCTAssertEqual(p.appItemID, item, file) }
            XCTAssertEqual(r.digest?.rawValue, facts["digest"] as? String, file)
            XCTAssertEqual(p.inApp.count, facts["in_app_count"] as? Int, file)
            let txns = facts["transactions"] as? [[String: String]] ?? []
            for t in txns {
                XCTAssertTrue(p.inApp.contains { $0.transactionID == t["transaction_id"] && $0.productID == t["product_id"] },
                              "\(file): missing \(t)")
            }
            XCTAssertNotNil(p.opaqueValue, file)
            XCTAssertEqual(p.sha1Hash?.count, 20, file)
            XCTAssertEqual(p.receiptType == "Production", file.hasPrefix("production_"), file)
        }
    }

    /// `readsInApp` lists exactly the in-app types the decoder reads into fields: given an
    /// INTEGER, a read type fills a field or refuses the value; any other type changes nothing
    /// (it is listed under `unknownAttributes`).
    func testInAppTypesReadMatchTheDecoder() {
        for type in Int64(1680)...1760 {
            var p = InAppPurchase()
            var refused = false
            do { try ReceiptPayloadDecoder.applyInApp(type, 1, [0x02, 0x01, 0x01][...], to: &p) } catch { refused = true }
            XCTAssertEqual(ReceiptPayloadDecoder.readsInApp(type), refused || p != InAppPurchase(), "type \(type)")
        }
    }

    /// A receipt's `in_app` members are written from views of the record, by their own table:
    /// the same names in the same order as every other source's transactions.
    func testReceiptRecordTableWritesTheTransactionShape() {
        XCTAssertEqual(InAppAttributes.columns.map { "\($0.name)" }, TransactionRecord.fields.alwaysWrittenNames)
        XCTAssertEqual(InAppAttributes.columns.count, 16)
    }

    /// Ids are views of the signed record: the public model makes the same text from them.
    func testInAppIdsAreViewsOfTheRecord() throws {
        let data = try Fixtures.data("receipts/sandbox_2020-05-06_com.nutcall.alert_187iap.der")
        guard let v = makeVerifier(["bundle_id": "*", "environments": ["Production", "Sandbox"]]) else { return }
        let r = try v.verify(data, now: jan2030)
        let purchases = try XCTUnwrap(r.payload?.inApp)
        XCTAssertEqual(purchases.count, 187)
        for p in purchases {
            let id = try XCTUnwrap(p.transactionID)
            XCTAssertFalse(id.isEmpty)
            XCTAssertEqual(p.withText(p.transactionIDText) { Array($0) }, Array(id.utf8))
            XCTAssertEqual(p.webOrderLineItemID, p.webOrderLineItem.map { String($0) })
            XCTAssertNil(p.promotionalOfferID)
        }
    }

    /// Unknown in-app attributes are read from the record on demand, in payload order.
    func testUnknownInAppAttributesComeFromTheRecord() throws {
        guard let v = makeVerifier(["bundle_id": "*", "environments": ["Production", "Sandbox"]]) else { return }
        let r = try v.verify(Fixtures.data("receipts/sandbox_2020-05-06_com.nutcall.alert_187iap.der"), now: jan2030)
        let payload = try XCTUnwrap(r.payload)
        let first = try XCTUnwrap(payload.inApp.first)
        let direct = try XCTUnwrap(AttributeSet.direct(first.record))
        XCTAssertEqual(first.unknownAttributes.map(\.type), direct.map(\.type).filter { !ReceiptPayloadDecoder.readsInApp($0) })
        XCTAssertFalse(first.unknownAttributes.isEmpty)
    }

    func testFamilySharedReceiptKeepsAn18DigitTransactionID() throws {
        guard let v = makeVerifier(["bundle_id": "com.phonetracker.findus"]) else { return }
        let r = try v.verify(Fixtures.data("receipts/production_2021-11-23_com.phonetracker.findus_familyshared.der"), now: jan2030)
        XCTAssertEqual(r.verdict, .valid)
        XCTAssertEqual(Set(r.payload?.inApp.compactMap(\.transactionID) ?? []), ["540000823485156", "500880970751784867"])
    }

    func testReceiptAcceptedAsBase64InEveryCommonForm() throws {
        let der = Fixtures.data("receipts/production_2025-04-18_com.dashedspace.analytics_sha256.der")
        guard let v = makeVerifier(["bundle_id": "com.dashedspace.analytics"]) else { return }
        let standard = Data(der).base64EncodedString()
        let wrapped = Data(der).base64EncodedString(options: [.lineLength64Characters, .endLineWithCarriageReturn, .endLineWithLineFeed])
        let unpadded = standard.trimmingCharacters(in: CharacterSet(charactersIn: "="))
        let urlSafe = standard.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        for form in [standard, wrapped, unpadded, urlSafe, " \(standard)\n"] {
            XCTAssertEqual(try v.verify(Array(form.utf8), now: jan2030).verdict, .valid)
        }
        XCTAssertEqual(try v.verify(Array("not base64 at all!".utf8), now: jan2030).verdict, .malformed)
        XCTAssertEqual(try v.verify([], now: jan2030).verdict, .malformed)
    }

    func testSandboxReceiptIsRejectedByAProductionOnlyConfig() throws {
        guard let v = makeVerifier(["bundle_id": "com.zhihu.test"]) else { return }
        let r = try v.verify(Fixtures.data("receipts/sandbox_2016-07-23_com.zhihu.test.der"), now: jan2030)
        XCTAssertEqual(r.verdict, .environmentRejected)
        XCTAssertFalse(r.trusted)
    }

    func testAppleRootsMatchTheFingerprintsInDomainMD() {
        let domain: [String: String] = [
            "Apple Root CA (2006)": "B0B1730ECBC7FF4505142C49F1295E6EDA6BCAED7E2C68C5BE91B5A11001F024",
            "Apple Root CA - G2": "C2B9B042DD57830E7D117DAC55AC8AE19407D38E41D88F3215BC3A890444A050",
            "Apple Root CA - G3": "63343ABFB89A6A03EBB57E9B3F5FA7BE7C4F5C756F3017B3A8C488C3653E9179",
        ]
        XCTAssertEqual(AppleRoots.all.count, 3)
        for root in AppleRoots.all {
            let der = Base64.decode(Array(root.base64DER.utf8)) ?? []
            XCTAssertEqual(Hex.encode(Digest.sha256(der), uppercase: true), domain[root.name], root.name)
            XCTAssertEqual(root.pinnedSHA256, domain[root.name])
            let cert = X509Certificate(der: der)
            XCTAssertTrue(cert?.isCA == true && cert?.isSelfSigned == true, "\(root.name) must be a self-signed CA")
        }
    }
}

final class XcodeReceiptTests: XCTestCase {
    func xcodeConfig(accept: Bool, bundle: String = "*") -> [String: Any] {
        ["bundle_id": bundle, "environments": ["Xcode"], "xcode": ["accept": accept, "roots_pem": accept ? [Fixtures.storeKitPEM] : []]]
    }

    func testXcodeReceiptsAreValidOnlyWithXcodeAccept() throws {
        let files = Fixtures.list("xcode")
        XCTAssertEqual(files.count, 6)
        let expected = RealReceiptTests.expected
        for file in files {
            let bytes = Fixtures.data("xcode/\(file)")
            XCTAssertEqual(Array(bytes.prefix(2)), [0x30, 0x80], "\(file) is BER with an indefinite length")
            let bundle = expected[file]?["bundle_id"] as? String ?? "?"
            guard let accept = makeVerifier(xcodeConfig(accept: true, bundle: bundle)),
                  let reject = makeVerifier(xcodeConfig(accept: false, bundle: bundle)) else { return }
            for path in [CryptoPath.cached, .reference] {
                let ok = try accept.verify(bytes, now: jan2030, path: path)
                XCTAssertEqual(ok.verdict, .valid, "\(file) via \(path): \(ok.judgement.reason)")
                XCTAssertEqual(ok.state(.signer), .skipped)
                XCTAssertEqual(try reject.verify(bytes, now: jan2030, path: path).verdict, .environmentRejected, file)
            }
            XCTAssertEqual(accept.config.environments, [.xcode])
        }
    }

    func testXcodeReceiptsNeverChainToAppleRoots() throws {
        // Accepting Xcode receipts while listing an Apple root as the Xcode anchor still fails.
        let g3 = Fixtures.text("certs/AppleRootCA-G3.pem")
        guard let v = makeVerifier(["bundle_id": "*", "environments": ["Xcode"], "xcode": ["accept": true, "roots_pem": [g3]]]) else { return }
        let r = try v.verify(Fixtures.data("xcode/xcode_2023-10-19_backyardbirds_empty.der"), now: jan2030)
        XCTAssertEqual(r.verdict, .untrustedChain)
    }

    func testKnownDeviceIDPassesTheDeviceCheckAndAnotherFails() throws {
        let file = "xcode/xcode_2021-04-16_com.temporary.ipatestapp_known_device_id.der"
        guard let v = makeVerifier(xcodeConfig(accept: true, bundle: "com.temporary.ipatestapp")) else { return }
        let good = try v.verify(Fixtures.data(file), now: jan2030, options: options(["device_id": "c68bce28-7e27-494a-a082-acecb9328171"]))
        XCTAssertEqual(good.verdict, .valid)
        XCTAssertEqual(good.state(.device), .ok)
        let bad = try v.verify(Fixtures.data(file), now: jan2030, options: options(["device_id": "c68bce28-7e27-494a-a082-acecb9328172"]))
        XCTAssertEqual(bad.verdict, .deviceMismatch)
        let none = try v.verify(Fixtures.data(file), now: jan2030)
        XCTAssertEqual(none.state(.device), .skipped)
    }

    func testXcodeDatesWithOffsetsAndYear4001() throws {
        guard let v = makeVerifier(xcodeConfig(accept: true)) else { return }
        let r = try v.verify(Fixtures.data("xcode/xcode_2020-10-16_com.rd.eehelper.der"), now: jan2030)
        // 2020-10-16T14:29:30+0300 and 4001-01-01T02:00:00+0200
        XCTAssertEqual(r.payload?.creationDateMs, 1_602_847_770_000)
        XCTAssertEqual(r.payload?.expirationDateMs, RFC3339.milliseconds(Array("4001-01-01T00:00:00Z".utf8)))
        XCTAssertEqual(r.payload?.inApp.first?.transactionID, "0")
    }
}
