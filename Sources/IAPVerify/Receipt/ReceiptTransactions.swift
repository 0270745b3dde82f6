// A receipt's purchases as the engine's transactions: the receipt knows its own fields, the
// engine knows only `Transaction`. (The result's `in_app` is written from the purchases' views by
// ReceiptRecordTable.swift; these are made for the engine alone.)

#if canImport(Glibc)
import Glibc
#endif

extension Transaction {
    /// A decoded receipt purchase as a transaction; nil when it lacks the ids the engine needs.
    init?(_ p: InAppPurchase) {
        guard let t = Transaction.all([p]).first else { return nil }
        self = t
        webOrderLineItemID = p.webOrderLineItemID
        promotionalOfferID = p.promotionalOfferID
    }

    /// Everything but the ids `init(transactionID:productID:)` takes, and the web order line item
    /// and offer ids, which the engine never reads. `record` holds the bytes the views point into.
    private mutating func fill(forEngine p: UnsafePointer<InAppPurchase>, record: UnsafeBufferPointer<UInt8>) {
        originalID = p.pointee.originalTransactionIDText.bytes(in: record).map { IDText(utf8: $0) }
        quantity = p.pointee.quantity ?? 1
        purchaseDateMs = p.pointee.purchaseDateMs
        originalPurchaseDateMs = p.pointee.originalPurchaseDateMs
        expiresDateMs = p.pointee.expiresDateMs
        cancellationDateMs = p.pointee.cancellationDateMs
        isTrialPeriod = p.pointee.isTrialPeriod ?? false
        isInIntroOfferPeriod = p.pointee.isInIntroOfferPeriod ?? false
    }

    /// The receipt's purchases that carry the ids the engine needs, for the engine, in one allocation.
    static func all(_ purchases: [InAppPurchase]) -> [Transaction] {
        var out: [Transaction] = []
        out.reserveCapacity(purchases.count)
        var recent = RecentTexts()
        purchases.withUnsafeBufferPointer { list in
            for i in list.indices {
                // The purchase is read through a pointer and its record's bytes taken once, so no
                // view retains the payload's storage; the transaction is made in the array, never
                // through an optional, so its text fields are retained once.
                let p = list.baseAddress! + i
                p.pointee.record.withUnsafeBufferPointer { record in
                    guard let id = p.pointee.transactionIDText.bytes(in: record),
                          let productID = recent.text(p.pointee.productIDText.bytes(in: record)) else { return }
                    out.append(Transaction(id: IDText(utf8: id), productID: productID))
                    out[out.count - 1].fill(forEngine: p, record: record)
                }
            }
        }
        return out
    }
}
