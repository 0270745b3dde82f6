// Check 7: the SignerInfo signature, verified with the leaf key of the validated chain.
// Without signed attributes the signature covers the content octets; with them, it covers the
// attributes (re-tagged as a SET) and their messageDigest must equal the content digest.

enum SignatureCheck {
    static func verify(envelope: SignedDataEnvelope, key: PublicKey) -> Result<Void, SignatureFailure> {
        let signer = envelope.signer
        guard let digest = signer.digest, let (scheme, _) = signer.scheme else {
            return .failure(.init("the signature algorithm is not supported"))
        }
        guard key.scheme == scheme else {
            return .failure(.init("the signing key type does not match the SignerInfo signature algorithm"))
        }
        guard let attributes = signer.signedAttributes else {
            let ok = envelope.content.withUnsafeBytes { key.verify(signature: signer.signature, message: $0, digest: digest) }
            return ok ? .success(()) : .failure(.init("the signature does not verify over the receipt content"))
        }
        switch messageDigest(in: attributes) {
        case .failure(let f): return .failure(f)
        case .success(let claimed):
            guard claimed.elementsEqual(Digest.hash(digest, envelope.content)) else {
                return .failure(.init("the signed messageDigest attribute does not match the receipt content"))
            }
        }
        // The signature covers the DER of the attributes as a SET OF, not as the [0] field.
        var signedBytes = Array(attributes.encodedBytes)
        guard !signedBytes.isEmpty else { return .failure(.init("the signed attributes are empty")) }
        signedBytes[0] = 0x31
        let ok = signedBytes.withUnsafeBytes { key.verify(signature: signer.signature, message: $0, digest: digest) }
        return ok ? .success(()) : .failure(.init("the signature does not verify over the signed attributes"))
    }

    /// The single messageDigest value; contentType, when present, must say `data`.
    private static func messageDigest(in attributes: BERNode) -> Result<ArraySlice<UInt8>, SignatureFailure> {
        guard case .constructed(let list) = attributes.content else {
            return .failure(.init("the signed attributes are malformed"))
        }
        var digest: ArraySlice<UInt8>?
        for attr in list {
            guard attr.identifier == .sequence, case .constructed(let fields) = attr.content else {
                return .failure(.init("a signed attribute is malformed"))
            }
            var it = fields.makeIterator()
            guard let typeNode = it.next(), let type = SignedDataParser.oidBytes(typeNode),
                  let values = it.next(), values.identifier == .set, case .constructed(let valueList) = values.content,
                  it.next() == nil else {
                return .failure(.init("a signed attribute is malformed"))
            }
            var vs = valueList.makeIterator()
            guard let value = vs.next(), vs.next() == nil else {
                return .failure(.init("a signed attribute must hold exactly one value"))
            }
            if type.elementsEqual(OID.messageDigestAttribute) {
                guard digest == nil, value.identifier == .octetString, case .primitive(let d) = value.content else {
                    return .failure(.init("the messageDigest attribute is malformed or repeated"))
                }
                digest = d
            } else if type.elementsEqual(OID.contentTypeAttribute) {
                guard let ct = SignedDataParser.oidBytes(value), ct.elementsEqual(OID.data) else {
                    return .failure(.init("the signed contentType attribute is not data"))
                }
            }
        }
        guard let digest else { return .failure(.init("the signed attributes have no messageDigest")) }
        return .success(digest)
    }
}

struct SignatureFailure: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
