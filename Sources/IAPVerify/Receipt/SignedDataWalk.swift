// The in-place reading of an App Store receipt's SignedData: a direct walk over definite-length
// TLV headers splits the ContentInfo, and digestAlgorithms, the encapsulated content and the
// SignerInfo are read in place when they have the shape every App Store receipt has. Whatever the
// walk declines goes to the tree decoder (SignedDataTree.swift), which also names the fault.

enum SignedDataParser {
    /// Decodes DER or BER bytes into an envelope. Trailing bytes are rejected.
    ///
    /// Definite-length receipts (all App Store ones) are split at the top with a direct TLV walk
    /// that keeps the certificates as raw bytes: the chain cache needs only their encoding, so no
    /// node tree is built for them.
    /// The content and SignerInfo are still decoded as trees. Anything else (Xcode's BER, or
    /// input the walk declines) is decoded entirely as a tree, which also gives the error.
    static func parse(_ bytes: [UInt8]) throws(EnvelopeProblem) -> SignedDataEnvelope {
        if let split = topLevel(bytes) {
            return try assemble(bytes, split)
        }
        return try parseTree(bytes)
    }

    /// The byte ranges of a definite-length ContentInfo/SignedData, or nil.
    struct Split {
        var digestAlgorithms: Range<Int>
        var encapsulated: Range<Int>
        var certificatesField: Range<Int>?
        var certificates: [Range<Int>]
        var signerInfos: Range<Int>
    }

    static func topLevel(_ b: [UInt8]) -> Split? {
        let n = b.count
        guard let ci = TLV.header(b, 0, end: n), ci.tag == 0x30, ci.end == n,
              let type = TLV.header(b, ci.start, end: ci.end), type.tag == 0x06,
              b[type.start..<type.end].elementsEqual(OID.signedData),
              let explicit = TLV.header(b, type.end, end: ci.end), explicit.tag == 0xA0, explicit.end == ci.end,
              let sd = TLV.header(b, explicit.start, end: explicit.end), sd.tag == 0x30, sd.end == explicit.end,
              let version = TLV.header(b, sd.start, end: sd.end), version.tag == 0x02,
              b[version.start..<version.end].elementsEqual([1]),
              let digests = TLV.header(b, version.end, end: sd.end), digests.tag == 0x31,
              let encap = TLV.header(b, digests.end, end: sd.end), encap.tag == 0x30,
              var next = TLV.header(b, encap.end, end: sd.end) else { return nil }
        var nextAt = encap.end  // where `next` begins (its tag byte)
        var split = Split(digestAlgorithms: version.end..<digests.end, encapsulated: digests.end..<encap.end, certificatesField: nil, certificates: [], signerInfos: 0..<0)
        if next.tag == 0xA0 {
            split.certificatesField = encap.end..<next.end
            var i = next.start
            while i < next.end {
                guard let cert = TLV.header(b, i, end: next.end), cert.tag == 0x30 else { return nil }
                split.certificates.append(i..<cert.end)
                i = cert.end
            }
            guard split.certificates.count <= EnvelopeLimits.maxCertificates,
                  let after = TLV.header(b, next.end, end: sd.end) else { return nil }
            nextAt = next.end
            next = after
        }
        guard next.tag == 0x31, next.end == sd.end else { return nil }
        split.signerInfos = nextAt..<next.end
        return split
    }

    private static func assemble(_ b: [UInt8], _ split: Split) throws(EnvelopeProblem) -> SignedDataEnvelope {
        // Each part in place when it has the shape every App Store receipt has (the tree would
        // accept those bytes and read the same), else from its tree; a part no tree can read
        // sends the whole input to the full decoder, which names the fault.
        let directDigests = directDigestOIDs(b, split.digestAlgorithms)
        let directContent = directEncapsulatedContent(b, split.encapsulated)
        var digestsNode: BERNode?
        var encapFields: BERChildren?
        if directDigests == nil {
            guard let node = try? BERTree.parse(b[split.digestAlgorithms]) else { return try parseTree(b) }
            digestsNode = node
        }
        if directContent == nil {
            guard let node = try? BERTree.parse(b[split.encapsulated]), case .constructed(let fields) = node.content else {
                return try parseTree(b)
            }
            encapFields = fields
        }
        let direct = directSigner(b, split.signerInfos)
        var signers: BERChildren?
        if direct == nil {
            guard let node = try? BERTree.parse(b[split.signerInfos.lowerBound..<split.signerInfos.upperBound]),
                  case .constructed(let list) = node.content else {
                return try parseTree(b)
            }
            signers = list
        }
        // The checks in the tree path's order, so a fault is named the same way.
        let content: ArraySlice<UInt8>
        if let directContent { content = directContent } else if let encapFields { content = try parseEncapsulatedContent(encapFields) } else { return try parseTree(b) }
        let signer: SignerInfo
        if let direct { signer = direct } else if let signers { signer = try onlySigner(signers) } else { return try parseTree(b) }
        let digests: [ArraySlice<UInt8>]
        if let directDigests { digests = directDigests } else if let digestsNode { digests = try digestAlgorithms(digestsNode) } else { return try parseTree(b) }
        try requireSupportedAlgorithms(signer, listed: digests)
        return SignedDataEnvelope(content: content, certificatesField: split.certificatesField.map { b[$0] } ?? [],
                                  certificates: split.certificates.map { b[$0] }, signer: signer)
    }

    /// `digestAlgorithms` on a SET read in place: every entry an AlgorithmIdentifier of the strict
    /// shape; nil for anything else.
    static func directDigestOIDs(_ b: [UInt8], _ range: Range<Int>) -> [ArraySlice<UInt8>]? {
        guard b.withUnsafeBufferPointer({ isPlainTree($0, range.lowerBound, end: range.upperBound, depth: 1) }),
              let set = TLV.header(b, range.lowerBound, end: range.upperBound), set.tag == 0x31, set.end == range.upperBound else {
            return nil
        }
        var oids: [ArraySlice<UInt8>] = []
        var i = set.start
        while i < set.end {
            guard let entry = TLV.header(b, i, end: set.end), let oid = directAlgorithmOID(b, entry) else { return nil }
            oids.append(oid)
            i = entry.end
        }
        return oids
    }

    /// `parseEncapsulatedContent` read in place: `SEQUENCE { OID data, [0] { OCTET STRING } }`
    /// with a primitive OCTET STRING (every App Store receipt); nil for anything else.
    static func directEncapsulatedContent(_ b: [UInt8], _ range: Range<Int>) -> ArraySlice<UInt8>? {
        guard b.withUnsafeBufferPointer({ isPlainTree($0, range.lowerBound, end: range.upperBound, depth: 1) }),
              let encap = TLV.header(b, range.lowerBound, end: range.upperBound), encap.tag == 0x30, encap.end == range.upperBound,
              let type = TLV.header(b, encap.start, end: encap.end), type.tag == 0x06,
              let oid = oidContent(b[type.start..<type.end]), oid.elementsEqual(OID.data),
              let explicit = TLV.header(b, type.end, end: encap.end), explicit.tag == 0xA0, explicit.end == encap.end,
              let octets = TLV.header(b, explicit.start, end: explicit.end), octets.tag == 0x04, octets.end == explicit.end else {
            return nil
        }
        return b[octets.start..<octets.end]
    }

    /// The one SignerInfo of a SignerInfos SET in the shape every App Store receipt has, read in
    /// place: version 1, issuer and serial, two AlgorithmIdentifiers, an OCTET STRING signature,
    /// no signed or unsigned attributes, every nested TLV definite and well formed. Whatever it
    /// reads is what `onlySigner` reads from the tree, which would accept the same bytes; anything
    /// else gives nil, and the tree reads it (and names what is wrong). No tree is built for the
    /// issuer's name on this path.
    static func directSigner(_ b: [UInt8], _ range: Range<Int>) -> SignerInfo? {
        let shapeIsPlain = b.withUnsafeBufferPointer { isPlainTree($0, range.lowerBound, end: range.upperBound, depth: 1) }
        guard shapeIsPlain,
              let set = TLV.header(b, range.lowerBound, end: range.upperBound), set.tag == 0x31, set.end == range.upperBound,
              let info = TLV.header(b, set.start, end: set.end), info.tag == 0x30, info.end == set.end,
              let version = TLV.header(b, info.start, end: info.end), version.tag == 0x02,
              b[version.start..<version.end].elementsEqual([1]),
              let sid = TLV.header(b, version.end, end: info.end), sid.tag == 0x30,
              let issuer = TLV.header(b, sid.start, end: sid.end), issuer.tag == 0x30,
              let serial = TLV.header(b, issuer.end, end: sid.end), serial.tag == 0x02, serial.end == sid.end,
              isMinimalInteger(b[serial.start..<serial.end]),
              let digestAlgorithm = TLV.header(b, sid.end, end: info.end),
              let digestOID = directAlgorithmOID(b, digestAlgorithm),
              // Signed attributes ([0]) end the walk here: the tree reads them.
              let signatureAlgorithm = TLV.header(b, digestAlgorithm.end, end: info.end),
              let signatureOID = directAlgorithmOID(b, signatureAlgorithm),
              let signature = TLV.header(b, signatureAlgorithm.end, end: info.end), signature.tag == 0x04,
              signature.end == info.end else { return nil }
        return SignerInfo(identifier: b[version.end..<sid.end], issuer: b[sid.start..<issuer.end],
                          serial: b[issuer.end..<serial.end], digestOID: digestOID, signatureOID: signatureOID,
                          signedAttributes: nil, signature: b[signature.start..<signature.end])
    }

    /// `algorithmOID` on a TLV read in place: `SEQUENCE { OID }` or `SEQUENCE { OID, NULL }`.
    private static func directAlgorithmOID(_ b: [UInt8], _ h: (tag: UInt8, start: Int, end: Int)) -> ArraySlice<UInt8>? {
        guard h.tag == 0x30, let oid = TLV.header(b, h.start, end: h.end), oid.tag == 0x06 else { return nil }
        if oid.end != h.end {
            guard let null = TLV.header(b, oid.end, end: h.end), null.tag == 0x05, null.start == null.end, null.end == h.end else {
                return nil
            }
        }
        return oidContent(b[oid.start..<oid.end])
    }

    /// True when `b[start..<end]` is a run of definite-length TLVs, each constructed one holding
    /// a run of the same, none an end-of-contents tag, none deeper than the tree allows: bytes
    /// BERTree.parse accepts, with the same structure.
    private static func isPlainTree(_ b: UnsafeBufferPointer<UInt8>, _ start: Int, end: Int, depth: Int) -> Bool {
        guard depth <= BERTree.maxDepth else { return false }
        var i = start
        while i < end {
            guard let h = RawTLV.header(b, i, end: end), h.tag & 0xDF != 0 else { return false }
            if h.tag & 0x20 != 0, !isPlainTree(b, h.start, end: h.end, depth: depth + 1) { return false }
            i = h.end
        }
        return true
    }
}
