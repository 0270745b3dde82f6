// The receipt payload: a SET of (type, version, value) attributes (see docs/receipts.md).
// Decoding is strict about shape (a malformed payload is never half-read) and keeps what it
// does not know under `unknownAttributes`.

/// An attribute the decoder does not interpret, kept verbatim.
public struct UnknownAttribute: Sendable, Equatable {
    public var type: Int64
    public var version: Int64
    /// A slice of the payload bytes (no copy per attribute).
    public var value: ArraySlice<UInt8>
}

/// One in-app purchase record (attribute 17), as views of the signed bytes: ids and product ids
/// stay byte ranges of the payload from decoding to the result JSON, and a `String` is made only
/// when a Swift caller asks for one. Which attribute fills which stored property is the record's
/// table, `InAppAttributes` (ReceiptRecordTable.swift).
public struct InAppPurchase: Sendable, Equatable {
    public var quantity: Int64?
    public var productID: String? { text(productIDText) }
    public var transactionID: String? { text(transactionIDText) }
    public var originalTransactionID: String? { text(originalTransactionIDText) }
    public var purchaseDateMs: Int64?
    public var originalPurchaseDateMs: Int64?
    public var expiresDateMs: Int64?
    public var cancellationDateMs: Int64?
    /// Apple signs it as an INTEGER; given as its decimal text, like every other source's.
    public var webOrderLineItemID: String? { webOrderLineItem.map { String($0) } }
    public var isTrialPeriod: Bool?
    public var isInIntroOfferPeriod: Bool?
    public var promotionalOfferID: String? { text(promotionalOfferIDText) }
    /// Undocumented attribute 1707.
    public var productType: Int64?

    var productIDText = TextView()
    var transactionIDText = TextView()
    var originalTransactionIDText = TextView()
    var promotionalOfferIDText = TextView()
    var webOrderLineItem: Int64?
    /// The record as signed: the views above point into it, and the attributes the decoder does
    /// not read are taken from it when asked for.
    var record: ArraySlice<UInt8> = []
    /// The record is plain DER (every receipt Apple signs), so a walk in place reads it whole.
    var isPlainDER = false

    /// A view's text (valid UTF-8: the decoder checked it).
    func text(_ view: TextView) -> String? {
        withText(view) { String(decoding: $0, as: UTF8.self) }
    }

    /// A view's bytes, without a copy; nil when the record has no such attribute.
    func withText<R>(_ view: TextView, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R? {
        guard view.isPresent, Int(view.start) + Int(view.count) <= record.count else { return nil }
        return record.withUnsafeBufferPointer { all in
            body(UnsafeBufferPointer(rebasing: all[Int(view.start)..<(Int(view.start) + Int(view.count))]))
        }
    }

    /// The attributes the decoder does not read into fields, in payload order.
    public var unknownAttributes: [UnknownAttribute] {
        var list: [UnknownAttribute] = []
        forEachUnknownAttribute { list.append($0) }
        return list
    }

    /// The same, one at a time and without building a list.
    func forEachUnknownAttribute(_ body: (UnknownAttribute) -> Void) {
        let record = record
        // The record was decoded once already, so neither reading can fail here. Plain DER is
        // walked in place; BER goes through the tree, as it was decoded.
        if isPlainDER {
            let lookup = InAppAttributes.lookup
            _ = record.withUnsafeBufferPointer { raw in
                AttributeSet.walkRaw(raw) { type, version, start, end in
                    if lookup.row(type) == nil {
                        let base = record.startIndex
                        body(UnknownAttribute(type: type, version: version, value: record[(base + start)..<(base + end)]))
                    }
                    return true
                }
            }
            return
        }
        try? AttributeSet.viaTree(record, what: "an in-app record") { (type, version, value) throws(PayloadProblem) in
            if !ReceiptPayloadDecoder.readsInApp(type) { body(UnknownAttribute(type: type, version: version, value: value)) }
        }
    }
}

/// The decoded app receipt payload.
public struct ReceiptPayload: Sendable, Equatable {
    public var receiptType: String?
    public var appItemID: String?
    public var bundleID: String?
    /// The UTF8String content bytes of attribute 2, compared exactly with the config.
    public var bundleIDBytes: [UInt8]?
    /// The whole DER value of attribute 2 (tag, length, content): it feeds the device hash.
    public var bundleIDValue: [UInt8]?
    public var appVersion: String?
    public var opaqueValue: [UInt8]?
    public var sha1Hash: [UInt8]?
    /// Undocumented attribute 8; never the creation date.
    public var attribute8DateMs: Int64?
    public var creationDateMs: Int64?
    public var downloadID: String?
    public var versionExternalIdentifier: String?
    public var originalPurchaseDateMs: Int64?
    public var originalAppVersion: String?
    public var expirationDateMs: Int64?
    public var inApp: [InAppPurchase] = []
    public var unknownAttributes: [UnknownAttribute] = []

    public init() {}
}

/// Limits that keep hostile payloads bounded.
package enum PayloadLimits {
    /// At most this many in-app records; real receipts stay far below.
    public static let maxInAppCount = 100_000
}

enum PayloadProblem: Error {
    case malformed(String)
}
