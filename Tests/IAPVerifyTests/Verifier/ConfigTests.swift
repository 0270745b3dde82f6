// Strict parsing of the verifier config and of per-call options.

import Foundation
import XCTest
@_spi(Testing) @testable import IAPVerify

final class ConfigTests: XCTestCase {
    func assertConfigError(_ json: String, mentions: String, file: StaticString = #filePath, line: UInt = #line) {
        guard let e = configError(json) else { return XCTFail("accepted: \(json)", file: file, line: line) }
        XCTAssertEqual(e.status, .config, json, file: file, line: line)
        XCTAssertTrue(e.message.contains(mentions), "\(e.message) should mention \(mentions)", file: file, line: line)
    }

    func testMinimalConfigUsesTheDocumentedDefaults() throws {
        let v = try makeVerifierOrThrow(["bundle_id": "com.example.app"])
        XCTAssertEqual(v.config.environments, [.production])
        XCTAssertEqual(v.config.deviceCheck, .ifGiven)
        XCTAssertEqual(v.config.maxInputBytes, 3_145_728)
        XCTAssertNil(v.config.maxReceiptAgeMs)
        XCTAssertEqual(v.config.gracePeriod, .honor)
        XCTAssertNil(v.config.products)
        XCTAssertEqual(v.context.anchors.roots.count, 3)
    }

    func testTheSpecExampleConfigParses() throws {
        let json = """
        {"bundle_id": "com.example.app", "bundle_versions": ["1.2", "1.3"], "environments": ["Production", "Sandbox"],
         "trust": {"roots_pem": [], "include_apple_roots": true}, "xcode": {"accept": false, "roots_pem": []},
         "device_check": "if_given", "max_input_bytes": 3145728, "max_receipt_age_ms": null, "grace_period": "honor",
         "products": {
           "com.example.pro.monthly": {"type": "auto_renewable", "group": "pro", "level": 2, "entitlements": ["pro"]},
           "com.example.pro.yearly": {"type": "auto_renewable", "group": "pro", "level": 1, "entitlements": ["pro"]},
           "com.example.lifetime": {"type": "non_consumable", "entitlements": ["pro"]},
           "com.example.season": {"type": "non_renewing", "duration_ms": 7776000000, "entitlements": ["pro"]},
           "com.example.coins100": {"type": "consumable"}}}
        """
        let v = try Array(json.utf8).withUnsafeBytes { raw throws(IAPVFailure) in try Verifier(json: raw) }
        let products = try XCTUnwrap(v.config.products)
        XCTAssertEqual(products.count, 5)
        XCTAssertEqual(products["com.example.pro.yearly"], ProductRule(type: .autoRenewable, group: "pro", level: 1, entitlements: ["pro"], durationMs: nil))
        XCTAssertEqual(products["com.example.season"]?.durationMs, 7_776_000_000)
        XCTAssertEqual(products["com.example.coins100"]?.entitlements, [])
        XCTAssertEqual(v.config.bundleVersions, ["1.2", "1.3"])
        XCTAssertEqual(v.config.environments, [.production, .sandbox])
    }

    func testEntitlementsDefaultToTheProductID() throws {
        let v = try makeVerifierOrThrow(["bundle_id": "a", "products": ["p1": ["type": "non_consumable"]]])
        XCTAssertEqual(v.config.products?["p1"]?.entitlements, ["p1"])
    }

    func testUnknownKeysAndWrongTypesNameTheKey() {
        assertConfigError(#"{"bundle_id":"a","bundel_versions":[]}"#, mentions: "bundel_versions")
        assertConfigError(#"{"bundle_id":5}"#, mentions: "config.bundle_id")
        assertConfigError(#"{"environments":["Production"]}"#, mentions: "bundle_id is required")
        assertConfigError(#"{"bundle_id":""}"#, mentions: "bundle_id")
        assertConfigError(#"{"bundle_id":"a","environments":"Production"}"#, mentions: "config.environments")
        assertConfigError(#"{"bundle_id":"a","environments":["Prod"]}"#, mentions: "Prod")
        assertConfigError(#"{"bundle_id":"a","bundle_versions":[1]}"#, mentions: "config.bundle_versions[0]")
        assertConfigError(#"{"bundle_id":"a","trust":{"roots":[]}}"#, mentions: "roots")
        assertConfigError(#"{"bundle_id":"a","trust":{"include_apple_roots":"yes"}}"#, mentions: "include_apple_roots")
        assertConfigError(#"{"bundle_id":"a","trust":{"roots_pem":["not a pem"]}}"#, mentions: "roots_pem[0]")
        assertConfigError(#"{"bundle_id":"a","xcode":{"accept":1}}"#, mentions: "config.xcode.accept")
        assertConfigError(#"{"bundle_id":"a","xcode":{"accept":true}}"#, mentions: "xcode.roots_pem is empty")
        assertConfigError(#"{"bundle_id":"a","device_check":"sometimes"}"#, mentions: "device_check")
        assertConfigError(#"{"bundle_id":"a","max_input_bytes":0}"#, mentions: "max_input_bytes")
        assertConfigError(#"{"bundle_id":"a","max_input_bytes":"big"}"#, mentions: "max_input_bytes")
        assertConfigError(#"{"bundle_id":"a","max_receipt_age_ms":-1}"#, mentions: "max_receipt_age_ms")
        assertConfigError(#"{"bundle_id":"a","grace_period":"always"}"#, mentions: "grace_period")
        assertConfigError(#"{"bundle_id":"a","products":[]}"#, mentions: "config.products")
        assertConfigError(#"{"bundle_id":"a","products":{"p":{}}}"#, mentions: "config.products.p.type")
        assertConfigError(#"{"bundle_id":"a","products":{"p":{"type":"subscription"}}}"#, mentions: "subscription")
        assertConfigError(#"{"bundle_id":"a","products":{"p":{"type":"consumable","entitlements":["x"]}}}"#, mentions: "consumable")
        assertConfigError(#"{"bundle_id":"a","products":{"p":{"type":"non_renewing"}}}"#, mentions: "duration_ms")
        assertConfigError(#"{"bundle_id":"a","products":{"p":{"type":"auto_renewable","level":0}}}"#, mentions: "level")
        assertConfigError(#"{"bundle_id":"a","products":{"p":{"type":"auto_renewable","colour":1}}}"#, mentions: "colour")
        assertConfigError(#"{"bundle_id":"a","bundle_id":"b"}"#, mentions: "duplicate")
        assertConfigError(#"["bundle_id"]"#, mentions: "JSON object")
        assertConfigError(#"{"bundle_id":"a""#, mentions: "invalid JSON")
        assertConfigError("", mentions: "empty")
    }

    func testAConfigWithNoRootOrANonRootIsRejected() throws {
        assertConfigError(#"{"bundle_id":"a","trust":{"include_apple_roots":false}}"#, mentions: "no root")
        // An intermediate (not self-signed) can never be an anchor.
        let intermediate = Fixtures.text("certs/AppleWWDRCAG6.pem").replacingOccurrences(of: "\n", with: "\\n")
        assertConfigError(#"{"bundle_id":"a","trust":{"roots_pem":["\#(intermediate)"]}}"#, mentions: "not a self-signed CA")
    }

    func testOptionsAreStrict() throws {
        XCTAssertEqual(try options(["device_id": "5B6E1A2C-0000-4000-8000-000000000001"], as: ReceiptOptions.self).deviceID?.count, 16)
        XCTAssertEqual(try options(["device_id": "a8:20:66:12:34:56"], as: ReceiptOptions.self).deviceID, [0xA8, 0x20, 0x66, 0x12, 0x34, 0x56])
        XCTAssertEqual(try options(["environment": "Sandbox", "attempt": 3], as: ResponseOptions.self).attempt, 3)
        let order = try options(["orders": [["order_id": "A17", "product_id": "p", "created_ms": 1_700_000_000_000]]], as: EntitlementOptions.self).orders
        XCTAssertEqual(order, [PendingOrder(orderID: "A17", productID: "p", createdMs: 1_700_000_000_000)])
        let bad: [[String: Any]] = [
            ["device": "x"], ["device_id": 5], ["device_id": "not-hex"], ["device_id": "1234"], ["endpoint": "staging"],
            ["attempt": 0], ["attempt": "1"], ["delivered_transaction_ids": [1]], ["orders": [["order_id": "A"]]],
            ["orders": [["order_id": "A", "product_id": "p", "created_ms": 1, "extra": true]]], ["renewal_info": 3],
        ]
        for b in bad {
            XCTAssertThrowsError(try options(b, as: ReceiptOptions.self), "\(b)") { error in
                XCTAssertEqual((error as? IAPVFailure)?.status, .invalidArgument, "\(b)")
            }
            XCTAssertThrowsError(try options(b, as: ResponseOptions.self), "\(b)") { error in
                XCTAssertEqual((error as? IAPVFailure)?.status, .invalidArgument, "\(b)")
            }
        }
    }

    func testDeviceCheckRequiredWithoutDeviceIDIsACallError() throws {
        let v = try makeVerifierOrThrow(["bundle_id": "*", "device_check": "required"])
        XCTAssertThrowsError(try v.verify(Fixtures.data("receipts/production_2015-09-22_com.apple.dt.Xcode.der"), now: jan2030)) {
            XCTAssertEqual(($0 as? IAPVFailure)?.status, .invalidArgument)
        }
    }

    func testNegativeNowIsACallError() throws {
        let v = try makeVerifierOrThrow(["bundle_id": "*"])
        XCTAssertThrowsError(try v.verify([0x30], now: -1)) { XCTAssertEqual(($0 as? IAPVFailure)?.status, .invalidArgument) }
    }
}

final class CodecTests: XCTestCase {
    func testRFC3339() {
        func ms(_ s: String) -> Int64? { RFC3339.milliseconds(Array(s.utf8)) }
        XCTAssertEqual(ms("1970-01-01T00:00:00Z"), 0)
        XCTAssertEqual(ms("2015-07-23T15:03:04Z"), 1_437_663_784_000)
        XCTAssertEqual(ms("2020-07-22T18:33:15+0100"), ms("2020-07-22T17:33:15Z"))
        XCTAssertEqual(ms("2020-07-22T18:33:15+01:00"), ms("2020-07-22T17:33:15Z"))
        XCTAssertEqual(ms("2020-07-22T18:33:15.250Z"), (ms("2020-07-22T18:33:15Z") ?? 0) + 250)
        XCTAssertEqual(ms("2024-02-29T00:00:00Z"), 1_709_164_800_000)
        for bad in ["", "2015-07-23", "2015-07-23 15:03:04Z", "2015-13-01T00:00:00Z", "2023-02-29T00:00:00Z",
                    "2015-07-23T25:00:00Z", "2015-07-23T15:03:04", "2015-07-23T15:03:04Zjunk", "２015-07-23T15:03:04Z"] {
            XCTAssertNil(ms(bad), bad)
        }
        // Every byte in a digit's place (year, day, minute and second units, where any digit
        // keeps the date valid): read only when it is an ASCII digit, and read as that digit.
        for place in [3, 9, 15, 18] {
            for b in 0...255 {
                var text = Array("2015-07-23T15:03:04Z".utf8)
                text[place] = UInt8(b)
                let parsed = RFC3339.milliseconds(text)
                if (48...57).contains(b) {
                    // Day, minute and second units move the date by a day, a minute, a second.
                    if let (original, step) = [9: (Int64(3), Int64(86_400_000)), 15: (3, 60_000), 18: (4, 1000)][place] {
                        XCTAssertEqual(parsed, ms("2015-07-23T15:03:04Z")! + (Int64(b - 48) - original) * step, "\(place) \(b)")
                    } else {
                        XCTAssertNotNil(parsed, "\(place) \(b)")
                    }
                } else {
                    XCTAssertNil(parsed, "\(place) \(b)")
                }
            }
        }
        XCTAssertEqual(RFC3339.format(1_437_663_784_000), "2015-07-23T15:03:04Z")
        XCTAssertEqual(RFC3339.format(ms("4001-01-01T00:00:00Z") ?? 0), "4001-01-01T00:00:00Z")
        // Years 0-9999 are written into one buffer, others by parts: both sides of each edge.
        let written: [(Int64, String)] = [
            (0, "1970-01-01T00:00:00Z"), (-1, "1969-12-31T23:59:59Z"), (999, "1970-01-01T00:00:00Z"),
            (951_782_400_000, "2000-02-29T00:00:00Z"), (4_107_542_399_999, "2100-02-28T23:59:59Z"),
            (253_402_300_799_999, "9999-12-31T23:59:59Z"), (253_402_300_800_000, "10000-01-01T00:00:00Z"),
            (-62_167_219_200_000, "0000-01-01T00:00:00Z"), (-62_167_219_200_001, "00-1-12-31T23:59:59Z"),
        ]
        for (value, text) in written {
            XCTAssertEqual(RFC3339.format(value), text, "\(value)")
            // A reason's sentence is its subject, verb and date, whatever the year and subject.
            for subject in ["", "p", "com.example.premium.monthly", "caf\u{E9} \u{1F600}"] {
                XCTAssertEqual(RFC3339.sentence(subject, " expired at ", value), subject + " expired at " + text, "\(value)")
            }
        }
    }

    func testBase64() {
        func dec(_ s: String) -> [UInt8]? { Base64.decode(Array(s.utf8)) }
        XCTAssertEqual(dec("aGVsbG8="), Array("hello".utf8))
        XCTAssertEqual(dec("aGVsbG8"), Array("hello".utf8))
        XCTAssertEqual(dec("aGVs\nbG8=\r\n"), Array("hello".utf8))
        XCTAssertEqual(dec("-_8="), [0xFB, 0xFF])
        XCTAssertNil(dec("aGVsbG8=="))
        XCTAssertNil(dec("a"))
        XCTAssertNil(dec("aG=Vs"))
        XCTAssertNil(dec("aGVs*G8="))
        XCTAssertEqual(Base64.encode(Array("hello".utf8)), "aGVsbG8=")
    }

    func testDERIntegers() {
        XCTAssertEqual(ReceiptPayloadDecoder.int64([0x01]), 1)
        XCTAssertEqual(ReceiptPayloadDecoder.int64([0xFF]), -1)
        XCTAssertEqual(ReceiptPayloadDecoder.int64([0x00, 0x80]), 128)
        XCTAssertEqual(ReceiptPayloadDecoder.int64([0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]), nil)
        XCTAssertEqual(ReceiptPayloadDecoder.int64([0x00, 0x80, 0, 0, 0, 0, 0, 0, 0]), nil)
        XCTAssertEqual(ReceiptPayloadDecoder.int64([0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]), Int64.max)
        XCTAssertNil(ReceiptPayloadDecoder.int64([1, 2, 3, 4, 5, 6, 7, 8, 9]))
        XCTAssertNil(ReceiptPayloadDecoder.int64([]))
    }

    /// The writer scans eight bytes a step for bytes to escape: every byte value at every position
    /// of strings long enough for two steps and a tail must come out as a byte-by-byte escaper
    /// writes it, and the step test must be exact on every word of one repeated byte.
    func testJSONWriterEscapesEveryByteAtEveryPosition() {
        func reference(_ bytes: [UInt8]) -> String {
            var out = "\""
            for b in bytes {
                switch b {
                case 0x22: out += "\\\""
                case 0x5C: out += "\\\\"
                case 0x0A: out += "\\n"
                case 0x0D: out += "\\r"
                case 0x09: out += "\\t"
                case 0..<0x20, 0x7F: out += String(format: "\\u%04x", b)
                default: out += String(UnicodeScalar(b))
                }
            }
            return out + "\""
        }
        func needs(_ b: UInt8) -> Bool { b < 0x20 || b == 0x22 || b == 0x5C || b == 0x7F }
        // One byte of every value at every place in a word of each filler, high bytes included.
        for filler: UInt8 in [0x61, 0x20, 0x21, 0x23, 0x5D, 0x7E, 0x80, 0xC3, 0xFF, 0x00] {
            for at in 0..<8 {
                for value in UInt8(0)...UInt8(0xFF) {
                    var word = [UInt8](repeating: filler, count: 8)
                    word[at] = value
                    let x = word.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
                    XCTAssertEqual(JSONWriter.mayNeedEscape(x), word.contains(where: needs), "\(word)")
                }
            }
        }
        for length in [1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 23] {   // every length under a word: the gathered-word test
            for at in 0..<length {
                for value in UInt8(0)...UInt8(0x7F) {
                    var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    bytes[at] = value
                    var w = JSONWriter()
                    bytes.withUnsafeBufferPointer { w.string(utf8: $0) }
                    XCTAssertEqual(String(decoding: w.bytes, as: UTF8.self), reference(bytes), "length \(length), byte \(value) at \(at)")
                }
            }
        }
    }

    func testJSONWriterBase64() {
        // Every length to past the writer's own encoder (up to Base64.shortEncoding bytes) and into
        // OpenSSL's, with bytes that reach every sextet.
        var inputs: [[UInt8]] = [[], [1], [1, 2], [1, 2, 3], Array(0...255), [0xFF], [0xFF, 0xFF], [0xFB, 0xFF, 0xBF]]
        var seed: UInt64 = 42
        for length in 0...(Base64.shortEncoding + 12) {
            inputs.append((0..<length).map { _ in seed = seed &* 6364136223846793005 &+ 1; return UInt8(truncatingIfNeeded: seed >> 56) })
        }
        for raw in inputs {
            var w = JSONWriter()
            w.base64(raw)
            XCTAssertEqual(String(decoding: w.bytes, as: UTF8.self), "\"\(Data(raw).base64EncodedString())\"")
            XCTAssertEqual(Base64.encode(raw), Data(raw).base64EncodedString())
        }
    }

    /// The direct attribute walk and the BER tree must see the same attributes.
    func testAttributeWalkAgreesWithTheTreeOnEveryFixture() throws {
        let files = Fixtures.list("receipts").map { "receipts/\($0)" } + Fixtures.list("xcode").map { "xcode/\($0)" }
            + Fixtures.list("fakepki").map { "fakepki/\($0)" }
        var sets = 0
        for file in files {
            guard let envelope = try? SignedDataParser.parse(Fixtures.data(file)) else { continue }
            var pending: [ArraySlice<UInt8>] = [envelope.content[...]]
            while let bytes = pending.popLast() {
                var viaTree: [String] = []
                do {
                    try AttributeSet.viaTree(bytes, what: "x") { (t, v, value) throws(PayloadProblem) in
                        viaTree.append("\(t)/\(v)/\(Array(value))")
                        if t == 17 { pending.append(value) }
                    }
                } catch {
                    XCTAssertNil(AttributeSet.direct(bytes), "\(file): the walk accepts what the tree rejects")
                    continue
                }
                if let direct = AttributeSet.direct(bytes) {
                    XCTAssertEqual(direct.map { "\($0.type)/\($0.version)/\(Array($0.value))" }, viaTree, file)
                }
                sets += 1
            }
        }
        XCTAssertGreaterThan(sets, 300)
    }

    /// The walk reads the usual attribute shape (short-form lengths, one- or two-byte type and
    /// version) by a shorter path: on mutants of real in-app records, at every byte of their first
    /// attributes, it must read what the tree reads, and accept nothing the tree refuses.
    func testAttributeWalkAgreesWithTheTreeOnMutatedRecords() throws {
        var records: [[UInt8]] = []
        for file in ["receipts/sandbox_2020-05-06_com.nutcall.alert_187iap.der", "receipts/sandbox_2015-08-31_com.silverlogic.Kidtrol_22iap.der"] {
            let envelope = try XCTUnwrap(try? SignedDataParser.parse(Fixtures.data(file)))
            try AttributeSet.viaTree(envelope.content[...], what: "x") { (t, _, value) throws(PayloadProblem) in
                if t == 17, records.count < 24 { records.append(Array(value)) }
            }
        }
        XCTAssertEqual(records.count, 24)
        var compared = 0
        for record in records {
            for at in 0..<min(record.count, 48) {
                for value: UInt8 in [0x00, 0x01, 0x02, 0x03, 0x04, 0x09, 0x1F, 0x30, 0x31, 0x7F, 0x80, 0x81, 0x82, 0xFF,
                                     record[at] &+ 1, record[at] &- 1] {
                    var bytes = record
                    bytes[at] = value
                    var viaTree: [String] = []
                    let treeRead = (try? AttributeSet.viaTree(bytes[...], what: "x") { (t, v, value) throws(PayloadProblem) in
                        viaTree.append("\(t)/\(v)/\(Array(value))")
                    }) != nil
                    guard let direct = AttributeSet.direct(bytes[...]) else { continue }
                    XCTAssertTrue(treeRead, "the walk accepts what the tree refuses: byte \(at) = \(value)")
                    XCTAssertEqual(direct.map { "\($0.type)/\($0.version)/\(Array($0.value))" }, viaTree, "byte \(at) = \(value)")
                    compared += 1
                }
            }
        }
        XCTAssertGreaterThan(compared, 5000)
    }

    /// The direct envelope walk and the full tree decoding must give the same envelope.
    func testEnvelopeWalkAgreesWithTheTreeOnEveryFixture() throws {
        let files = Fixtures.list("receipts").map { "receipts/\($0)" } + Fixtures.list("xcode").map { "xcode/\($0)" }
            + Fixtures.list("fakepki").map { "fakepki/\($0)" }
        var walked = 0
        for file in files {
            let bytes = Fixtures.data(file)
            let reference = Result { () throws(EnvelopeProblem) in try SignedDataParser.parseTree(bytes) }
            let fast = Result { () throws(EnvelopeProblem) in try SignedDataParser.parse(bytes) }
            if SignedDataParser.topLevel(bytes) != nil { walked += 1 }
            switch (reference, fast) {
            case (.success(let a), .success(let b)):
                XCTAssertEqual(a.content, b.content, file)
                XCTAssertEqual(Array(a.certificatesField), Array(b.certificatesField), file)
                XCTAssertEqual(a.certificates.map { Array($0) }, b.certificates.map { Array($0) }, file)
                XCTAssertEqual(Array(a.signer.signature), Array(b.signer.signature), file)
                XCTAssertEqual(Array(a.signer.identifier), Array(b.signer.identifier), file)
                XCTAssertEqual(a.signer.signedAttributes?.encodedBytes.map { $0 }, b.signer.signedAttributes?.encodedBytes.map { $0 }, file)
            case (.failure, .failure):
                break
            default:
                XCTFail("\(file): the walk and the tree disagree on whether it decodes")
            }
        }
        XCTAssertGreaterThan(walked, 80)
    }

    func testJSONWriterIntegers() {
        // Every digit count's edges (the count comes from the bit length), both signs.
        var edges: [Int64] = [0, 7, -7, 10, 1_000_000_000_000_000_00, Int64.max, Int64.min, Int64.min + 1, 1_234_567_890_123_456_789, -100_000_000_000_000_000]
        var power: Int64 = 1
        for _ in 0...18 {
            edges += [power - 1, power, power + 1, -(power - 1), -power, -(power + 1)]
            if power <= Int64.max / 10 { power *= 10 }
        }
        for bit in 0..<63 { edges += [Int64(1) << bit, (Int64(1) << bit) - 1, -(Int64(1) << bit)] }
        for v: Int64 in edges {
            var w = JSONWriter()
            w.int(v)
            XCTAssertEqual(String(decoding: w.bytes, as: UTF8.self), String(v))
        }
    }

    func testJSONWriterEscapes() {
        var w = JSONWriter()
        w.beginObject()
        w.field("s", "a\"b\\c\n\u{01}é")
        w.field("n", Int64(-5))
        w.field("x", nil as String?)
        w.key("a"); w.beginArray(); w.bool(true); w.int(Int64(1)); w.endArray()
        w.endObject()
        XCTAssertEqual(String(decoding: w.bytes, as: UTF8.self), #"{"s":"a\"b\\c\n\u0001é","n":-5,"x":null,"a":[true,1]}"#)
    }
}
