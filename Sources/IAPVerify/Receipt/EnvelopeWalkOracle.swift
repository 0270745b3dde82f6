// The oracle that holds the in-place envelope walk to the tree decoder.

/// The fuzz harness's oracle for the envelope walks: each part read in place (digestAlgorithms,
/// the encapsulated content, the SignerInfo) must be read the same way by its tree, which must
/// accept those bytes (the input as DER, and as base64 when it decodes). Parts the walks decline
/// are read by the trees; the certificates stay raw bytes either way.
@_spi(Testing) public enum EnvelopeWalkOracle {
    public static func agrees(_ input: UnsafeRawBufferPointer) -> Bool {
        agrees(Array(input)) && (Base64.decode(input).map(agrees) ?? true)
    }

    private static func agrees(_ b: [UInt8]) -> Bool {
        guard let split = SignedDataParser.topLevel(b) else { return true }
        if let walked = SignedDataParser.directDigestOIDs(b, split.digestAlgorithms) {
            guard let node = try? BERTree.parse(b[split.digestAlgorithms]),
                  let tree = try? SignedDataParser.digestAlgorithms(node),
                  walked.count == tree.count, zip(walked, tree).allSatisfy({ $0.elementsEqual($1) }) else { return false }
        }
        if let walked = SignedDataParser.directEncapsulatedContent(b, split.encapsulated) {
            guard let node = try? BERTree.parse(b[split.encapsulated]), case .constructed(let fields) = node.content,
                  let tree = try? SignedDataParser.parseEncapsulatedContent(fields), walked.elementsEqual(tree) else { return false }
        }
        if let x = SignedDataParser.directSigner(b, split.signerInfos) {
            guard let node = try? BERTree.parse(b[split.signerInfos.lowerBound..<split.signerInfos.upperBound]),
                  case .constructed(let list) = node.content, let y = try? SignedDataParser.onlySigner(list) else { return false }
            return y.signedAttributes == nil && x.identifier.elementsEqual(y.identifier) && x.issuer.elementsEqual(y.issuer)
                && x.serial.elementsEqual(y.serial) && x.digestOID.elementsEqual(y.digestOID)
                && x.signatureOID.elementsEqual(y.signatureOID) && x.signature.elementsEqual(y.signature)
        }
        return true
    }
}
