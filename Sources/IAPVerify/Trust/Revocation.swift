// Revocation without I/O: for a verified chain's leaf, the OCSP request and the responder URL the
// host can POST it to, and the check of the response the host passes back in a later call
// (`ocsp_responses`): its signature (the issuer, or a responder the issuer delegated to, chaining to
// the configured roots), the certificate id, thisUpdate/nextUpdate against the caller's now, and
// the status. Nothing here opens a socket or reads the system clock.

import COpenSSL

/// How a config treats revocation.
public enum RevocationPolicy: String, Sendable {
    /// Responses the host passes are checked (a revoked leaf is refused); none are needed.
    case off
    /// A missing, stale or unusable response is `revocation_unknown`.
    case required
}

/// The OCSP identity of one verified leaf, made once per cached chain.
final class OCSPTarget: @unchecked Sendable {
    // @unchecked: the certificates are immutable, and OCSP_CERTID values are made per check.
    let leaf: X509Certificate
    let issuer: X509Certificate
    /// DER of an OCSPRequest for the leaf (SHA-1 certificate id, no nonce: Apple's responders
    /// answer cacheable requests, and the library keeps no state to match a nonce).
    let requestDER: [UInt8]
    /// The same, base64, as every result carries it (encoded once per chain, not per call).
    let requestBase64: String
    let responderURL: String?

    init?(leaf: X509Certificate, issuer: X509Certificate) {
        guard let id = OCSP_cert_to_id(nil, leaf.raw, issuer.raw) else { ERR_clear_error(); return nil }
        guard let request = OCSP_REQUEST_new() else { OCSP_CERTID_free(id); return nil }
        defer { OCSP_REQUEST_free(request) }
        guard OCSP_request_add0_id(request, id) != nil else { OCSP_CERTID_free(id); return nil }
        var out: UnsafeMutablePointer<UInt8>?
        let n = i2d_OCSP_REQUEST(request, &out)
        guard n > 0, let out else { ERR_clear_error(); return nil }
        requestDER = Array(UnsafeBufferPointer(start: out, count: Int(n)))
        requestBase64 = Base64.encode(requestDER)
        cossl_openssl_free(out)
        if let url = cossl_ocsp_url(leaf.raw) {
            responderURL = String(cString: url)
            free(url)
        } else {
            responderURL = nil
        }
        self.leaf = leaf
        self.issuer = issuer
        ERR_clear_error()
    }
}

/// What the responses say about a leaf.
public enum RevocationStatus: Sendable, Equatable {
    /// No response was passed.
    case unchecked
    case good(thisUpdateMs: Int64, nextUpdateMs: Int64?)
    case revoked(atMs: Int64?)
    /// Responses were passed, but none is usable for this leaf at now: why.
    case unknown(String)

    public var name: String {
        switch self {
        case .unchecked: return "unchecked"
        case .good: return "good"
        case .revoked: return "revoked"
        case .unknown: return "unknown"
        }
    }
}

/// The revocation facts a result carries.
public struct RevocationReport: Sendable {
    public var status: RevocationStatus = .unchecked
    public var reason: String = "no OCSP response was passed"
    /// Base64 of the DER OCSPRequest to POST (Content-Type: application/ocsp-request).
    public var request: String?
    public var responderURL: String?
}

enum OCSPCheck {
    /// A response older than this past its thisUpdate, with no nextUpdate, is stale.
    static let maximumAgeWithoutNextUpdateMs: Int64 = 7 * 86_400_000
    /// Clock skew allowed on thisUpdate.
    static let skewMs: Int64 = 300_000

    /// Reads the responses the host passed and returns the first usable answer for `target`.
    static func evaluate(_ responses: [[UInt8]], target: OCSPTarget, anchors: TrustAnchors, nowMs: Int64) -> (RevocationStatus, String) {
        guard !responses.isEmpty else { return (.unchecked, "no OCSP response was passed") }
        var why: [String] = []
        for (i, der) in responses.enumerated() {
            switch check(der, target: target, anchors: anchors, nowMs: nowMs) {
            case .success(let status):
                switch status {
                case .good(let thisUpdate, let nextUpdate):
                    return (status, "the responder says good at \(RFC3339.format(thisUpdate))"
                        + (nextUpdate.map { ", until \(RFC3339.format($0))" } ?? ""))
                case .revoked(let at):
                    return (status, "its OCSP responder says so" + (at.map { ", since \(RFC3339.format($0))" } ?? ""))
                default:
                    return (status, "")
                }
            case .failure(let problem):
                why.append("ocsp_responses[\(i)]: \(problem)")
            }
        }
        return (.unknown(why.joined(separator: "; ")), why.joined(separator: "; "))
    }

    private struct Problem: Error, CustomStringConvertible {
        let description: String
        init(_ d: String) { description = d }
    }

    private static func check(_ der: [UInt8], target: OCSPTarget, anchors: TrustAnchors, nowMs: Int64) -> Result<RevocationStatus, Problem> {
        defer { ERR_clear_error() }
        guard !der.isEmpty, der.count < 1 << 20 else { return .failure(Problem("empty or larger than 1 MiB")) }
        let response: OpaquePointer? = der.withUnsafeBufferPointer { buf in
            var p: UnsafePointer<UInt8>? = buf.baseAddress
            return d2i_OCSP_RESPONSE(nil, &p, buf.count)
        }
        guard let response else { return .failure(Problem("not a DER OCSP response")) }
        defer { OCSP_RESPONSE_free(response) }
        let status = OCSP_response_status(response)
        guard status == OCSP_RESPONSE_STATUS_SUCCESSFUL else {
            return .failure(Problem("the responder answered status \(status) (\(String(cString: OCSP_response_status_str(Int(status))))), not successful"))
        }
        guard let basic = OCSP_response_get1_basic(response) else { return .failure(Problem("no basic OCSP response inside")) }
        defer { OCSP_BASICRESP_free(basic) }
        // The signature: the issuer itself, or a responder certificate the issuer delegated to
        // (carried in the response), chaining to the configured roots at now.
        guard let store = anchors.makeStore(validatingAt: nowMs / 1000) else { return .failure(Problem("out of memory")) }
        defer { X509_STORE_free(store) }
        guard let untrusted = cossl_sk_x509_new() else { return .failure(Problem("out of memory")) }
        defer { cossl_sk_x509_free(untrusted) }
        _ = cossl_sk_x509_push(untrusted, target.issuer.raw)
        guard OCSP_basic_verify(basic, untrusted, store, 0) == 1 else {
            return .failure(Problem("its signature does not verify to the issuer or a responder the issuer authorised"))
        }
        // The certificate id: this leaf, named by this issuer (SHA-1, as Apple's responders use).
        guard let id = OCSP_cert_to_id(nil, target.leaf.raw, target.issuer.raw) else { return .failure(Problem("cannot name the leaf")) }
        defer { OCSP_CERTID_free(id) }
        var certStatus: Int32 = -1, reason: Int32 = -1
        var revokedAt: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>?
        var thisUpdate: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>?
        var nextUpdate: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>?
        guard OCSP_resp_find_status(basic, id, &certStatus, &reason, &revokedAt, &thisUpdate, &nextUpdate) == 1 else {
            return .failure(Problem("it answers for another certificate"))
        }
        guard let thisMs = X509Certificate.milliseconds(thisUpdate) else { return .failure(Problem("it has no readable thisUpdate")) }
        let nextMs = X509Certificate.milliseconds(nextUpdate)
        if thisMs > nowMs + skewMs { return .failure(Problem("its thisUpdate \(RFC3339.format(thisMs)) is after now")) }
        if let nextMs, nextMs < nowMs { return .failure(Problem("it is stale: its nextUpdate \(RFC3339.format(nextMs)) has passed")) }
        if nextMs == nil, nowMs - thisMs > maximumAgeWithoutNextUpdateMs {
            return .failure(Problem("it is stale: issued \(RFC3339.format(thisMs)) with no nextUpdate, more than 7 days ago"))
        }
        switch certStatus {
        case V_OCSP_CERTSTATUS_GOOD: return .success(.good(thisUpdateMs: thisMs, nextUpdateMs: nextMs))
        case V_OCSP_CERTSTATUS_REVOKED: return .success(.revoked(atMs: X509Certificate.milliseconds(revokedAt)))
        default: return .failure(Problem("the responder does not know the certificate (status unknown)"))
        }
    }
}

extension JSONWriter {
    /// The revocation object as the member `key` of the object being written.
    mutating func revocation<M: SurfaceObject>(_ key: M, _ r: RevocationReport?) {
        self.key(key)
        guard let r else { null(); return }
        beginObject()
        field(RevocationMember.status, r.status.name)
        field(RevocationMember.reason, r.reason)
        switch r.status {
        case .good(let thisUpdate, let nextUpdate):
            field(RevocationMember.thisUpdateMs, thisUpdate)
            field(RevocationMember.nextUpdateMs, nextUpdate)
        case .revoked(let at):
            field(RevocationMember.revokedAtMs, at)
        default:
            break
        }
        field(RevocationMember.responderURL, r.responderURL)
        field(RevocationMember.request, r.request)
        endObject()
    }
}
