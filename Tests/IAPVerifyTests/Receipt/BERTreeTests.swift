// BERTree against swift-asn1, the parser it replaced in the library: the same trees, the same
// errors (receipt reasons quote them) and the same OID text, on every receipt the repository
// holds, the fuzz corpus, mutants of them and hand-made edge cases.

import Foundation
import SwiftASN1
import XCTest
@testable import IAPVerify

final class BERTreeTests: XCTestCase {
    /// Every receipt input in the repository: fixtures, the hostile corpus and the fuzz inputs.
    static let inputs: [(String, [UInt8])] = {
        var out: [(String, [UInt8])] = []
        for dir in ["receipts", "xcode", "fakepki", "hostile"] {
            for name in Fixtures.list(dir) { out.append(("\(dir)/\(name)", Fixtures.data("\(dir)/\(name)"))) }
        }
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        for dir in ["Fuzz/corpus/receipt", "Fuzz/seeds/receipt", "Fuzz/regressions/receipt"] {
            let url = repo.appendingPathComponent(dir)
            for name in ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).sorted() {
                if let d = try? Data(contentsOf: url.appendingPathComponent(name)) { out.append(("\(dir)/\(name)", [UInt8](d))) }
            }
        }
        return out
    }()

    func testSameTreesAndErrorsOnEveryInput() {
        XCTAssertGreaterThan(Self.inputs.count, 700)
        var nodes = 0
        for (name, bytes) in Self.inputs { nodes += compare(bytes[...], name) }
        XCTAssertGreaterThan(nodes, 100_000)
    }

    func testSameTreesAndErrorsOnMutants() {
        var rng = XorShift(seed: 24)
        let seeds = Self.inputs.filter { $0.0.hasPrefix("xcode/") || $0.0.hasPrefix("fakepki/") }.prefix(30)
        XCTAssertGreaterThan(seeds.count, 10)
        let marks: [UInt8] = [0x00, 0x1F, 0x20, 0x3F, 0x80, 0x81, 0x84, 0x88, 0x89, 0xA0, 0xBF, 0xFF]
        for (name, original) in seeds {
            for k in 0..<40 {
                var m = original
                let near = min(m.count, 400)  // the envelope's headers
                switch rng.next(5) {
                case 0: m[rng.next(near)] = marks[rng.next(marks.count)]
                case 1: m[rng.next(m.count)] = UInt8(rng.next(256))
                case 2: m = Array(m.prefix(rng.next(m.count)))
                case 3: m.insert(contentsOf: [UInt8](repeating: marks[rng.next(4) * 3], count: 1 + rng.next(3)), at: rng.next(near))
                default: m += [UInt8](repeating: 0, count: 1 + rng.next(2))
                }
                _ = compare(m[...], "\(name) mutant \(k)")
            }
        }
    }

    func testEdgeCases() {
        var nested: [UInt8] = [0x05, 0x00]
        for _ in 0..<50 { nested = [0x30, 0x80] + nested + [0x00, 0x00] }
        let cases: [[UInt8]] = [
            [], [0x30], [0x30, 0x00], [0x30, 0x00, 0x00], [0x00, 0x00], [0x04, 0x80, 0x00, 0x00], [0x24, 0x80, 0x00, 0x00],
            [0x24, 0x80, 0x04, 0x01, 0x41, 0x00, 0x00], [0x24, 0x80, 0x04, 0x01, 0x41], [0x24, 0x80, 0x04, 0x01, 0x41, 0x00],
            [0x30, 0x81, 0x01, 0x05], [0x30, 0x82, 0x00, 0x00], [0x04, 0x89, 1, 2, 3, 4, 5, 6, 7, 8, 9], [0x04, 0xFF],
            [0x04, 0x88, 0x80, 0, 0, 0, 0, 0, 0, 0], [0x04, 0x88, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],
            [0x1F, 0x1E, 0x00], [0x1F, 0x1F, 0x00], [0x1F, 0x80, 0x1F, 0x00], [0x1F, 0x81, 0x00, 0x00], [0x1F, 0x81],
            [0x3F, 0x81, 0x81, 0x81, 0x81, 0x81, 0x81, 0x81, 0x81, 0x01, 0x00], [0x3F, 0x81, 0x81, 0x81, 0x81, 0x81, 0x81, 0x81, 0x81, 0x81, 0x01, 0x00],
            [0xBF, 0x8F, 0x7F, 0x80, 0x05, 0x00, 0x00, 0x00], [0xA0, 0x03, 0x02, 0x01, 0x01], [0x80, 0x00], [0x10, 0x00],
            [0x31, 0x80, 0x31, 0x80, 0x00, 0x00, 0x00, 0x00], [0x02, 0x01, 0x01, 0x00], nested, [0x30, 0x80] + nested + [0x00, 0x00],
        ]
        for (i, bytes) in cases.enumerated() { _ = compare(bytes[...], "edge case \(i)") }
    }

    func testSameOIDText() {
        var rng = XorShift(seed: 7)
        let bytes: [UInt8] = [0x00, 0x01, 0x27, 0x28, 0x4F, 0x50, 0x7F, 0x80, 0x81, 0x86, 0xF7, 0xFF]
        var cases: [[UInt8]] = [[], [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02], [0x81, 0x00], [0x80, 0x01],
                                [UInt8](repeating: 0xFF, count: 8) + [0x7F], [UInt8](repeating: 0xFF, count: 9) + [0x7F]]
        for _ in 0..<3000 { cases.append((0..<(1 + rng.next(12))).map { _ in bytes[rng.next(bytes.count)] }) }
        for c in cases {
            let theirs = (try? ASN1ObjectIdentifier(derEncoded: [0x06, UInt8(c.count)] + c))?.description
            XCTAssertEqual(BERTree.dottedOID(c[...]), theirs, "\(c)")
        }
    }

    /// APIURL.pathSegment's ".." test is by Characters, as `String.contains` from _StringProcessing
    /// (imported here, not in the library) was.
    func testDotDotIsFoundByCharacters() {
        for value in ["a..b", "..", ".", "a.b", "..\u{301}", ".\u{301}.", "x.\u{301}.", "\u{301}..", "a.\u{301}.b", "...", "\u{E9}..", "a."] {
            let refused = value.contains("..") || value == "."
            XCTAssertEqual((try? APIURL.pathSegment(value, name: "id")) == nil, refused, value)
        }
    }

    /// Compares BER and DER parses of `bytes`, DER parses of the [0] fields inside (signed
    /// attributes are read as DER) and parses of the attribute sets in OCTET STRINGs (payloads and
    /// in-app records); returns the nodes compared.
    private func compare(_ bytes: ArraySlice<UInt8>, _ name: String) -> Int {
        compareDER(Array(bytes), name)
        let ours = Result { () throws(BERError) in try BERTree.parse(bytes) }
        let theirs = Result { try BER.parse(bytes) }
        switch (ours, theirs) {
        case (.success(let a), .success(let b)):
            // Inside, only where it costs little (debug builds of both parsers are slow).
            return same(a, b, name, inner: true)
        case (.failure(let a), .failure(let b)):
            XCTAssertEqual(a.rawValue, "\((b as? ASN1Error)?.code.description ?? "?")", name)
        case (.success, .failure(let b)):
            XCTFail("\(name): BERTree parses, swift-asn1 says \(b)")
        case (.failure(let a), .success):
            XCTFail("\(name): swift-asn1 parses, BERTree says \(a)")
        }
        return 0
    }

    private func compareDER(_ bytes: [UInt8], _ name: String) {
        let ours = Result { () throws(BERError) in try BERTree.parseDER(bytes) }
        let theirs = Result { try DER.parse(bytes) }
        switch (ours, theirs) {
        case (.success(let a), .success(let b)): _ = same(a, b, "\(name) (DER)", inner: false)
        case (.failure(let a), .failure(let b)): XCTAssertEqual(a.rawValue, "\((b as? ASN1Error)?.code.description ?? "?")", name)
        default: XCTFail("\(name): BERTree and swift-asn1 disagree on whether it is DER")
        }
    }

    private func same(_ a: BERNode, _ b: ASN1Node, _ name: String, inner: Bool) -> Int {
        let classes: [ASN1Identifier.TagClass] = [.universal, .application, .contextSpecific, .private]
        guard classes[Int(a.identifier.tagClass)] == b.identifier.tagClass, a.identifier.number == b.identifier.tagNumber,
              a.encodedBytes.indices == b.encodedBytes.indices else {  // slices of the same input: same bytes
            XCTFail("\(name): nodes differ (\(a.identifier) vs \(b.identifier))")
            return 0
        }
        switch (a.content, b.content) {
        case (.primitive(let x), .primitive(let y)):
            if x.indices != y.indices { XCTFail("\(name): primitive contents differ") }
            if inner, a.identifier == .octetString, x.first == 0x31 { return 1 + compare(x, "\(name) (inner set)") }
            return 1
        case (.constructed(let x), .constructed(let y)):
            if inner, a.identifier == .context0 { compareDER(Array(a.encodedBytes), "\(name) (a [0] field as DER)") }
            var n = 1
            var xs = x.makeIterator(), ys = y.makeIterator()
            while true {
                switch (xs.next(), ys.next()) {
                case (nil, nil): return n
                case (let p?, let q?): n += same(p, q, name, inner: inner)
                default:
                    XCTFail("\(name): child counts differ")
                    return n
                }
            }
        default:
            XCTFail("\(name): one is primitive, the other constructed")
            return 0
        }
    }
}

/// A small deterministic generator: the mutants are the same on every run.
struct XorShift {
    var state: UInt64
    init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 | 1 }
    mutating func next(_ bound: Int) -> Int {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return bound <= 0 ? 0 : Int(state % UInt64(bound))
    }
}
