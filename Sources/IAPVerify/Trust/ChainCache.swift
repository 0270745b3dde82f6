// The verified-chain caches: each verifier keeps its own, and behind them one process-wide cache
// keyed by the certificate bytes, what they were verified for AND the anchor set's identity, so a
// new verifier with the same roots reuses a chain an earlier one validated, and a verifier with
// other roots never does.
// Thread rule: any number of readers; a reader holds the read lock only for one dictionary
// lookup, and a writer only for one insertion. Entries are immutable and reference counted, so
// an evicted entry stays valid for a caller that already holds it.

import Glibc

/// What a chain validation proved, kept for later receipts with the same certificates.
final class VerifiedChain: Sendable {
    let leafKey: PublicKey
    /// Every certificate's validity window, checked against each receipt's creation date.
    let windows: [(notBeforeMs: Int64, notAfterMs: Int64)]
    let summaries: [CertificateSummary]
    /// `summaries` as the result JSON writes them, made once per chain.
    let summaryJSON: [UInt8]
    /// The leaf's OCSP request and responder, made once per chain; nil for a one-certificate chain.
    let ocsp: OCSPTarget?

    init?(_ chain: ValidatedChain) {
        guard let leaf = chain.certificates.first, let key = leaf.publicKey(prepared: true) else { return nil }
        var windows: [(Int64, Int64)] = []
        var summaries: [CertificateSummary] = []
        for c in chain.certificates {
            guard let nb = c.notBeforeMs, let na = c.notAfterMs else { return nil }
            windows.append((nb, na))
            summaries.append(CertificateSummary(subject: c.subject, notBeforeMs: nb, notAfterMs: na, sha256: c.sha256Hex))
        }
        self.leafKey = key
        self.windows = windows
        self.summaries = summaries
        summaryJSON = CertificateSummary.json(summaries)
        ocsp = chain.certificates.count >= 2 ? OCSPTarget(leaf: leaf, issuer: chain.certificates[1]) : nil
    }

    /// The first certificate not valid at `ms`, if any.
    func firstInvalid(at ms: Int64) -> CertificateSummary? {
        for (i, w) in windows.enumerated() where ms < w.notBeforeMs || ms > w.notAfterMs {
            return summaries[i]
        }
        return nil
    }
}

/// The exact bytes a cached chain is valid for, with the hash computed once outside the lock.
/// What a cached chain was verified for: the same certificates verified under another policy
/// (Xcode's anchors, or a JWS x5c instead of a receipt) are a different entry.
enum ChainUse: UInt8 {
    case receipt = 0, xcodeReceipt = 1, jws = 2, xcodeJWS = 3
}

struct ChainKey: Hashable {
    let bytes: [UInt8]
    let precomputedHash: Int

    init(_ use: ChainUse, signer: ArraySlice<UInt8>, certificates: ArraySlice<UInt8>) {
        var b: [UInt8] = [use.rawValue]
        b.reserveCapacity(1 + 4 + signer.count + certificates.count)
        let n = UInt32(truncatingIfNeeded: signer.count)
        b.append(contentsOf: [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)])
        b.append(contentsOf: signer)
        b.append(contentsOf: certificates)
        bytes = b
        // Hashing kilobytes of certificates on every call cost more than the lookup: the signer
        // (issuer and serial), the length and the last bytes (a signature) tell chains apart, and
        // equal hashes still compare every byte.
        var h = Hasher()
        b.withUnsafeBytes { all in
            h.combine(all.count)
            h.combine(bytes: UnsafeRawBufferPointer(rebasing: all.prefix(5 + signer.count)))
            h.combine(bytes: UnsafeRawBufferPointer(rebasing: all.suffix(64)))
        }
        precomputedHash = h.finalize()
    }

    /// The same chain under one anchor set, for the process-wide cache: the anchors' identity
    /// (a SHA-256 of their DER) is put in front of the bytes and mixed into the hash.
    init(_ key: ChainKey, anchors: TrustAnchors) {
        bytes = anchors.identity + key.bytes
        var h = Hasher()
        h.combine(key.precomputedHash)
        anchors.identity.withUnsafeBytes { h.combine(bytes: $0) }
        precomputedHash = h.finalize()
    }

    func hash(into hasher: inout Hasher) { hasher.combine(precomputedHash) }
    static func == (a: ChainKey, b: ChainKey) -> Bool {
        // Kilobytes of certificates: compared by memcmp, not element by element.
        guard a.precomputedHash == b.precomputedHash, a.bytes.count == b.bytes.count else { return false }
        return a.bytes.withUnsafeBytes { x in b.bytes.withUnsafeBytes { y in memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0 } }
    }
}

final class ChainCache: @unchecked Sendable {
    private var entries: [ChainKey: VerifiedChain] = [:]
    private var insertionOrder: [ChainKey] = []
    private let lock: UnsafeMutablePointer<pthread_rwlock_t>
    let capacity: Int

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        lock = UnsafeMutablePointer<pthread_rwlock_t>.allocate(capacity: 1)
        pthread_rwlock_init(lock, nil)
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    func lookup(_ key: ChainKey) -> VerifiedChain? {
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return entries[key]
    }

    /// Inserts, evicting the oldest entry when full (a bounded cache cannot be grown by an attacker).
    func insert(_ key: ChainKey, _ value: VerifiedChain) {
        pthread_rwlock_wrlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        if entries[key] != nil { return }
        if entries.count >= capacity, !insertionOrder.isEmpty {
            let oldest = insertionOrder.removeFirst()
            entries[oldest] = nil
        }
        entries[key] = value
        insertionOrder.append(key)
    }

    var count: Int {
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return entries.count
    }

    /// The entries, for tests that check which verified chain a verifier holds.
    var chains: [VerifiedChain] {
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return Array(entries.values)
    }

    /// Distinct (anchor set, certificate block) pairs remembered by the whole process.
    static let sharedCapacity = 256
    /// Shared by every verifier; its keys carry the anchor set (ChainKey(_:anchors:)).
    static let shared = ChainCache(capacity: sharedCapacity)
}

extension ChainCache {
    private static func recheck(_ hit: VerifiedChain, atMs: Int64, instant: ValidationInstant) -> Result<VerifiedChain, ChainRefusal> {
        if let bad = hit.firstInvalid(at: atMs) {
            return .failure(ChainRefusal(stage: .chain, verdict: .untrustedChain,
                                         reason: "\(bad.subject) is not valid at the \(instant.label) (\(RFC3339.format(atMs)))"))
        }
        return .success(hit)
    }
}

/// Why a chain was refused, in the terms every entry point reports.
struct ChainRefusal: Error {
    enum Stage { case decoding, chain, signer }
    let stage: Stage
    let verdict: Verdict
    let reason: String

    init(stage: Stage, verdict: Verdict, reason: String) {
        self.stage = stage
        self.verdict = verdict
        self.reason = reason
    }

    /// ChainValidator's failure: an unverifiable path (check 5) or a path without Apple's markers (check 6).
    init(_ failure: ChainFailure) {
        switch failure {
        case .untrusted(let why): self.init(stage: .chain, verdict: .untrustedChain, reason: why)
        case .notAppleSigner(let why): self.init(stage: .signer, verdict: .notAppleSigner, reason: why)
        }
    }
}

/// The instant a chain is validated at, which names it in reasons: a receipt's creation date,
/// or a token's signed date.
enum ValidationInstant: Sendable {
    case receiptCreation
    case signedDate
    /// A token without a signedDate, checked at the call's now.
    case now

    /// "... is not valid at the <label>"
    var label: String {
        switch self {
        case .receiptCreation: return "receipt creation date"
        case .signedDate: return "signed date"
        case .now: return "time of the call (the token has no signedDate)"
        }
    }
    /// What carries the certificates.
    var container: String { self == .receiptCreation ? "receipt" : "token" }
}

extension ChainCache {
    /// The one lookup-or-validate step receipts and JWS share. A cached chain is re-checked at
    /// `atMs` (each call validates at its own time); a miss decodes the certificates, validates
    /// them with `ChainValidator` and caches the result.
    func verifiedChain(for key: ChainKey, certificates: [ArraySlice<UInt8>], atMs: Int64, instant: ValidationInstant,
                       anchors: TrustAnchors, applePolicy: Bool,
                       signer pickSigner: ([X509Certificate]) -> Int?) -> Result<VerifiedChain, ChainRefusal> {
        // A hit (here, or validated by another verifier with the same anchors) proved everything
        // but the validity windows, which depend on the instant: they are checked for each call.
        if let hit = lookup(key) { return Self.recheck(hit, atMs: atMs, instant: instant) }
        let sharedKey = ChainKey(key, anchors: anchors)
        if let hit = Self.shared.lookup(sharedKey) {
            insert(key, hit)
            return Self.recheck(hit, atMs: atMs, instant: instant)
        }
        var certs: [X509Certificate] = []
        for der in certificates {
            guard let c = X509Certificate(der: der) else {
                return .failure(ChainRefusal(stage: .decoding, verdict: .malformed, reason: "an embedded certificate cannot be decoded"))
            }
            certs.append(c)
        }
        guard let index = pickSigner(certs) else {
            return .failure(ChainRefusal(stage: .chain, verdict: .untrustedChain, reason: "the signer's certificate is not embedded in the \(instant.container)"))
        }
        do {
            let chain = try ChainValidator.validate(signer: certs[index], untrusted: certs, anchors: anchors, atMs: atMs,
                                                    applePolicy: applePolicy, instant: instant)
            guard let verified = VerifiedChain(chain) else {
                return .failure(ChainRefusal(stage: .chain, verdict: .untrustedChain, reason: "the validated chain has an unreadable certificate"))
            }
            insert(key, verified)
            Self.shared.insert(sharedKey, verified)
            return .success(verified)
        } catch {
            return .failure(ChainRefusal(error))
        }
    }
}
