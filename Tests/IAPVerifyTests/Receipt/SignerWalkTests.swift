import XCTest
@testable import IAPVerify

/// The SignerInfo read in place must be what the tree reads, and only for bytes the tree
/// accepts: checked on every receipt fixture and on mutants of the SignerInfo bytes of several
/// (each byte replaced by values that change a tag, a length or a form).
final class SignerWalkTests: XCTestCase {
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
}
