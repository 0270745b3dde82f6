// A receipt's purchases as the engine's transactions: the receipt knows its own fields, the
// engine knows only `Transaction`. (The result's `in_app` is written from the purchases' views by
// ReceiptRecordTable.swift; these are made for the engine alone.)

#if canImport(Glibc)
import Glibc
#endif

extension Transaction {
    /// A decoded receipt purchase as a transaction; nil when it lacks the ids the engine needs.
    init?(_ p: InAppPurchase) {
        var recent = RecentTexts()
        self.init(forEngine: p, reusing: &recent)
        webOrderLineItemID = p.webOrderLineItemID
        promotionalOfferID = p.promotionalOfferID
    }

    /// The same without the web order line item and offer ids, which the engine never reads (they
    /// cost a String each per purchase), taking product and chain ids from `recent` when an
    /// earlier purchase had them: a receipt repeats a few products and chains across all its
    /// purchases.
    private init?(forEngine p: InAppPurchase, reusing recent: inout RecentTexts) {
        guard let transactionID = p.transactionID, let productID = recent.text(p, p.productIDText) else { return nil }
        self.init(transactionID: transactionID, productID: productID)
        fill(forEngine: p, reusing: &recent)
    }

    /// Everything but the ids `init(transactionID:productID:)` takes.
    private mutating func fill(forEngine p: InAppPurchase, reusing recent: inout RecentTexts) {
        originalTransactionID = recent.text(p, p.originalTransactionIDText)
        quantity = p.quantity ?? 1
        purchaseDateMs = p.purchaseDateMs
        originalPurchaseDateMs = p.originalPurchaseDateMs
        expiresDateMs = p.expiresDateMs
        cancellationDateMs = p.cancellationDateMs
        isTrialPeriod = p.isTrialPeriod ?? false
        isInIntroOfferPeriod = p.isInIntroOfferPeriod ?? false
    }

    /// The receipt's purchases that carry the ids the engine needs, for the engine, in one allocation.
    static func all(_ purchases: [InAppPurchase]) -> [Transaction] {
        var out: [Transaction] = []
        out.reserveCapacity(purchases.count)
        var recent = RecentTexts()
        for i in purchases.indices {
            // Made in the array: a purchase made as an optional and unwrapped was copied (every
            // text field retained) and the original destroyed.
            guard let transactionID = purchases[i].transactionID,
                  let productID = recent.text(purchases[i], purchases[i].productIDText) else { continue }
            out.append(Transaction(transactionID: transactionID, productID: productID))
            out[out.count - 1].fill(forEngine: purchases[i], reusing: &recent)
        }
        return out
    }
}

/// The last few distinct texts made from views, so that a repeated product or chain id is one
/// String shared (a retain) instead of a new one per purchase.
struct RecentTexts {
    private var texts: [String] = []
    private var next = 0

    mutating func text(_ p: InAppPurchase, _ view: TextView) -> String? {
        p.withText(view) { bytes -> String in
            // By index, read in place: iterating the Strings copied each one (a retain and a
            // release per candidate), and most lookups compare several.
            for i in texts.indices where Self.same(texts[i], bytes) { return texts[i] }
            let s = String(decoding: bytes, as: UTF8.self)
            if texts.count < 8 { texts.append(s) } else { texts[next] = s; next = (next + 1) % 8 }
            return s
        }
    }

    private static func same(_ s: String, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard s.utf8.count == bytes.count else { return false }
        if bytes.count == 0 { return true }
        if let equal = s.utf8.withContiguousStorageIfAvailable({ memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) == 0 }) {
            return equal
        }
        return s.utf8.elementsEqual(bytes)
    }
}
