// A receipt's purchases as the engine's transactions: the receipt knows its own fields, the
// engine knows only `Transaction`. Each attribute of the record's table (ReceiptRecordTable.swift)
// goes into the Transaction field of the same name (RecordFieldTables.swift); the result's `in_app`
// is written from the purchases' views, and these are made for the engine and Swift callers.

#if canImport(Glibc)
import Glibc
#endif

extension Transaction {
    /// A decoded receipt purchase as a transaction; nil when it lacks the ids the engine needs.
    init?(_ p: InAppPurchase) {
        var recent = RecentTexts()
        var made: Transaction?
        let plan = InAppTransactionFill.plan
        withUnsafePointer(to: p) { p in
            p.pointee.record.withUnsafeBufferPointer { record in
                guard let (id, productID) = plan.identity(p, record, &recent) else { return }
                var t = Transaction(id: id, productID: productID)
                plan.fill(&t, from: p, record: record, engineOnly: false)
                made = t
            }
        }
        guard let made else { return nil }
        self = made
    }

    /// The receipt's purchases that carry the ids the engine needs, for the engine, in one
    /// allocation. The web order line item and offer ids, which the engine never reads, are left out.
    static func all(_ purchases: [InAppPurchase]) -> [Transaction] {
        var out: [Transaction] = []
        out.reserveCapacity(purchases.count)
        var recent = RecentTexts()
        let plan = InAppTransactionFill.plan
        purchases.withUnsafeBufferPointer { list in
            for i in list.indices {
                // The purchase is read through a pointer and its record's bytes taken once, so no
                // view retains the payload's storage; the transaction is made in the array, never
                // through an optional, so its text fields are retained once.
                let p = list.baseAddress! + i
                p.pointee.record.withUnsafeBufferPointer { record in
                    guard let (id, productID) = plan.identity(p, record, &recent) else { return }
                    out.append(Transaction(id: id, productID: productID))
                    plan.fill(&out[out.count - 1], from: p, record: record, engineOnly: true)
                }
            }
        }
        return out
    }
}

/// Where each attribute of the record's table goes in a Transaction: the Transaction table's
/// field of the same name (its offset in the Transaction, and how it is stored). A caller that
/// fills many transactions takes the plan once (`let plan = InAppTransactionFill.plan`).
struct InAppTransactionFill: Sendable {
    /// An attribute's row (its kind, where InAppPurchase stores it, whether the engine reads it),
    /// and where the Transaction stores the field of the same name, as what.
    typealias Target = (attribute: InAppAttribute, offset: Int, storage: FieldStorage)

    /// Where InAppPurchase stores the record's identity, which `Transaction(id:productID:)` takes:
    /// the attributes of the Transaction table's required rows (1: the transaction id, 2: the product id).
    let identity: (id: Int, productID: Int)
    /// Every other attribute the Transaction table has a field for.
    let targets: [Target]

    static let plan = InAppTransactionFill()

    private init() {
        let rows = InAppAttributes.rows
        let specs = TransactionRecord.fields.allSpecs
        func row(_ required: Int) -> Int {
            guard let spec = specs.first(where: { $0.required == required }),
                  let row = InAppAttributes.row(named: spec.snake), rows[row].value == .text else {
                preconditionFailure("the in-app record table has no text attribute for required field \(required)")
            }
            return row
        }
        identity = (rows[row(1)].offset, rows[row(2)].offset)
        let base = MemoryLayout<TransactionRecord>.offset(of: \TransactionRecord.t)!
        let size = MemoryLayout<Transaction>.size
        var targets: [Target] = []
        for spec in specs where spec.required == 0 {
            guard let row = InAppAttributes.row(named: spec.snake) else { continue }
            let a = rows[row]
            precondition(spec.offset >= base && spec.offset < base + size, "\(spec.snake): not a field of the Transaction itself")
            precondition(Self.converts(a.value, spec.storage), "\(spec.snake): attribute \(a.type) cannot fill a \(spec.storage) field")
            targets.append((attribute: a, offset: spec.offset - base, storage: spec.storage))
        }
        self.targets = targets
    }

    /// The pairs `fill` knows.
    private static func converts(_ value: InAppValue, _ storage: FieldStorage) -> Bool {
        switch (value, storage) {
        case (.text, .optionalID), (.text, .optionalString), (.integer, .int), (.integer, .optionalInt),
             (.date, .optionalInt), (.flag, .bool), (.flag, .optionalBool), (.decimal, .optionalID):
            return true
        default:
            return false
        }
    }

    /// The transaction id and product id of a record that has both (the product id shared with
    /// the other records through `recent`).
    @inline(__always)
    func identity(_ p: UnsafePointer<InAppPurchase>, _ record: UnsafeBufferPointer<UInt8>,
                  _ recent: inout RecentTexts) -> (IDText, String)? {
        let base = UnsafeRawPointer(p)
        guard let id = (base + identity.id).assumingMemoryBound(to: TextView.self).pointee.bytes(in: record),
              let productID = recent.text((base + identity.productID).assumingMemoryBound(to: TextView.self).pointee.bytes(in: record))
        else { return nil }
        return (IDText(utf8: id), productID)
    }

    /// Sets every field but the identity from the record (`engineOnly`: the fields the engine
    /// reads); a field the record lacks keeps the transaction's default.
    @inline(__always)
    func fill(_ t: inout Transaction, from p: UnsafePointer<InAppPurchase>, record: UnsafeBufferPointer<UInt8>,
              engineOnly: Bool) {
        let source = UnsafeRawPointer(p)
        withUnsafeMutableBytes(of: &t) { raw in
            let target = raw.baseAddress!
            for f in targets where f.attribute.engine || !engineOnly {
                let from = source + f.attribute.offset, to = target + f.offset
                switch (f.attribute.value, f.storage) {
                case (.text, .optionalID):
                    let bytes = from.assumingMemoryBound(to: TextView.self).pointee.bytes(in: record)
                    to.assumingMemoryBound(to: IDText?.self).pointee = bytes.map { IDText(utf8: $0) }
                case (.text, .optionalString):
                    let bytes = from.assumingMemoryBound(to: TextView.self).pointee.bytes(in: record)
                    to.assumingMemoryBound(to: String?.self).pointee = bytes.map { String(decoding: $0, as: UTF8.self) }
                case (.integer, .int):
                    if let n = from.assumingMemoryBound(to: Int64?.self).pointee { to.assumingMemoryBound(to: Int64.self).pointee = n }
                case (.integer, .optionalInt), (.date, .optionalInt):
                    to.assumingMemoryBound(to: Int64?.self).pointee = from.assumingMemoryBound(to: Int64?.self).pointee
                case (.flag, .bool):
                    if let b = from.assumingMemoryBound(to: Bool?.self).pointee { to.assumingMemoryBound(to: Bool.self).pointee = b }
                case (.flag, .optionalBool):
                    to.assumingMemoryBound(to: Bool?.self).pointee = from.assumingMemoryBound(to: Bool?.self).pointee
                case (.decimal, .optionalID):
                    to.assumingMemoryBound(to: IDText?.self).pointee =
                        from.assumingMemoryBound(to: Int64?.self).pointee.map { IDText(String($0)) }
                default:
                    break   // `targets` holds only the pairs above
                }
            }
        }
    }
}
