// The hostile-input corpus (scripts/generate-hostile-corpus.py): 400+ committed inputs, each
// with its exact expected verdict or status, on every entry point; receipts on both paths.

import Foundation
import XCTest
@_spi(Testing) @testable import IAPVerify

final class HostileCorpusTests: XCTestCase {
    func testEveryCaseGivesItsExactAnswer() throws {
        let doc = Fixtures.json("hostile/cases.json")
        let cases = try XCTUnwrap(doc["cases"] as? [[String: Any]])
        XCTAssertGreaterThanOrEqual(cases.count, 300)
        let receipts = try makeVerifierOrThrow(["bundle_id": "*", "environments": ["Production", "Sandbox"]])
        let responses = try makeVerifierOrThrow(["bundle_id": "com.example.fake"])
        var seen: [String: Int] = [:]
        for c in cases {
            let file = c["file"] as? String ?? "", expect = c["expect"] as? String ?? "", entry = c["entry"] as? String ?? ""
            let note = "\(file) (\(c["note"] as? String ?? ""))"
            let bytes = Fixtures.data("hostile/\(file)")
            seen[entry, default: 0] += 1
            switch entry {
            case "receipt":
                for path in [CryptoPath.cached, .reference] {
                    let r = try receipts.verify(bytes, now: jan2030, path: path)
                    XCTAssertEqual(r.verdict.rawValue, expect, "\(note) via \(path): \(r.judgement.reason)")
                    XCTAssertFalse(r.judgement.reason.isEmpty)
                }
            case "response":
                let r = try interpret(responses, bytes, now: 3000)
                XCTAssertEqual(r.verdict.rawValue, expect, "\(note): \(r.judgement.reason)")
                if expect != "valid" { XCTAssertEqual(r.action, .reject, note) }
            case "entitlements":
                let r = try bytes.withUnsafeBytes { raw throws(IAPVFailure) in try responses.computeEntitlements(raw, nowMs: 3000) }
                XCTAssertEqual(r.verdict.rawValue, expect, "\(note): \(r.judgement.reason)")
            case "config":
                let e = configError(String(decoding: bytes, as: UTF8.self))
                XCTAssertEqual(e?.status.name, expect, note)
                XCTAssertFalse(e?.message.isEmpty ?? true)
            case "options":
                // Every entry point refuses it, whether or not it reads the key.
                func refused<Options: EntryOptions>(_: Options.Type) {
                    XCTAssertThrowsError(try bytes.withUnsafeBytes { raw throws(IAPVFailure) in try Options(json: raw) }, "\(note) (\(Options.entryPoint.rawValue))") {
                        XCTAssertEqual(($0 as? IAPVFailure)?.status.name, expect, note)
                    }
                }
                refused(ReceiptOptions.self)
                refused(ResponseOptions.self)
                refused(EntitlementOptions.self)
                refused(JWSOptions.self)
                refused(APIResponseOptions.self)
            default:
                XCTFail("unknown entry \(entry)")
            }
        }
        XCTAssertEqual(Set(seen.keys), ["receipt", "response", "entitlements", "config", "options"])
    }

    /// Limits: in-app count (a 1.3 MB payload of empty records, built here rather than committed).
    func testTooManyInAppRecordsIsMalformed() throws {
        var body: [UInt8] = []
        let record: [UInt8] = [0x30, 0x0A, 0x02, 0x01, 0x11, 0x02, 0x01, 0x01, 0x04, 0x02, 0x31, 0x00]
        for _ in 0...PayloadLimits.maxInAppCount { body += record }
        let n = body.count
        let set: [UInt8] = [0x31, 0x83, UInt8(n >> 16), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + body
        XCTAssertThrowsError(try ReceiptPayloadDecoder.decode(set[...])) { error in
            guard case PayloadProblem.malformed(let why) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(why.contains("100000"), why)
        }
    }

    func testInputOverTheHardLimitIsRejectedBeforeParsing() throws {
        let v = try makeVerifierOrThrow(["bundle_id": "*", "max_input_bytes": VerifierConfig.hardInputLimit])
        let big = [UInt8](repeating: 0x41, count: VerifierConfig.hardInputLimit + 1)
        XCTAssertThrowsError(try v.verify(big, now: 0)) { XCTAssertEqual(($0 as? IAPVFailure)?.status, .tooLarge) }
        XCTAssertThrowsError(try interpret(v, big, now: 0)) { XCTAssertEqual(($0 as? IAPVFailure)?.status, .tooLarge) }
    }
}
