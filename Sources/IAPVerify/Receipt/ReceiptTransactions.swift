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
        for i in purchases.indices { if let t = Transaction(forEngine: purchases[i], reusing: &recent) { out.append(t) } }
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
            for s in texts where Self.same(s, bytes) { return s }
            let s = String(decoding: bytes, as: UTF8.self)
            if texts.count < 8 { texts.append(s) } else { texts[next] = s; next = (next + 1) % 8 }
            return s
        }
    }

    private static func same(_ s: String, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var s = s
        return s.withUTF8 { u in
            u.count == bytes.count && (u.count == 0 || memcmp(u.baseAddress!, bytes.baseAddress!, u.count) == 0)
        }
    }
}
