// The fast path is a strict profile. Every AlgorithmIdentifier it reads (each entry of
// the digestAlgorithms SET, the SignerInfo digest, the signature algorithm) may carry absent or
// NULL parameters and nothing else. Each is rewritten here, in a real SHA-1, a real SHA-256 and a
// real Xcode (BER) receipt, with parameters of every universal tag, and the fast path must refuse
// every one. The issue's own finding (an empty OID as parameters in an Xcode receipt) is among them.

import XCTest
@_spi(Testing) @testable import IAPVerify

final class StrictProfileTests: XCTestCase {
    /// A BER tree that keeps indefinite lengths, so Xcode's receipts re-encode exactly.
    indirect enum Node: Equatable {
        case primitive(UInt8, [UInt8])
        case constructed(UInt8, [Node], indefinite: Bool)

        static func parse(_ b: [UInt8]) -> Node? {
            var i = 0
            guard let node = parse(b, &i), i == b.count else { return nil }
            return node
        }

        private static func parse(_ b: [UInt8], _ i: inout Int) -> Node? {
            guard i + 2 <= b.count else { return nil }
            let tag = b[i]
            let first = b[i + 1]
            i += 2
            if first == 0x80 {
                guard tag & 0x20 != 0 else { return nil }
                var children: [Node] = []
                while true {
                    guard i + 2 <= b.count else { return nil }
                    if b[i] == 0, b[i + 1] == 0 { i += 2; break }
                    guard let child = parse(b, &i) else { return nil }
                    children.append(child)
                }
                return .constructed(tag, children, indefinite: true)
            }
            var length = Int(first)
            if first > 0x80 {
                let n = Int(first & 0x7F)
                guard n <= 4, i + n <= b.count else { return nil }
                length = 0
                for k in 0..<n { length = length << 8 | Int(b[i + k]) }
                i += n
            }
            guard length <= b.count - i else { return nil }
            let end = i + length
            guard tag & 0x20 != 0 else {
                defer { i = end }
                return .primitive(tag, Array(b[i..<end]))
            }
            var children: [Node] = []
            while i < end {
                guard let child = parse(b, &i) else { return nil }
                children.append(child)
            }
            return i == end ? .constructed(tag, children, indefinite: false) : nil
        }

        var encoded: [UInt8] {
            switch self {
            case .primitive(let tag, let bytes): return UnsignedFieldTests.tlv(tag, bytes)
            case .constructed(let tag, let children, let indefinite):
                let body = children.flatMap { $0.encoded }
                return indefinite ? [tag, 0x80] + body + [0, 0] : UnsignedFieldTests.tlv(tag, body)
            }
        }

        var children: [Node] {
            get { if case .constructed(_, let c, _) = self { return c } else { return [] } }
            set { if case .constructed(let tag, _, let indefinite) = self { self = .constructed(tag, newValue, indefinite: indefinite) } }
        }

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

    static let signedData = [1, 0]

    /// Paths of every AlgorithmIdentifier the fast path reads, with a name for messages.
    static func algorithmIdentifiers(_ root: Node) -> [(String, [Int])] {
        let sd = root[signedData]
        let signer = signedData + [sd.children.count - 1, 0]
        let signerFields = root[signer].children.count
        var out: [(String, [Int])] = []
        for i in root[signedData + [1]].children.indices { out.append(("digestAlgorithms[\(i)]", signedData + [1, i])) }
        out.append(("SignerInfo digestAlgorithm", signer + [2]))
        out.append(("SignerInfo signatureAlgorithm", signer + [signerFields - 2]))
        return out
    }

    /// Parameters of every universal tag: empty, with one content byte, and constructed.
    static var hostileParameters: [(String, Node)] {
        var out: [(String, Node)] = []
        for tag in UInt8(0)...30 {
            if tag != 0x05 { out.append(("tag \(tag), empty", .primitive(tag, []))) }
            out.append(("tag \(tag), one byte", .primitive(tag, [0x00])))
            out.append(("tag \(tag), constructed", .constructed(tag | 0x20, [], indefinite: false)))
        }
        out.append(("NULL then NULL", .constructed(0x30, [.primitive(0x05, []), .primitive(0x05, [])], indefinite: false)))
        return out
    }

    func check(_ file: String, _ v: Verifier) throws {
        let original = Fixtures.data(file)
        let root = try XCTUnwrap(Node.parse(original), file)
        XCTAssertEqual(root.encoded, original, "\(file): the tree re-encodes the receipt exactly")
        let intact = try v.verify(original, now: jan2030)
        XCTAssertEqual(intact.verdict, .valid, "\(file): \(intact.judgement.reason)")
        XCTAssertEqual(try v.verify(original, now: jan2030, path: .reference).verdict, .valid, file)

        var tried = 0
        for (where_, path) in Self.algorithmIdentifiers(root) {
            let oid = root[path + [0]]
            // Absent and NULL parameters are the two shapes receipts use: both stay valid.
            for (label, identifier) in [("absent", Node.constructed(0x30, [oid], indefinite: false)),
                                        ("NULL", .constructed(0x30, [oid, .primitive(0x05, [])], indefinite: false))] {
                var r = root
                r[path] = identifier
                let fast = try v.verify(r.encoded, now: jan2030)
                XCTAssertEqual(fast.verdict, .valid, "\(file), \(where_), \(label) parameters: \(fast.judgement.reason)")
            }
            for (label, parameters) in Self.hostileParameters {
                var r = root
                r[path] = .constructed(0x30, [oid, parameters], indefinite: false)
                let fast = try v.verify(r.encoded, now: jan2030)
                XCTAssertNotEqual(fast.verdict, .valid, "\(file), \(where_), parameters \(label)")
                tried += 1
            }
        }
        XCTAssertGreaterThanOrEqual(tried, 3 * Self.hostileParameters.count)
    }

    func testAppStoreReceiptsRefuseEveryOtherParameter() throws {
        let v = try makeVerifierOrThrow(["bundle_id": "*", "environments": ["Production", "Sandbox"]])
        try check(UnsignedFieldTests.sha256Receipt, v)
        try check(UnsignedFieldTests.sha1Receipt, v)
    }

    func testXcodeReceiptRefusesEveryOtherParameter() throws {
        let v = try makeVerifierOrThrow(["bundle_id": "*", "environments": ["Xcode"],
                                         "xcode": ["accept": true, "roots_pem": [Fixtures.storeKitPEM]]])
        try check("xcode/xcode_2021-04-16_com.temporary.ipatestapp_known_device_id.der", v)
    }

    /// The finding: the digest SET entry's parameters are `06 00`, an empty OID.
    func testEmptyOIDParametersInXcodeReceipt() throws {
        let v = try makeVerifierOrThrow(["bundle_id": "*", "environments": ["Production", "Sandbox", "Xcode"],
                                         "xcode": ["accept": true, "roots_pem": [Fixtures.storeKitPEM]]])
        var bytes = Fixtures.data("xcode/xcode_2021-04-16_com.temporary.ipatestapp_known_device_id.der")
        let entry: [UInt8] = [0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00]
        let at = try XCTUnwrap((0...(bytes.count - entry.count)).first { bytes[$0..<$0 + entry.count].elementsEqual(entry) })
        bytes[at + entry.count - 2] = 0x06
        let fast = try v.verify(bytes, now: jan2030)
        XCTAssertEqual(fast.verdict, .malformed, fast.judgement.reason)
    }

    /// Non-sorted signed attributes are re-encoded (sorted) by OpenSSL before it verifies, so the
    /// fast path, which verifies the bytes received, accepts only DER sets.
    func testSignedAttributesMustBeDER() throws {
        func attribute(_ oid: [UInt8], _ value: [UInt8]) -> [UInt8] {
            UnsignedFieldTests.tlv(0x30, UnsignedFieldTests.tlv(0x06, oid) + UnsignedFieldTests.tlv(0x31, value))
        }
        let contentType = attribute([0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x09, 0x03], [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x01])
        let digest = attribute([0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x09, 0x04], UnsignedFieldTests.tlv(0x04, [UInt8](repeating: 1, count: 32)))
        let sorted = [contentType, digest].sorted { $0.lexicographicallyPrecedes($1) }
        func node(_ parts: [[UInt8]]) throws -> BERNode { try BERTree.parse(UnsignedFieldTests.tlv(0xA0, parts.flatMap { $0 })) }
        XCTAssertTrue(SignedDataParser.isDERSet(try node(sorted)))
        XCTAssertFalse(SignedDataParser.isDERSet(try node(sorted.reversed())))
        // A long-form length where a short one fits is BER, not DER.
        var long = sorted[0]
        long.replaceSubrange(0..<2, with: [long[0], 0x81, long[1]])
        XCTAssertFalse(SignedDataParser.isDERSet(try node([long, sorted[1]])))
    }
}
