// Damage sweeps on a real receipt: every truncation point, and every single-bit flip in the
// signed content and in the signature. None may be valid, none may crash, and the cached path
// must agree with OpenSSL's PKCS7_verify path on each one.

import Foundation
import XCTest
@_spi(Testing) @testable import IAPVerify

final class DamageSweepTests: XCTestCase {
    static let file = "receipts/production_2015-09-22_com.apple.dt.Xcode.der"

    func verifier() throws -> Verifier {
        try makeVerifierOrThrow(["bundle_id": "*", "environments": ["Production", "Sandbox"]])
    }

    /// Runs both paths and checks they agree exactly; returns the verdict.
    func bothPaths(_ v: Verifier, _ bytes: [UInt8], _ label: String) throws -> Verdict {
        let fast = try v.verify(bytes, now: jan2030)
        let reference = try v.verify(bytes, now: jan2030, path: .reference)
        XCTAssertEqual(fast.verdict, reference.verdict, "\(label): cached says \(fast.judgement.reason); reference says \(reference.judgement.reason)")
        return fast.verdict
    }

    func testEveryTruncationIsRejected() throws {
        let v = try verifier()
        let bytes = Fixtures.data(Self.file)
        XCTAssertEqual(try bothPaths(v, bytes, "intact"), .valid)
        var counts: [Verdict: Int] = [:]
        for n in 0..<bytes.count {
            let verdict = try bothPaths(v, Array(bytes.prefix(n)), "truncated to \(n)")
            XCTAssertNotEqual(verdict, .valid, "truncated to \(n)")
            counts[verdict, default: 0] += 1
        }
        XCTAssertEqual(counts.values.reduce(0, +), bytes.count)
    }

    func testEveryBitFlipInTheSignedContentIsRejected() throws {
        let v = try verifier()
        let bytes = Fixtures.data(Self.file)
        let envelope = try SignedDataParser.parse(bytes)
        let range = try XCTUnwrap(Data(bytes).range(of: Data(envelope.content)))
        XCTAssertGreaterThan(range.count, 100)
        for i in range {
            for bit in 0..<8 {
                var damaged = bytes
                damaged[i] ^= UInt8(1 << bit)
                let verdict = try bothPaths(v, damaged, "content byte \(i) bit \(bit)")
                XCTAssertNotEqual(verdict, .valid, "content byte \(i) bit \(bit)")
            }
        }
    }

    func testEveryBitFlipInTheSignatureIsRejected() throws {
        let v = try verifier()
        let bytes = Fixtures.data(Self.file)
        let envelope = try SignedDataParser.parse(bytes)
        let range = try XCTUnwrap(Data(bytes).range(of: Data(envelope.signer.signature)))
        XCTAssertEqual(range.count, 256)
        for i in range {
            for bit in 0..<8 {
                var damaged = bytes
                damaged[i] ^= UInt8(1 << bit)
                XCTAssertEqual(try bothPaths(v, damaged, "signature byte \(i) bit \(bit)"), .signatureInvalid)
            }
        }
    }

    func testBitFlipsInTheSigningCertificatesNeverValidate() throws {
        // Every 7th byte of the leaf and the intermediate, one bit each: broken DER, broken
        // signatures or changed fields; never valid, and both paths agree. (The embedded root is
        // ignored by design, so damage there leaves the receipt valid: checked separately.)
        let v = try verifier()
        let bytes = Fixtures.data(Self.file)
        let envelope = try SignedDataParser.parse(bytes)
        let appleRoot = Fixtures.data("certs/AppleIncRootCertificate.cer")
        let signing = envelope.certificates.filter { !$0.elementsEqual(appleRoot) }
        XCTAssertEqual(signing.count, 2)
        for cert in signing {
            let range = try XCTUnwrap(Data(bytes).range(of: Data(cert)))
            for i in stride(from: range.lowerBound, to: range.upperBound, by: 7) {
                var damaged = bytes
                damaged[i] ^= UInt8(1 << (i % 8))
                XCTAssertNotEqual(try bothPaths(v, damaged, "certificate byte \(i)"), .valid, "certificate byte \(i)")
            }
        }
    }

    func testDamageToTheEmbeddedRootIsIgnored() throws {
        let v = try verifier()
        var bytes = Fixtures.data(Self.file)
        let appleRoot = Fixtures.data("certs/AppleIncRootCertificate.cer")
        let range = try XCTUnwrap(Data(bytes).range(of: Data(appleRoot)))
        bytes[range.upperBound - 10] ^= 0x01  // inside the embedded root's own signature
        XCTAssertEqual(try bothPaths(v, bytes, "embedded root signature"), .valid)
    }
}
