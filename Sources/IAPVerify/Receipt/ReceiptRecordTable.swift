// A receipt's in-app record (attribute 17) as one table: each attribute of it the library reads,
// by Apple's type number, with what its value is, the member the result writes it as and the
// InAppPurchase property that keeps it. Everything else follows from the table:
// - the decoder reads by it, the walk in place and the tree reading alike (InAppRecordDecoder.swift),
//   and the types it does not list are the record's unknown attributes;
// - the result's `in_app` rows are written by it, in the members and order of the Transaction
//   table written always (RecordFieldTables.swift), whose names it shares: what a receipt does not
//   carry is written as an empty transaction has it; then the attributes that table does not name;
// - the engine's transactions are filled by it (ReceiptTransactions.swift).
// An attribute Apple adds is one row here, and the stored property of InAppPurchase it names.

/// What an in-app attribute's value is, as signed, and so how InAppPurchase stores it.
enum InAppValue: Sendable {
    /// An INTEGER, stored as `Int64?`.
    case integer
    /// An INTEGER that is an id: stored as `Int64?`, given as its decimal text.
    case decimal
    /// An INTEGER read as a flag (not 0: true), stored as `Bool?`.
    case flag
    /// A UTF8String, IA5String or PrintableString, stored as a `TextView` of the record.
    case text
    /// An RFC 3339 IA5String, stored as Unix milliseconds (`Int64?`); an empty one is absent.
    case date
}

/// One row of the table: an in-app attribute.
struct InAppAttribute: Sendable {
    let type: Int64
    let value: InAppValue
    /// The member the result writes: the Transaction table's name when it has the field.
    let name: StaticString
    /// Where InAppPurchase stores the value.
    let offset: Int
    /// The engine reads it: the transactions made for the engine carry it (the others only the
    /// transactions made for a Swift caller, and the result).
    let engine: Bool
    /// The member's meaning, for an attribute the Transaction table does not name (the
    /// description: JSON/Surface.swift); the others take the table's.
    let meaning: StaticString

    init<T>(_ type: Int64, _ value: InAppValue, _ name: StaticString, engine: Bool = true,
            _ path: WritableKeyPath<InAppPurchase, T>, meaning: StaticString = "") {
        let stored: Any.Type
        switch value {
        case .integer, .decimal, .date: stored = Int64?.self
        case .flag: stored = Bool?.self
        case .text: stored = TextView.self
        }
        guard T.self == stored, let offset = MemoryLayout<InAppPurchase>.offset(of: path) else {
            preconditionFailure("in-app attribute \(type) (\(name)): not a stored \(stored)")
        }
        self.type = type
        self.value = value
        self.name = name
        self.offset = offset
        self.engine = engine
        self.meaning = meaning
    }
}

enum InAppAttributes {
    /// Every in-app attribute the library reads. Apple's types are 1700...1763.
    static let rows: [InAppAttribute] = [
        InAppAttribute(1701, .integer, "quantity", \.quantity),
        InAppAttribute(1702, .text, "product_id", \.productIDText),
        InAppAttribute(1703, .text, "transaction_id", \.transactionIDText),
        InAppAttribute(1704, .date, "purchase_date_ms", \.purchaseDateMs),
        InAppAttribute(1705, .text, "original_transaction_id", \.originalTransactionIDText),
        InAppAttribute(1706, .date, "original_purchase_date_ms", \.originalPurchaseDateMs),
        InAppAttribute(1707, .integer, "product_type", \.productType,   // undocumented by Apple
                       meaning: "attribute 1707, undocumented by Apple: seen as the product's type"),
        InAppAttribute(1708, .date, "expires_date_ms", \.expiresDateMs),
        InAppAttribute(1711, .decimal, "web_order_line_item_id", engine: false, \.webOrderLineItem),
        InAppAttribute(1712, .date, "cancellation_date_ms", \.cancellationDateMs),
        InAppAttribute(1713, .flag, "is_trial_period", \.isTrialPeriod),
        InAppAttribute(1719, .flag, "is_in_intro_offer_period", \.isInIntroOfferPeriod),
        InAppAttribute(1721, .text, "promotional_offer_id", engine: false, \.promotionalOfferIDText),
    ]

    /// The member that lists a record's attributes the table does not (written when it has any),
    /// as it lists the payload's.
    static let unknownMember: StaticString = "unknown_attributes"

    /// The table by type, as the loops over a record's attributes use it: a caller takes it once
    /// per record (`let lookup = InAppAttributes.lookup`), so no attribute pays for reaching a static.
    struct Lookup: Sendable {
        /// The first type of Apple's in-app range; `rowOfType` covers 64 types from it.
        static let firstType: Int64 = 1700

        let rows: [InAppAttribute]
        /// The row of each type of the range, by `type - firstType` (-1: none).
        private let rowOfType: [Int8]

        init(_ rows: [InAppAttribute]) {
            var index = [Int8](repeating: -1, count: 64)
            for (i, row) in rows.enumerated() {
                let slot = Int(row.type - Self.firstType)
                precondition(slot >= 0 && slot < index.count, "in-app attribute \(row.type) is outside 1700...1763")
                precondition(index[slot] < 0, "in-app attribute \(row.type) is listed twice")
                index[slot] = Int8(i)
            }
            self.rows = rows
            rowOfType = index
        }

        /// The row of `type`; nil for a type the table does not list (an unknown attribute).
        @inline(__always) func row(_ type: Int64) -> Int? {
            let slot = type &- Self.firstType
            guard slot >= 0, slot < 64 else { return nil }
            let row = rowOfType[Int(slot)]
            return row < 0 ? nil : Int(row)
        }
    }

    static let lookup = Lookup(rows)

    /// The row of `type`; nil for a type the table does not list (an unknown attribute).
    static func row(_ type: Int64) -> Int? { lookup.row(type) }

    /// The row written as `name` (a Transaction table's name), compared as bytes: the plans are
    /// made on a process's first receipt, which should not pay for a String per comparison.
    static func row(named name: StaticString) -> Int? {
        name.withUTF8Buffer { wanted in rows.firstIndex { $0.name.withUTF8Buffer { $0.elementsEqual(wanted) } } }
    }

    // MARK: the result's row

    /// A member of a receipt record's `in_app` row, in the Transaction table's order.
    struct Column: Sendable {
        let name: StaticString
        /// The row of the attribute that fills it; -1: a receipt carries no such attribute.
        let attribute: Int
        /// That attribute's kind and where InAppPurchase stores it (nil: no attribute).
        let value: InAppValue?
        let offset: Int
        /// The record's identity: an empty text is written as null, as for every transaction.
        let required: Bool
        /// What an empty transaction holds there: written when the record has no value.
        let absent: Absent
    }

    enum Absent: Sendable {
        case null
        case bool(Bool)
        case int(Int64)
    }

    /// How a record's row is written: the columns, then the attributes no column takes (written
    /// when the record has them). A writer of many records takes it once (`let plan = InAppAttributes.plan`).
    struct RowPlan: Sendable {
        /// The Transaction table's members written always, each with the attribute that fills it.
        let columns: [Column]
        let extras: [Column]
    }

    static let plan: RowPlan = {
        let empty = TransactionRecord.scratch
        let columns = TransactionRecord.fields.alwaysWrittenSpecs.map { spec in
            let attribute = row(named: spec.snake) ?? -1
            let absent: Absent
            switch spec.storage {
            case .int: absent = .int(value(Int64.self, at: spec.offset, of: empty))
            case .bool: absent = .bool(value(Bool.self, at: spec.offset, of: empty))
            default: absent = .null
            }
            return Column(name: spec.snake, attribute: attribute, value: attribute < 0 ? nil : rows[attribute].value,
                          offset: attribute < 0 ? 0 : rows[attribute].offset, required: spec.required != 0, absent: absent)
        }
        let extras = rows.indices.filter { i in !columns.contains { $0.attribute == i } }.map { i in
            Column(name: rows[i].name, attribute: i, value: rows[i].value, offset: rows[i].offset, required: false, absent: .null)
        }
        return RowPlan(columns: columns, extras: extras)
    }()

    static var columns: [Column] { plan.columns }
    /// The rows of the attributes no column takes.
    static var extras: [Int] { plan.extras.map(\.attribute) }

    private static func value<T>(_: T.Type, at offset: Int, of record: TransactionRecord) -> T {
        var record = record
        return withUnsafeBytes(of: &record) { $0.load(fromByteOffset: offset, as: T.self) }
    }

    /// Writes a record's row members (the columns, then the extras) from the record where it is;
    /// `text` is its bytes, which the views point into.
    @inline(__always)
    static func writeMembers(of p: UnsafePointer<InAppPurchase>, text: UnsafeBufferPointer<UInt8>, plan: RowPlan,
                             into w: inout JSONWriter) {
        let base = UnsafeRawPointer(p)
        for column in plan.columns {
            w.key(column.name)
            if !write(column, base, text, into: &w) {
                switch column.absent {
                case .null: w.null()
                case .bool(let b): w.bool(b)
                case .int(let n): w.int(n)
                }
            }
        }
        for column in plan.extras where has(column, base) {
            w.key(column.name)
            _ = write(column, base, text, into: &w)
        }
    }

    /// Writes the column's value; false (and nothing written) when the record has none.
    @inline(__always)
    private static func write(_ c: Column, _ base: UnsafeRawPointer, _ text: UnsafeBufferPointer<UInt8>,
                              into w: inout JSONWriter) -> Bool {
        guard let kind = c.value else { return false }
        let at = base + c.offset
        switch kind {
        case .integer, .date:
            guard let n = at.assumingMemoryBound(to: Int64?.self).pointee else { return false }
            w.int(n)
        case .decimal:
            guard let n = at.assumingMemoryBound(to: Int64?.self).pointee else { return false }
            w.decimalString(n)
        case .flag:
            guard let b = at.assumingMemoryBound(to: Bool?.self).pointee else { return false }
            w.bool(b)
        case .text:
            guard let bytes = at.assumingMemoryBound(to: TextView.self).pointee.bytes(in: text),
                  !c.required || bytes.count > 0 else { return false }
            w.string(utf8: bytes)
        }
        return true
    }

    @inline(__always)
    private static func has(_ c: Column, _ base: UnsafeRawPointer) -> Bool {
        guard let kind = c.value else { return false }
        let at = base + c.offset
        switch kind {
        case .integer, .date, .decimal: return at.assumingMemoryBound(to: Int64?.self).pointee != nil
        case .flag: return at.assumingMemoryBound(to: Bool?.self).pointee != nil
        case .text: return at.assumingMemoryBound(to: TextView.self).pointee.isPresent
        }
    }
}
