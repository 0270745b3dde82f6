// Every input a fuzzer ever found lands in Fuzz/regressions/<target>/ and is replayed here by
// name, on the same oracle as the fuzz harness (both receipt paths agree; nothing traps).

import Foundation
import XCTest
@_spi(Testing) @testable import IAPVerify

final class FuzzRegressionTests: XCTestCase {
    func testCommittedRegressionInputs() throws {
        let dir = URL(fileURLWithPath: Self.repositoryFile("Fuzz/regressions"))
        let v = try makeVerifierOrThrow(["bundle_id": "*", "environments": ["Production", "Sandbox", "Xcode"],
                                         "trust": ["roots_pem": [Fixtures.fakeRootPEM]],
                                         "xcode": ["accept": true, "roots_pem": [Fixtures.storeKitPEM]]])
        var replayed = 0
        for target in ["receipt", "response", "entitlements", "config", "options", "jws"] {
            let files = (try? FileManager.default.contentsOfDirectory(atPath: dir.appendingPathComponent(target).path)) ?? []
            for name in files where !name.hasPrefix(".") {
                let bytes = [UInt8](try Data(contentsOf: dir.appendingPathComponent(target).appendingPathComponent(name)))
                replayed += 1
                bytes.withUnsafeBytes { raw in
                    switch target {
                    case "receipt":
                        let fast = try? v.verifyReceipt(raw, nowMs: jan2030)
                        let reference = try? v.verifyReceipt(raw, nowMs: jan2030, path: .reference)
                        XCTAssertEqual(fast?.isValid, reference?.isValid, "\(target)/\(name)")
                    case "response": _ = try? v.interpretResponse(raw, nowMs: jan2030)
                    case "entitlements": _ = try? v.computeEntitlements(raw, nowMs: jan2030)
                    case "config": _ = try? VerifierConfig(json: raw)
                    case "jws": _ = try? v.verifyJWS(raw, nowMs: jan2030)
                    default: _ = try? ResponseOptions(json: raw); _ = try? APIResponseOptions(json: raw)
                    }
                }
            }
        }
        print("replayed \(replayed) fuzz regression inputs")
    }

    // MARK: - Each finding, by name, with the verdict both paths must now give

    func finding(_ name: String) throws -> (cached: ReceiptReport, reference: ReceiptReport) {
        let url = URL(fileURLWithPath: Self.repositoryFile("Fuzz/regressions/receipt/\(name)"))
        let bytes = [UInt8](try Data(contentsOf: url))
        let v = try makeVerifierOrThrow(["bundle_id": "*", "environments": ["Production", "Sandbox", "Xcode"],
                                         "trust": ["roots_pem": [Fixtures.fakeRootPEM]],
                                         "xcode": ["accept": true, "roots_pem": [Fixtures.storeKitPEM]]])
        return (try v.verify(bytes, now: jan2030), try v.verify(bytes, now: jan2030, path: .reference))
    }

    /// 2026-11-22, CI: an Xcode receipt whose digestAlgorithms SET named SHA-224 while the signer
    /// used SHA-256. The cached path said valid; PKCS7_verify refused it.
    func testXcodeReceiptWithSHA224InTheDigestSet() throws {
        let r = try finding("xcode-digest-set-sha224.der")
        XCTAssertEqual(r.cached.verdict, .unsupportedAlgorithm, r.cached.judgement.reason)
        XCTAssertEqual(r.reference.verdict, .unsupportedAlgorithm, r.reference.judgement.reason)
    }

    /// 2026-11-22: the same with two bytes of the SHA-256 OID swapped (an OID OpenSSL does not know).
    func testXcodeReceiptWithAGarbledDigestSetOID() throws {
        let r = try finding("xcode-digest-set-garbled-oid.der")
        XCTAssertEqual(r.cached.verdict, .unsupportedAlgorithm, r.cached.judgement.reason)
        XCTAssertEqual(r.reference.verdict, .unsupportedAlgorithm, r.reference.judgement.reason)
    }

    /// 2026-11-22: a real receipt whose SignerInfo spelled its issuer "Apple Worldwide Developer
    /// Relations Certification Authority" with one letter's case flipped. PKCS7_verify matches names
    /// canonically and said valid; the cached path compared bytes and found no signer. The unsigned
    /// root certificate is damaged too, which neither path uses.
    func testSignerIssuerNameInAnotherLetterCase() throws {
        let r = try finding("signer-issuer-canonical-name.der")
        XCTAssertEqual(r.cached.verdict, .valid, r.cached.judgement.reason)
        XCTAssertEqual(r.reference.verdict, .valid, r.reference.judgement.reason)
    }
}
