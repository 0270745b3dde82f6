// The description of the certificates and the revocation facts a result shows (JSON/Surface.swift).

package enum CertificateMember: SurfaceObject {
    case subject, notBeforeMs, notAfterMs, sha256

    package static let objectName: StaticString = "certificate"
    package static let meaning: StaticString = "one certificate of a verified chain"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .subject: MemberSpec("subject", .string, "the subject name as comma-separated attributes, in the certificate's order (CN=Apple Root CA,OU=Apple Certification Authority,O=Apple Inc.,C=US)")
        case .notBeforeMs: MemberSpec("not_before_ms", .ms, "start of the validity period")
        case .notAfterMs: MemberSpec("not_after_ms", .ms, "end of the validity period")
        case .sha256: MemberSpec("sha256", .string, "SHA-256 of the certificate's DER, 64 upper-case hex digits: compare it with Apple's published fingerprints")
        }
    }
}

package enum RevocationMember: SurfaceObject {
    case status, reason, thisUpdateMs, nextUpdateMs, revokedAtMs, responderURL, request

    package static let objectName: StaticString = "revocation"
    package static let meaning: StaticString = "the OCSP facts of the signing certificate (docs/revocation.md); null until a chain verified"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .status: MemberSpec("status", .string, values: .words("unchecked good revoked unknown"),
            "unchecked: no ocsp_responses were passed; good or revoked: what the first usable answer says; unknown: answers were passed but none is usable for this leaf at now_ms")
        case .reason: MemberSpec("reason", .string, "one sentence: the answer's times, or why each answer was not usable")
        case .thisUpdateMs: MemberSpec("this_update_ms", .ms, presence: .whenPresent, "good only: the answer's thisUpdate")
        case .nextUpdateMs: MemberSpec("next_update_ms", .ms, nullable: true, presence: .whenPresent,
            "good only: the answer's nextUpdate (null when the responder gave none); keep the answer until then")
        case .revokedAtMs: MemberSpec("revoked_at_ms", .ms, nullable: true, presence: .whenPresent, "revoked only: when the certificate was revoked")
        case .responderURL: MemberSpec("responder_url", .string, nullable: true, "the OCSP responder the leaf names; null when it names none")
        case .request: MemberSpec("request", .string, nullable: true,
            "base64 of the DER OCSPRequest for the leaf: POST the decoded bytes to responder_url as application/ocsp-request; null only for a one-certificate chain")
        }
    }
}
