// How every result prints a verified chain. A cached chain keeps its summary written once
// (VerifiedChain.summaryJSON), so a receipt's result copies those bytes instead.

extension CertificateSummary {
    /// A verified chain, leaf first, as every result prints it.
    static func write(_ chain: [CertificateSummary], into w: inout JSONWriter) {
        w.beginArray()
        for c in chain {
            w.beginObject()
            w.field(CertificateMember.subject, c.subject)
            w.field(CertificateMember.notBeforeMs, c.notBeforeMs)
            w.field(CertificateMember.notAfterMs, c.notAfterMs)
            w.field(CertificateMember.sha256, c.sha256)
            w.endObject()
        }
        w.endArray()
    }

    /// The same, as the bytes of one JSON array.
    static func json(_ chain: [CertificateSummary]) -> [UInt8] {
        var w = JSONWriter(capacity: 256 * max(1, chain.count))
        write(chain, into: &w)
        return w.bytes
    }
}
