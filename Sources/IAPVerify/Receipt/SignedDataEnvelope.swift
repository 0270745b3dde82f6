// The PKCS#7 / CMS SignedData container of an app receipt, decoded with BERTree.
// Nothing here is trusted: this only locates the content, certificates and the one SignerInfo.

/// The parts of a SignedData that verification needs, as slices of the input bytes.
struct SignedDataEnvelope {
    /// The `data` content octets (BER chunks already joined); for DER, a slice of the input
    /// (a large receipt's payload is most of it, and is not copied).
    var content: ArraySlice<UInt8>
    /// The exact encoded `certificates [0]` field; the verified-chain cache is keyed on it.
    var certificatesField: ArraySlice<UInt8>
    /// Each embedded certificate's encoding, in the order given.
    var certificates: [ArraySlice<UInt8>]
    var signer: SignerInfo
}

struct SignerInfo {
    /// The exact encoding of the signer identifier (issuerAndSerialNumber).
    var identifier: ArraySlice<UInt8>
    var issuer: ArraySlice<UInt8>
    var serial: ArraySlice<UInt8>
    var digestOID: ArraySlice<UInt8>
    var signatureOID: ArraySlice<UInt8>
    /// The `signedAttrs [0]` field as encoded, when present.
    var signedAttributes: BERNode?
    var signature: ArraySlice<UInt8>

    var digest: DigestAlgorithm? {
        if digestOID.elementsEqual(OID.sha1) { return .sha1 }
        if digestOID.elementsEqual(OID.sha256) { return .sha256 }
        return nil
    }

    /// The scheme, and the digest it is bound to when the OID names one (sha256WithRSA...).
    var scheme: (SignatureScheme, DigestAlgorithm?)? {
        switch Array(signatureOID) {
        case OID.rsaEncryption: return (.rsa, nil)
        case OID.sha1WithRSA: return (.rsa, .sha1)
        case OID.sha256WithRSA: return (.rsa, .sha256)
        case OID.ecPublicKey: return (.ecdsa, nil)
        case OID.ecdsaWithSHA1: return (.ecdsa, .sha1)
        case OID.ecdsaWithSHA256: return (.ecdsa, .sha256)
        default: return nil
        }
    }
}

/// Why an envelope could not be used: the verdict plus a sentence.
enum EnvelopeProblem: Error {
    case malformed(String)
    case unsupportedAlgorithm(String)
}

/// Limits on the envelope (see README, "Limits").
package enum EnvelopeLimits {
    /// Apple embeds 3 certificates (Xcode 1); more than this is not a receipt.
    public static let maxCertificates = 10
}

enum SignedDataParser {
    /// Decodes DER or BER bytes into an envelope. Trailing bytes are rejected.
    ///
    /// Definite-length receipts (all App Store ones) are split at the top with a direct TLV walk
    /// that keeps the certificates as raw bytes: the chain cache needs only their encoding, and
    /// building a node tree for three certificates cost as much as the signature check.
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
    /// else gives nil, and the tree reads it (and names what is wrong). Building that tree for the
    /// issuer's name cost as much as the rest of the envelope.
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

    /// The reference decoding: the whole structure as a BER tree (DER or BER).
    static func parseTree(_ bytes: [UInt8]) throws(EnvelopeProblem) -> SignedDataEnvelope {
        let root: BERNode
        do {
            root = try BERTree.parse(bytes)
        } catch {
            throw .malformed("the receipt is not a valid DER/BER structure (\(error.rawValue))")
        }
        guard root.identifier == .sequence, case .constructed(let top) = root.content else {
            throw .malformed("the receipt is not a PKCS#7 ContentInfo SEQUENCE")
        }
        var it = top.makeIterator()
        guard let typeNode = it.next(), let contentType = oidBytes(typeNode) else {
            throw .malformed("the ContentInfo has no content type")
        }
        guard contentType.elementsEqual(OID.signedData) else {
            throw .malformed("the ContentInfo is not signedData")
        }
        guard let explicit = it.next(), explicit.identifier == .context0,
              case .constructed(let wrapped) = explicit.content else {
            throw .malformed("the signedData content is missing")
        }
        guard it.next() == nil else { throw .malformed("the ContentInfo has extra fields") }
        var inner = wrapped.makeIterator()
        guard let signedDataNode = inner.next(), inner.next() == nil,
              signedDataNode.identifier == .sequence,
              case .constructed(let sd) = signedDataNode.content else {
            throw .malformed("the SignedData is not a SEQUENCE")
        }
        return try parseSignedData(sd)
    }

    private static func parseSignedData(_ sd: BERChildren) throws(EnvelopeProblem) -> SignedDataEnvelope {
        var it = sd.makeIterator()
        guard let version = it.next(), isVersionOne(version) else {
            throw .malformed("the SignedData version is missing or not 1")
        }
        guard let digestSet = it.next(), digestSet.identifier == .set else {
            throw .malformed("the SignedData digestAlgorithms SET is missing")
        }
        guard let encap = it.next(), encap.identifier == .sequence,
              case .constructed(let encapFields) = encap.content else {
            throw .malformed("the SignedData encapsulated content is missing")
        }
        let content = try parseEncapsulatedContent(encapFields)

        var next = it.next()
        var certificatesField: ArraySlice<UInt8> = []
        var certificates: [ArraySlice<UInt8>] = []
        if let node = next, node.identifier == .context0 {
            guard case .constructed(let certs) = node.content else {
                throw .malformed("the certificates field is not constructed")
            }
            certificatesField = node.encodedBytes
            for cert in certs {
                guard cert.identifier == .sequence else {
                    throw .malformed("an embedded certificate is not a plain X.509 certificate")
                }
                certificates.append(cert.encodedBytes)
            }
            guard certificates.count <= EnvelopeLimits.maxCertificates else {
                throw .malformed("the receipt embeds \(certificates.count) certificates; at most \(EnvelopeLimits.maxCertificates) are accepted")
            }
            next = it.next()
        }
        if let node = next, node.identifier == .context1 {
            // Unsigned, unused by PKCS7_verify without CRL checking, and never sent by Apple.
            throw .malformed("the receipt carries a CRLs field; App Store receipts have none")
        }
        guard let signerSet = next, signerSet.identifier == .set,
              case .constructed(let signers) = signerSet.content else {
            throw .malformed("the SignedData signerInfos SET is missing")
        }
        guard it.next() == nil else { throw .malformed("the SignedData has extra fields") }
        let signer = try onlySigner(signers)
        let digests = try digestAlgorithms(digestSet)
        try requireSupportedAlgorithms(signer, listed: digests)
        return SignedDataEnvelope(content: content, certificatesField: certificatesField,
                                  certificates: certificates, signer: signer)
    }

    /// Exactly one SignerInfo.
    static func onlySigner(_ signers: BERChildren) throws(EnvelopeProblem) -> SignerInfo {
        var signerNodes = signers.makeIterator()
        guard let only = signerNodes.next() else {
            throw .malformed("the receipt has no SignerInfo: it is not signed")
        }
        guard signerNodes.next() == nil else {
            throw .malformed("the receipt has more than one SignerInfo")
        }
        return try parseSignerInfo(only)
    }

    /// Check 3: a supported digest, a signature algorithm that agrees with it, and a
    /// digestAlgorithms SET that lists exactly that digest.
    ///
    /// The SET lies outside the signature. Apple's receipts list only the signer's digest, and
    /// OpenSSL's PKCS7_verify refuses a set that omits it or names a digest OpenSSL cannot compute,
    /// yet accepts extra digests and signature-algorithm aliases. Rather than mirror those quirks,
    /// both crypto paths require the one shape Apple produces.
    private static func requireSupportedAlgorithms(_ signer: SignerInfo, listed: [ArraySlice<UInt8>]) throws(EnvelopeProblem) {
        guard signer.digest != nil else {
            throw .unsupportedAlgorithm("the content digest \(oidText(signer.digestOID)) is not SHA-1 or SHA-256")
        }
        guard let (_, bound) = signer.scheme else {
            throw .unsupportedAlgorithm("the signature algorithm \(oidText(signer.signatureOID)) is not RSA PKCS#1 v1.5 or ECDSA")
        }
        if let bound, bound != signer.digest {
            throw .unsupportedAlgorithm("the signature algorithm's digest does not match the SignerInfo digest")
        }
        guard listed.count == 1, listed[0].elementsEqual(signer.digestOID) else {
            let names = listed.isEmpty ? "nothing" : listed.map { oidText($0) }.joined(separator: ", ")
            throw .unsupportedAlgorithm("the SignedData digestAlgorithms SET lists \(names); it must list only the signer's digest, \(oidText(signer.digestOID))")
        }
    }

    /// The OIDs of the SignedData digestAlgorithms SET; each entry must be an AlgorithmIdentifier.
    static func digestAlgorithms(_ set: BERNode) throws(EnvelopeProblem) -> [ArraySlice<UInt8>] {
        guard set.identifier == .set, case .constructed(let entries) = set.content else {
            throw .malformed("the SignedData digestAlgorithms field is not a SET")
        }
        var oids: [ArraySlice<UInt8>] = []
        for entry in entries {
            guard let oid = algorithmOID(entry) else {
                throw .malformed("the SignedData digestAlgorithms SET holds a malformed AlgorithmIdentifier")
            }
            oids.append(oid)
        }
        return oids
    }

    static func parseEncapsulatedContent(_ fields: BERChildren) throws(EnvelopeProblem) -> ArraySlice<UInt8> {
        var it = fields.makeIterator()
        guard let typeNode = it.next(), let type = oidBytes(typeNode) else {
            throw .malformed("the encapsulated content has no type")
        }
        guard type.elementsEqual(OID.data) else {
            throw .malformed("the signed content is not of type data")
        }
        guard let explicit = it.next() else {
            throw .malformed("the signed content is detached: the receipt carries no payload")
        }
        guard explicit.identifier == .context0, case .constructed(let wrapped) = explicit.content else {
            throw .malformed("the signed content is not an explicit [0] field")
        }
        guard it.next() == nil else { throw .malformed("the encapsulated content has extra fields") }
        var inner = wrapped.makeIterator()
        guard let octets = inner.next(), inner.next() == nil else {
            throw .malformed("the signed content must hold exactly one OCTET STRING")
        }
        guard let bytes = octetString(octets, chunked: true) else {
            throw .malformed("the signed content is not an OCTET STRING of the shape receipts use")
        }
        return bytes
    }

    private static func parseSignerInfo(_ node: BERNode) throws(EnvelopeProblem) -> SignerInfo {
        guard node.identifier == .sequence, case .constructed(let fields) = node.content else {
            throw .malformed("the SignerInfo is not a SEQUENCE")
        }
        var it = fields.makeIterator()
        guard let version = it.next(), isVersionOne(version) else {
            throw .malformed("the SignerInfo version is missing or not 1")
        }
        guard let sid = it.next() else { throw .malformed("the SignerInfo has no signer identifier") }
        if sid.identifier == .context0 {
            // CMS allows it; PKCS#7, which receipts are, does not, and OpenSSL cannot decode it.
            throw .malformed("the SignerInfo names its signer by subject key identifier; receipts use issuer and serial number")
        }
        guard sid.identifier == .sequence, case .constructed(let parts) = sid.content else {
            throw .malformed("the SignerInfo signer identifier is malformed")
        }
        var p = parts.makeIterator()
        guard let issuer = p.next(), issuer.identifier == .sequence,
              let serial = p.next(), isMinimalInteger(serial), p.next() == nil else {
            throw .malformed("the SignerInfo issuerAndSerialNumber is malformed")
        }
        guard let digestAlg = it.next(), let digestOID = algorithmOID(digestAlg) else {
            throw .malformed("the SignerInfo digest algorithm is malformed")
        }
        guard var next = it.next() else { throw .malformed("the SignerInfo is truncated") }
        var signedAttributes: BERNode?
        if next.identifier == .context0 {
            guard case .constructed = next.content, isDERSet(next) else {
                throw .malformed("the SignerInfo signed attributes are not DER (definite, minimal lengths, sorted)")
            }
            signedAttributes = next
            guard let n = it.next() else { throw .malformed("the SignerInfo is truncated") }
            next = n
        }
        guard let signatureOID = algorithmOID(next) else {
            // RSASSA-PSS always carries parameters, which the strict profile does not read: the
            // CMS is well formed, its algorithm is one receipts never use.
            if let oid = parameterisedAlgorithmOID(next), oid.elementsEqual(OID.rsassaPSS) {
                throw .unsupportedAlgorithm("the signature algorithm is RSASSA-PSS; App Store receipts are signed with RSA PKCS#1 v1.5 or ECDSA")
            }
            throw .malformed("the SignerInfo signature algorithm is malformed")
        }
        guard let sigNode = it.next(), let signature = octetString(sigNode, chunked: false) else {
            throw .malformed("the SignerInfo signature is missing")
        }
        if let extra = it.next() {
            // Unsigned attributes are outside the signature, and Apple never sends them.
            throw .malformed(extra.identifier == .context1
                ? "the SignerInfo carries unsigned attributes; App Store receipts have none"
                : "the SignerInfo has unexpected fields")
        }
        return SignerInfo(identifier: sid.encodedBytes, issuer: issuer.encodedBytes, serial: serial.encodedBytes,
                          digestOID: digestOID, signatureOID: signatureOID,
                          signedAttributes: signedAttributes, signature: signature[...])
    }

    /// The OID of an AlgorithmIdentifier in the one shape Apple and Xcode write:
    /// `SEQUENCE { OID }` or `SEQUENCE { OID, NULL }`. Parameters of any other kind are
    /// outside the signature and unused by SHA-1, SHA-256, RSA PKCS#1 v1.5 and ECDSA, so the
    /// strict profile refuses them rather than guess how OpenSSL would read them.
    static func algorithmOID(_ node: BERNode) -> ArraySlice<UInt8>? {
        guard node.identifier == .sequence, case .constructed(let fields) = node.content else { return nil }
        var it = fields.makeIterator()
        guard let oid = it.next() else { return nil }
        if let parameters = it.next() {
            guard parameters.identifier == .null, case .primitive(let body) = parameters.content, body.isEmpty else {
                return nil
            }
        }
        guard it.next() == nil else { return nil }
        return oidBytes(oid)
    }

    /// The OID of an AlgorithmIdentifier whose parameters are a SEQUENCE (RSASSA-PSS's shape),
    /// only to name an algorithm that is refused; the parameters are not read.
    static func parameterisedAlgorithmOID(_ node: BERNode) -> ArraySlice<UInt8>? {
        guard node.identifier == .sequence, case .constructed(let fields) = node.content else { return nil }
        var it = fields.makeIterator()
        guard let oid = it.next(), let parameters = it.next(), parameters.identifier == .sequence, it.next() == nil else {
            return nil
        }
        return oidBytes(oid)
    }

    /// Signed attributes as DER: OpenSSL re-encodes them (sorting the SET) before it verifies,
    /// while the cached path verifies the bytes as received, so the strict profile accepts only
    /// encodings that re-encode to themselves.
    static func isDERSet(_ node: BERNode) -> Bool {
        var bytes = Array(node.encodedBytes)
        guard !bytes.isEmpty else { return false }
        bytes[0] = 0x31
        guard let set = try? BERTree.parseDER(bytes), case .constructed(let elements) = set.content else { return false }
        var previous: ArraySlice<UInt8>?
        for element in elements {
            let current = element.encodedBytes
            if let previous, !previous.lexicographicallyPrecedes(current), !previous.elementsEqual(current) { return false }
            previous = current
        }
        return true
    }

    /// The version INTEGER of a SignedData or SignerInfo: 1 in every receipt (PKCS#7).
    static func isVersionOne(_ node: BERNode) -> Bool {
        guard node.identifier == .integer, case .primitive(let bytes) = node.content else { return false }
        return bytes.elementsEqual([1])
    }

    /// A primitive INTEGER in minimal two's-complement form, the only form OpenSSL decodes.
    static func isMinimalInteger(_ node: BERNode) -> Bool {
        guard node.identifier == .integer, case .primitive(let bytes) = node.content else { return false }
        return isMinimalInteger(bytes)
    }

    static func isMinimalInteger(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard let first = bytes.first else { return false }
        guard bytes.count > 1 else { return true }
        let second = bytes[bytes.startIndex + 1]
        return !(first == 0x00 && second & 0x80 == 0) && !(first == 0xFF && second & 0x80 != 0)
    }

    /// The content of an OBJECT IDENTIFIER, when its encoding is one OpenSSL would decode too:
    /// the last byte ends a subidentifier and no subidentifier starts with a padding 0x80.
    static func oidBytes(_ node: BERNode) -> ArraySlice<UInt8>? {
        guard node.identifier == .objectIdentifier, case .primitive(let bytes) = node.content else { return nil }
        return oidContent(bytes)
    }

    /// The same rule on an OID's content bytes.
    static func oidContent(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        guard let last = bytes.last, last & 0x80 == 0 else { return nil }
        var previous: UInt8 = 0
        for b in bytes {
            if b == 0x80, previous & 0x80 == 0 { return nil }
            previous = b
        }
        return bytes
    }

    /// An OCTET STRING as App Store (DER: primitive) and Xcode (BER: one constructed level of
    /// primitive chunks) write it. Deeper nesting is legal BER that no receipt uses: refused.
    static func octetString(_ node: BERNode, chunked: Bool) -> ArraySlice<UInt8>? {
        guard node.identifier == .octetString else { return nil }
        switch node.content {
        case .primitive(let bytes):
            return bytes
        case .constructed(let chunks):
            guard chunked else { return nil }
            var out: [UInt8] = []
            for chunk in chunks {
                guard chunk.identifier == .octetString, case .primitive(let part) = chunk.content else { return nil }
                out.append(contentsOf: part)
            }
            return out[...]
        }
    }

    static func oidText(_ bytes: ArraySlice<UInt8>) -> String {
        guard bytes.count < 128 else { return "(an overlong OID)" }
        return BERTree.dottedOID(bytes) ?? "(an invalid OID)"
    }
}

/// The fuzz harness's oracle for the envelope walks: each part read in place (digestAlgorithms,
/// the encapsulated content, the SignerInfo) must be read the same way by its tree, which must
/// accept those bytes (the input as DER, and as base64 when it decodes). Parts the walks decline
/// are read by the trees, as before; the certificates stay raw bytes either way.
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
