// Fields outside the signature (the digestAlgorithms SET, the signer identifier, versions,
// algorithm parameters, unsigned attributes, CRLs, content chunking) can be rewritten by anyone.
// The fast path is a strict profile: it accepts only what Apple and Xcode write and may
// refuse what OpenSSL's PKCS7_verify accepts, never the reverse. Each rewrite of a real receipt
// gets its exact fast-path verdict here, and a fast `valid` must be `valid` on the reference path.
// The fuzzer's own BER inputs are replayed from Fuzz/regressions/receipt.

import Foundation
import XCTest
@_spi(Testing) @testable import IAPVerify

final class UnsignedFieldTests: XCTestCase {
    static let sha256Receipt = "receipts/production_2025-04-18_com.dashedspace.analytics_sha256.der"
    static let sha1Receipt = "receipts/production_2015-09-22_com.apple.dt.Xcode.der"

    /// A definite-length DER tree, for rewriting one field and re-encoding every length above it.
    indirect enum Node: Equatable {
        case primitive(UInt8, [UInt8])
        case constructed(UInt8, [Node])
        /// Bytes emitted verbatim, for encodings the tree would normalise (long-form lengths).
        case raw([UInt8])

        static func parse(_ b: [UInt8]) -> Node? {
            guard let h = TLV.header(b, 0, end: b.count), h.end == b.count else { return nil }
            return parse(b, h)
        }

        private static func parse(_ b: [UInt8], _ h: (tag: UInt8, start: Int, end: Int)) -> Node? {
            guard h.tag & 0x20 != 0 else { return .primitive(h.tag, Array(b[h.start..<h.end])) }
            var children: [Node] = []
            var i = h.start
            while i < h.end {
                guard let c = TLV.header(b, i, end: h.end), let node = parse(b, c) else { return nil }
                children.append(node)
                i = c.end
            }
            return .constructed(h.tag, children)
        }

        var encoded: [UInt8] {
            switch self {
            case .primitive(let tag, let bytes): return UnsignedFieldTests.tlv(tag, bytes)
            case .constructed(let tag, let children): return UnsignedFieldTests.tlv(tag, children.flatMap { $0.encoded })
            case .raw(let bytes): return bytes
            }
        }

        var children: [Node] {
            get { if case .constructed(_, let c) = self { return c } else { return [] } }
            set { if case .constructed(let tag, _) = self { self = .constructed(tag, newValue) } }
        }

        /// The node at a path of child indexes.
        subscript(path: [Int]) -> Node {
            get { path.reduce(self) { $0.children[$1] } }
            set {
                guard let first = path.first else { self = newValue; return }
                var kids = children
                kids[first][Array(path.dropFirst())] = newValue
                children = kids
            }
        }
    }

    // Paths in a receipt: ContentInfo > [0] > SignedData > signerInfos > SignerInfo.
    static let signedData = [1, 0]
    static func signerInfo(_ root: Node) -> [Int] { signedData + [root[signedData].children.count - 1, 0] }

    /// A DER TLV with a definite length.
    static func tlv(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [tag]
        let n = content.count
        if n < 0x80 {
            out.append(UInt8(n))
        } else {
            var len: [UInt8] = []
            var v = n
            while v > 0 { len.insert(UInt8(v & 0xFF), at: 0); v >>= 8 }
            out.append(0x80 | UInt8(len.count))
            out += len
        }
        return out + content
    }

    /// `der` with its SignedData digestAlgorithms SET replaced by a SET of `entries` (each a full TLV).
    static func replacingDigestSet(_ der: [UInt8], _ entries: [[UInt8]]) throws -> [UInt8] {
        let n = der.count
        guard let ci = TLV.header(der, 0, end: n), let type = TLV.header(der, ci.start, end: ci.end),
              let explicit = TLV.header(der, type.end, end: ci.end),
              let sd = TLV.header(der, explicit.start, end: explicit.end),
              let version = TLV.header(der, sd.start, end: sd.end),
              let digests = TLV.header(der, version.end, end: sd.end), digests.tag == 0x31 else {
            throw XCTSkip("not a definite-length SignedData")
        }
        let signedData = Array(der[sd.start..<version.end]) + tlv(0x31, entries.flatMap { $0 }) + Array(der[digests.end..<sd.end])
        return tlv(0x30, Array(der[ci.start..<type.end]) + tlv(0xA0, tlv(0x30, signedData)))
    }

    static func algorithm(_ oid: [UInt8], parameters: [UInt8]? = [0x05, 0x00]) -> [UInt8] {
        tlv(0x30, tlv(0x06, oid) + (parameters ?? []))
    }

    // OIDs as content bytes.
    static let sha1: [UInt8] = [0x2B, 0x0E, 0x03, 0x02, 0x1A]
    static let sha256: [UInt8] = [0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01]
    static let sha224: [UInt8] = [0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x04]
    static let sha512: [UInt8] = [0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x03]
    static let sha3_256: [UInt8] = [0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x08]
    static let shake128: [UInt8] = [0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x0B]
    static let md5: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x02, 0x05]
    static let md4: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x02, 0x04]
    static let ripemd160: [UInt8] = [0x2B, 0x24, 0x03, 0x02, 0x01]
    static let sha256WithRSA: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x0B]
    static let sha1WithRSA: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x05]
    static let rsaEncryption: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01]
    static let ecdsaWithSHA256: [UInt8] = [0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x04, 0x03, 0x02]
    static let unknown: [UInt8] = [0x2B, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x01]
    /// The fuzzer's find: two bytes of SHA-256 swapped.
    static let garbled: [UInt8] = [0x60, 0x86, 0x48, 0x01, 0x03, 0x65, 0x04, 0x02, 0x01]

    /// Sets to try on a receipt whose signer digest is `own`, and whether the receipt stays valid.
    /// The comments say what PKCS7_verify alone would have answered.
    static func variants(own: [UInt8], other: [UInt8]) -> [(String, [[UInt8]], Bool)] {
        [
            ("own digest only", [algorithm(own)], true),
            ("own digest, absent parameters", [algorithm(own, parameters: nil)], true),
            ("own digest twice", [algorithm(own), algorithm(own)], false),  // PKCS7_verify: accepts
            ("empty set", [], false),  // PKCS7_verify: rejects
            ("the other supported digest only", [algorithm(other)], false),  // PKCS7_verify: rejects
            ("SHA-224 only", [algorithm(sha224)], false),  // PKCS7_verify: rejects
            ("SHA-224 then own", [algorithm(sha224), algorithm(own)], false),  // PKCS7_verify: accepts
            ("own then SHA-512", [algorithm(own), algorithm(sha512)], false),  // PKCS7_verify: accepts
            ("MD5 and own", [algorithm(md5), algorithm(own)], false),  // PKCS7_verify: accepts
            ("SHA3-256 and own", [algorithm(sha3_256), algorithm(own)], false),  // PKCS7_verify: accepts
            ("SHAKE128 and own", [algorithm(shake128), algorithm(own)], false),  // PKCS7_verify: accepts
            ("MD4 (legacy provider) and own", [algorithm(md4), algorithm(own)], false),  // PKCS7_verify: rejects
            ("RIPEMD-160 and own", [algorithm(ripemd160), algorithm(own)], false),  // PKCS7_verify: accepts
            ("unknown OID and own", [algorithm(unknown), algorithm(own)], false),  // PKCS7_verify: rejects
            ("garbled OID only", [algorithm(garbled)], false),  // PKCS7_verify: rejects
            ("sha256WithRSAEncryption only", [algorithm(sha256WithRSA)], false),  // PKCS7_verify: an alias of SHA-256
            ("sha1WithRSAEncryption only", [algorithm(sha1WithRSA)], false),  // PKCS7_verify: an alias of SHA-1
            ("rsaEncryption and own", [algorithm(rsaEncryption), algorithm(own)], false),  // PKCS7_verify: rejects
            ("ecdsa-with-SHA256 and own", [algorithm(ecdsaWithSHA256), algorithm(own)], false),  // PKCS7_verify: rejects
            ("an INTEGER instead of an AlgorithmIdentifier", [tlv(0x02, [0x01])], false),  // PKCS7_verify: rejects
            ("own digest with two parameters", [tlv(0x30, tlv(0x06, own) + [0x05, 0x00, 0x05, 0x00])], false),  // PKCS7_verify: rejects
            ("own digest with an invalid OID encoding", [algorithm([0x80] + own)], false),  // PKCS7_verify: rejects
        ]
    }

    /// Entries OpenSSL cannot decode as AlgorithmIdentifiers: the receipt is malformed. Every other
    /// set that is not exactly the signer's digest is an unsupported algorithm choice.
    static let malformedLabels: Set<String> = [
        "an INTEGER instead of an AlgorithmIdentifier", "own digest with two parameters",
        "own digest with an invalid OID encoding",
    ]

    func check(_ file: String, own: [UInt8], other: [UInt8]) throws {
        let v = try makeVerifierOrThrow(["bundle_id": "*", "environments": ["Production", "Sandbox"]])
        let original = Fixtures.data(file)
        for (label, entries, valid) in Self.variants(own: own, other: other) {
            let bytes = try Self.replacingDigestSet(original, entries)
            let expected: Verdict = valid ? .valid : Self.malformedLabels.contains(label) ? .malformed : .unsupportedAlgorithm
            try assertStrict(v, bytes, expected, "\(file), \(label)")
        }
    }

    func testSHA256ReceiptDigestSets() throws {
        try check(Self.sha256Receipt, own: Self.sha256, other: Self.sha1)
    }

    func testSHA1ReceiptDigestSets() throws {
        try check(Self.sha1Receipt, own: Self.sha1, other: Self.sha256)
    }

    // MARK: - Signer identifier, algorithm identifiers, versions, unsigned fields

    typealias Rewrite = (inout Node, _ signer: [Int], _ sigAlg: Int) -> Void

    /// Rewrites applied to a receipt, and the verdict each must get on both paths.
    static let rewrites: [(String, Verdict, Rewrite)] = [
        ("issuer name in upper case", .valid, { root, signer, _ in
            root[signer + [1, 0]] = mapStrings(root[signer + [1, 0]]) { _, bytes in bytes.map { $0 >= 0x61 && $0 <= 0x7A ? $0 - 0x20 : $0 } }
        }),
        ("issuer name as UTF8String", .valid, { root, signer, _ in
            root[signer + [1, 0]] = mapStrings(root[signer + [1, 0]], tag: 0x0C) { _, bytes in bytes }
        }),
        ("issuer name with doubled spaces", .valid, { root, signer, _ in
            root[signer + [1, 0]] = mapStrings(root[signer + [1, 0]]) { _, bytes in bytes.flatMap { $0 == 0x20 ? [0x20, 0x20] : [$0] } }
        }),
        ("issuer name with one letter changed", .untrustedChain, { root, signer, _ in
            var done = false
            root[signer + [1, 0]] = mapStrings(root[signer + [1, 0]]) { _, bytes in
                guard !done, let i = bytes.firstIndex(where: { $0 >= 0x61 && $0 < 0x7A }) else { return bytes }
                done = true
                var b = bytes
                b[i] += 1
                return b
            }
        }),
        ("serial number plus one", .untrustedChain, { root, signer, _ in
            guard case .primitive(let tag, var bytes) = root[signer + [1, 1]] else { return }
            bytes[bytes.count - 1] ^= 0x01
            root[signer + [1, 1]] = .primitive(tag, bytes)
        }),
        ("serial number with a padding zero", .malformed, { root, signer, _ in
            guard case .primitive(let tag, let bytes) = root[signer + [1, 1]] else { return }
            root[signer + [1, 1]] = .primitive(tag, bytes[0] & 0x80 == 0 ? [0x00] + bytes : [0x00, 0x00] + bytes)
        }),
        ("signer named by subject key identifier", .malformed, { root, signer, _ in
            root[signer + [1]] = .primitive(0x80, [UInt8](repeating: 0xAB, count: 20))
        }),
        ("SignerInfo version 3", .malformed, { root, signer, _ in root[signer + [0]] = .primitive(0x02, [0x03]) }),
        ("SignerInfo version with a padding zero", .malformed, { root, signer, _ in root[signer + [0]] = .primitive(0x02, [0x00, 0x01]) }),
        ("SignerInfo version with a long-form length", .valid, { root, signer, _ in
            guard case .primitive(_, let v) = root[signer + [0]] else { return }
            root[signer + [0]] = .raw([0x02, 0x81, UInt8(v.count)] + v)
        }),
        ("embedded certificates in reverse order", .valid, { root, _, _ in
            root[signedData + [3]].children.reverse()
        }),
        ("the first embedded certificate twice", .valid, { root, _, _ in
            root[signedData + [3]].children.append(root[signedData + [3]].children[0])
        }),
        ("SignedData version 5", .malformed, { root, _, _ in root[signedData + [0]] = .primitive(0x02, [0x05]) }),
        ("SignerInfo digest without parameters", .valid, { root, signer, _ in
            root[signer + [2]] = .constructed(0x30, [root[signer + [2, 0]]])
        }),
        ("signature algorithm without parameters", .valid, { root, signer, sigAlg in
            root[signer + [sigAlg]] = .constructed(0x30, [root[signer + [sigAlg, 0]]])
        }),
        ("signature algorithm named with its digest", .valid, { root, signer, sigAlg in
            let own = root[signer + [2, 0]]
            let named: [UInt8] = own == .primitive(0x06, sha1) ? sha1WithRSA : sha256WithRSA
            root[signer + [sigAlg]] = .constructed(0x30, [.primitive(0x06, named), .primitive(0x05, [])])
        }),
        ("unsigned attributes", .malformed, { root, signer, _ in
            let attribute = Node.constructed(0x30, [.primitive(0x06, [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x09, 0x06]),
                                                    .constructed(0x31, [.primitive(0x04, [0x01])])])
            root[signer].children.append(.constructed(0xA1, [attribute]))
        }),
        ("unsigned attributes that are not attributes", .malformed, { root, signer, _ in
            root[signer].children.append(.constructed(0xA1, [.primitive(0x02, [0x01])]))
        }),
        ("an empty CRLs field", .malformed, { root, _, _ in
            root[signedData].children.insert(.constructed(0xA1, []), at: root[signedData].children.count - 1)
        }),
        ("a CRLs field that holds no CRL", .malformed, { root, _, _ in
            root[signedData].children.insert(.constructed(0xA1, [.primitive(0x02, [0x01])]), at: root[signedData].children.count - 1)
        }),
    ]

    /// Applies `change` to every string value of a Name, optionally retagging it.
    static func mapStrings(_ name: Node, tag newTag: UInt8? = nil, _ change: (UInt8, [UInt8]) -> [UInt8]) -> Node {
        var out = name
        for (r, rdn) in name.children.enumerated() {
            for (a, atv) in rdn.children.enumerated() {
                guard atv.children.count == 2, case .primitive(let tag, let bytes) = atv.children[1],
                      [0x0C, 0x13, 0x16].contains(tag) else { continue }
                out[[r, a, 1]] = .primitive(newTag ?? tag, change(tag, bytes))
            }
        }
        return out
    }

    /// The signed content re-chunked as a constructed OCTET STRING nested `depth` deep: the
    /// signature still holds, since it covers the joined octets.
    static func nestedContent(_ depth: Int) -> Rewrite {
        { root, _, _ in
            let path = signedData + [2, 1, 0]
            guard case .primitive(_, let octets) = root[path] else { return }
            var node = Node.constructed(0x24, [.primitive(0x04, Array(octets.prefix(10))), .primitive(0x04, Array(octets.dropFirst(10)))])
            for _ in 1..<depth { node = .constructed(0x24, [node]) }
            root[path] = node
        }
    }

    func checkRewrites(_ file: String) throws {
        let v = try makeVerifierOrThrow(["bundle_id": "*", "environments": ["Production", "Sandbox"]])
        let original = try XCTUnwrap(Node.parse(Fixtures.data(file)))
        XCTAssertEqual(original.encoded, Fixtures.data(file), "the DER tree re-encodes the receipt exactly")
        let signer = Self.signerInfo(original)
        let sigAlg = original[signer].children.count - 2
        // Xcode chunks the content one level deep; deeper nesting is BER no receipt uses.
        let nesting = (1...8).map { ("content chunked \($0) deep", $0 == 1 ? Verdict.valid : .malformed, Self.nestedContent($0)) }
        for (label, expected, rewrite) in Self.rewrites + nesting {
            var root = original
            rewrite(&root, signer, sigAlg)
            XCTAssertNotEqual(root, original, "\(label): the rewrite changed nothing")
            try assertStrict(v, root.encoded, expected, "\(file), \(label)")
        }
    }

    /// The fast path's verdict is `expected`; a fast `valid` is `valid` on the reference path too.
    func assertStrict(_ v: Verifier, _ bytes: [UInt8], _ expected: Verdict, _ label: String,
                      file: StaticString = #filePath, line: UInt = #line) throws {
        let fast = try v.verify(bytes, now: jan2030)
        XCTAssertEqual(fast.verdict, expected, "\(label): \(fast.judgement.reason)", file: file, line: line)
        if fast.isValid {
            let reference = try v.verify(bytes, now: jan2030, path: .reference)
            XCTAssertEqual(reference.verdict, .valid, "\(label): fast path valid, reference says \(reference.judgement.reason)",
                           file: file, line: line)
        }
    }

    func testRewritesOfASHA256Receipt() throws { try checkRewrites(Self.sha256Receipt) }
    func testRewritesOfASHA1Receipt() throws { try checkRewrites(Self.sha1Receipt) }
}
