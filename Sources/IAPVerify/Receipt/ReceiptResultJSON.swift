// The result JSON of a receipt report.

/// Which document a receipt report is written as.
package enum ReceiptDocument: Sendable {
    /// A verification's result.
    case verification
    /// `inspect`'s document of a receipt it could not decode whole: the report's own verdict.
    case inspection
    /// `inspect`'s document of a decoded receipt: verdict `unverified`, nothing in it trusted.
    case unverifiedInspection
}

extension ReceiptReport {
    /// The verdict of `inspect`'s documents: decoded, nothing checked (not a `Verdict`: it is
    /// never a verification's answer).
    package static let unverifiedVerdict = "unverified"

    /// The full result document.
    public func resultJSON() -> [UInt8] { resultJSONBlock(.verification).bytes }

    package func resultJSON(_ document: ReceiptDocument) -> [UInt8] { resultJSONBlock(document).bytes }

    /// The same document, in one block the C boundary takes without a copy. `inspect`'s
    /// documents verify nothing and carry no revocation.
    package func resultJSONBlock(_ document: ReceiptDocument) -> JSONText {
        let inspected = document != .verification
        // Sized so the buffer is not regrown: ~720 bytes of members per purchase, plus its record's
        // size again for the base64 of the attributes it keeps unread.
        let records = payloadIsComplete ? payload?.inApp ?? [] : []
        var w = JSONWriter(capacity: records.reduce(6144) { $0 + 720 + $1.record.count + $1.record.count / 8 })
        w.beginObject()
        if document == .unverifiedInspection {
            w.field(ResultHeadMember.verdict, Self.unverifiedVerdict)
            w.field(ResultHeadMember.reason, "decoded without verification: nothing in it is trusted")
        } else {
            w.field(ResultHeadMember.verdict, verdict.rawValue)
            w.field(ResultHeadMember.reason, judgement.reason)
        }
        w.key(ReceiptResultMember.checks)
        w.beginObject()
        for check in ReceiptCheck.allCases { w.key(text: check.rawValue); w.string(state(check).rawValue) }
        w.endObject()
        w.key(ReceiptResultMember.receipt)
        if let payload { writeReceipt(payload, into: &w) } else { w.null() }
        // Also at the top: a receipt refused for revocation has no `signing`, and the host
        // needs the request to fetch the answer. (`inspect` verifies nothing: none there.)
        if !inspected { w.revocation(ReceiptResultMember.revocation, revocation) }
        w.grants(entitlements, valid: isValid)
        w.endObject()
        return w.finish()
    }

    private func writeReceipt(_ p: ReceiptPayload, into w: inout JSONWriter) {
        w.beginObject()
        w.field(ReceiptMember.trusted, trusted)
        w.field(ReceiptMember.environment, PurchaseEnvironment(appleName: p.receiptType)?.rawValue)
        w.field(ReceiptMember.receiptType, p.receiptType)
        guard payloadIsComplete else {
            // Decided before the signature was checked: only what picked the validation time.
            w.field(ReceiptMember.creationDateMs, p.creationDateMs)
            w.endObject()
            return
        }
        w.field(ReceiptMember.bundleID, p.bundleID)
        w.field(ReceiptMember.appVersion, p.appVersion)
        w.field(ReceiptMember.originalAppVersion, p.originalAppVersion)
        w.field(ReceiptMember.creationDateMs, p.creationDateMs)
        w.field(ReceiptMember.expirationDateMs, p.expirationDateMs)
        w.field(ReceiptMember.originalPurchaseDateMs, p.originalPurchaseDateMs)
        w.field(ReceiptMember.attribute8DateMs, p.attribute8DateMs)
        w.field(ReceiptMember.appItemID, p.appItemID)
        w.field(ReceiptMember.downloadID, p.downloadID)
        w.field(ReceiptMember.versionExternalIdentifier, p.versionExternalIdentifier)
        w.key(ReceiptMember.opaqueValueBase64)
        if let v = p.opaqueValue { w.base64(v) } else { w.null() }
        w.key(ReceiptMember.sha1HashBase64)
        if let v = p.sha1Hash { w.base64(v) } else { w.null() }
        w.key(ReceiptMember.signing)
        w.beginObject()
        w.field(SigningMember.digest, digest?.rawValue)
        w.field(SigningMember.signature, scheme?.rawValue)
        w.key(SigningMember.chain)
        // A chain from the cache comes with its summary already written.
        if let chainJSON { w.rawJSON(chainJSON) } else { CertificateSummary.write(chain, into: &w) }
        w.revocation(SigningMember.revocation, revocation)
        w.endObject()
        w.key(ReceiptMember.inApp)
        w.beginArray()
        let plan = InAppAttributes.plan
        p.inApp.withUnsafeBufferPointer { purchases in
            // Read in place (a copy of a purchase retains its record once more).
            for i in purchases.indices {
                // The normalised transaction's members (as a /verifyReceipt answer's `in_app`), then
                // what only a receipt record carries, by the record's table (ReceiptRecordTable.swift);
                // text copied from the record as it was signed.
                w.beginObject()
                let p = purchases.baseAddress! + i   // through the pointer: a subscript would copy the purchase
                p.pointee.record.withUnsafeBufferPointer { text in
                    InAppAttributes.writeMembers(of: p, text: text, plan: plan, into: &w)
                    if p.pointee.isPlainDER {
                        Self.writeUnknown(inPlainRecord: text, into: &w)
                    } else {
                        Self.writeUnknown(of: p.pointee, into: &w)
                    }
                }
                w.endObject()
            }
        }
        w.endArray()
        w.key(ReceiptMember.unknownAttributes)
        Self.writeUnknown(p.unknownAttributes, into: &w)
        w.endObject()
    }

    /// A plain DER record's unknown attributes, walked in place (written only when there are any).
    private static func writeUnknown(inPlainRecord record: UnsafeBufferPointer<UInt8>, into w: inout JSONWriter) {
        var listed = false
        let lookup = InAppAttributes.lookup
        _ = AttributeSet.walkRaw(record) { type, version, start, end in
            guard lookup.row(type) == nil else { return true }
            if !listed { w.key(InAppAttributes.unknownMember); w.beginArray(); listed = true }
            w.attribute(type: type, version: version, value: UnsafeBufferPointer(rebasing: record[start..<end]))
            return true
        }
        if listed { w.endArray() }
    }

    /// The same for a record read through the tree (BER).
    private static func writeUnknown(of t: InAppPurchase, into w: inout JSONWriter) {
        var listed = false
        t.forEachUnknownAttribute { a in
            if !listed { w.key(InAppAttributes.unknownMember); w.beginArray(); listed = true }
            writeUnknown(a, into: &w)
        }
        if listed { w.endArray() }
    }

    private static func writeUnknown(_ list: [UnknownAttribute], into w: inout JSONWriter) {
        w.beginArray()
        for a in list { writeUnknown(a, into: &w) }
        w.endArray()
    }

    private static func writeUnknown(_ a: UnknownAttribute, into w: inout JSONWriter) {
        a.value.withUnsafeBufferPointer { w.attribute(type: a.type, version: a.version, value: $0) }
    }
}

extension ReceiptReport: VerificationResult {}

extension ReceiptReport: RenderedResult {
    package func resultJSONBlock() -> JSONText { resultJSONBlock(.verification) }
}
