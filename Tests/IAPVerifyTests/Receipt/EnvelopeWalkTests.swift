import XCTest
@testable import IAPVerify

/// The envelope parts read in place (digestAlgorithms, the encapsulated content, the SignerInfo)
/// must be what the tree reads, and only for bytes the tree accepts: checked on every receipt
/// fixture and on mutants of several (each byte replaced by values that change a tag, a length
/// or a form), part by part and for the whole envelope against the full tree decoding.
final class EnvelopeWalkTests: XCTestCase {
    private func treeSigner(_ b: [UInt8], _ range: Range<Int>) -> SignerInfo? {
        guard let node = try? BERTree.parse(b[range]), case .constructed(let list) = node.content else { return nil }
        return try? SignedDataParser.onlySigner(list)
    }

    private func same(_ a: SignerInfo, _ b: SignerInfo) -> Bool {
        Array(a.identifier) == Array(b.identifier) && Array(a.issuer) == Array(b.issuer) && Array(a.serial) == Array(b.serial)
            && Array(a.digestOID) == Array(b.digestOID) && Array(a.signatureOID) == Array(b.signatureOID)
            && Array(a.signature) == Array(b.signature)
            && a.signedAttributes?.encodedBytes.map { $0 } == b.signedAttributes?.encodedBytes.map { $0 }
    }

    /// (walk read it, tree read it) for one input whose top level splits.
    private func compare(_ bytes: [UInt8], _ label: String) -> (walk: Bool, tree: Bool)? {
        guard let split = SignedDataParser.topLevel(bytes) else { return nil }
        let walk = SignedDataParser.directSigner(bytes, split.signerInfos)
        let tree = treeSigner(bytes, split.signerInfos)
        if let walk {
            guard let tree else {
                XCTFail("\(label): the walk reads a SignerInfo the tree refuses")
                return (true, false)
            }
            XCTAssertTrue(same(walk, tree), "\(label): the walk and the tree read different SignerInfos")
        }
        return (walk != nil, tree != nil)
    }

    func testEveryFixture() {
        let files = Fixtures.list("receipts").map { "receipts/\($0)" } + Fixtures.list("xcode").map { "xcode/\($0)" }
            + Fixtures.list("fakepki").map { "fakepki/\($0)" }
        var walked = 0
        for file in files {
            if let r = compare(Fixtures.data(file), file), r.walk { walked += 1 }
        }
        // Every App Store receipt takes the walk (none has signed attributes).
        XCTAssertGreaterThanOrEqual(walked, Fixtures.list("receipts").count - 2)
    }

    func testMutantsOfTheSignerInfo() throws {
        var walked = 0, treeOnly = 0, neither = 0
        for file in ["receipts/sandbox_2016-08-27_com.whalerock.golfwang.der", "receipts/production_2023-08-28_com.ideasoncanvas.mindnode.macos_sha256.der",
                     "receipts/production_2015-09-16_com.mustafadur.Kargotakip.der"] {
            let original = Fixtures.data(file)
            let split = try XCTUnwrap(SignedDataParser.topLevel(original))
            for at in split.signerInfos {
                // The signature's own bytes change nothing the walk reads: sample them.
                if at > split.signerInfos.upperBound - 200, at % 16 != 0 { continue }
                for value: UInt8 in [0x00, 0x01, 0x02, 0x04, 0x05, 0x06, 0x10, 0x1F, 0x20, 0x30, 0x31, 0x80, 0x81, 0xA0, 0xFF, original[at] &+ 1] {
                    guard value != original[at] else { continue }
                    var bytes = original
                    bytes[at] = value
                    guard let r = compare(bytes, "\(file) byte \(at) = \(value)") else { continue }
                    switch (r.walk, r.tree) {
                    case (true, _): walked += 1
                    case (false, true): treeOnly += 1
                    case (false, false): neither += 1
                    }
                }
            }
        }
        // Each kind of outcome happens: the walk reads, declines what the tree still reads
        // (a primitive SEQUENCE tag, say), and declines what both refuse.
        print("signer walk mutants: walk \(walked), tree only \(treeOnly), neither \(neither)")
        XCTAssertGreaterThan(walked, 100)
        XCTAssertGreaterThan(treeOnly, 0)
        XCTAssertGreaterThan(neither, 100)
    }

    /// A short, comparable account of a decoding: its refusal, or hashes of what it read.
    private func describe(_ r: Result<SignedDataEnvelope, EnvelopeProblem>) -> String {
        switch r {
        case .success(let e):
            let s = e.signer
            let parts: [[UInt8]] = [Array(e.content), Array(e.certificatesField), Array(s.identifier), Array(s.issuer), Array(s.serial),
                                    Array(s.digestOID), Array(s.signatureOID), Array(s.signature), s.signedAttributes.map { Array($0.encodedBytes) } ?? []]
            return "decoded " + parts.map { "\($0.count):\($0.hashValue)" }.joined(separator: " ") + " \(e.certificates.map { Array($0) }.hashValue)"
        case .failure(.malformed(let m)): return "malformed: \(m)"
        case .failure(.unsupportedAlgorithm(let m)): return "unsupported: \(m)"
        }
    }

    /// The whole envelope, walked, against the full tree decoding: the same envelope or the same
    /// refusal, for mutants of every byte outside the certificates and the payload.
    func testWholeEnvelopeMutantsAgreeWithTheTree() throws {
        var compared = 0, decoded = 0
        for file in ["receipts/sandbox_2016-08-27_com.whalerock.golfwang.der", "receipts/production_2023-08-28_com.ideasoncanvas.mindnode.macos_sha256.der"] {
            let original = Fixtures.data(file)
            let split = try XCTUnwrap(SignedDataParser.topLevel(original))
            let payload = try XCTUnwrap(SignedDataParser.directEncapsulatedContent(original, split.encapsulated))
            var positions = Array(0..<(split.encapsulated.lowerBound + 40))            // headers, digests, encap header
            positions += Array(split.signerInfos.lowerBound..<(split.signerInfos.upperBound - 200))
            positions += Array(payload.startIndex - 6..<payload.startIndex)               // the OCTET STRING's header
            for at in positions {
                for value: UInt8 in [0x00, 0x02, 0x04, 0x05, 0x06, 0x10, 0x20, 0x30, 0x31, 0x80, 0x81, 0xA0, 0xFF, original[at] &+ 1, original[at] &- 1] {
                    guard value != original[at] else { continue }
                    var bytes = original
                    bytes[at] = value
                    let fast = describe(Result { () throws(EnvelopeProblem) in try SignedDataParser.parse(bytes) })
                    let tree = describe(Result { () throws(EnvelopeProblem) in try SignedDataParser.parseTree(bytes) })
                    XCTAssertEqual(fast, tree, "\(file) byte \(at) = \(value)")
                    compared += 1
                    if fast.hasPrefix("decoded") { decoded += 1 }
                }
            }
        }
        print("envelope mutants: \(compared) compared, \(decoded) decoded")
        XCTAssertGreaterThan(decoded, 1000)
    }

    func testDigestAndContentWalks() {
        for file in Fixtures.list("receipts").map({ "receipts/\($0)" }) + Fixtures.list("fakepki").map({ "fakepki/\($0)" }) {
            let bytes = Fixtures.data(file)
            guard let split = SignedDataParser.topLevel(bytes) else { continue }
            if SignedDataParser.directDigestOIDs(bytes, split.digestAlgorithms) != nil {
                XCTAssertNotNil(try? BERTree.parse(bytes[split.digestAlgorithms]), file)
            }
            if let direct = SignedDataParser.directEncapsulatedContent(bytes, split.encapsulated) {
                // The tree's reading: SEQUENCE { OID, [0] { OCTET STRING } }.
                var octets: ArraySlice<UInt8>?
                if let node = try? BERTree.parse(bytes[split.encapsulated]), case .constructed(let fields) = node.content {
                    var it = fields.makeIterator()
                    _ = it.next()
                    var inside = (it.next().flatMap { explicit -> BERChildren? in
                        if case .constructed(let inner) = explicit.content { return inner } else { return nil }
                    })?.makeIterator()
                    if let first = inside?.next(), case .primitive(let content) = first.content {
                        octets = content
                    }
                }
                XCTAssertEqual(direct.map { $0 }, octets?.map { $0 }, file)
            }
        }
    }
}
