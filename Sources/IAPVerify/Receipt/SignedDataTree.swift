// The reference decoding of a SignedData: the whole structure (DER or BER, Xcode's receipts) as
// a BERTree, with the strict profile's rules on each part, and the part readers the in-place walk
// falls back to.

extension SignedDataParser {
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
    static func requireSupportedAlgorithms(_ signer: SignerInfo, listed: [ArraySlice<UInt8>]) throws(EnvelopeProblem) {
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
