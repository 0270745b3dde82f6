// The records a result holds, as their tables describe them: every member of a transaction, a
// renewal info (RecordFieldTables.swift) and a receipt's in-app record (ReceiptRecordTable.swift),
// by JSON name, with its type and when it is written. `iapverify fields --json` prints them with the
// verdicts, actions and environments, and `make test` holds the bindings and the JSON Schemas to them
// (Tests/architecture/check_fields.py).

/// One member of a record.
package struct FieldEntry: Sendable {
    /// The member's name in the result JSON.
    package let name: String
    /// `string`, `integer`, `boolean`, `date_ms` (Unix milliseconds), `string_array`, `object`
    /// or `array`.
    package let type: String
    /// `always` (null when the record has no value) or `when_present`.
    package let written: String
    /// A receipt record's member: the attribute type Apple signs it as (nil: none).
    package let attribute: Int64?
    /// An object's members, when its table lists them.
    package let fields: [FieldEntry]
}

/// One record kind and its members, in the order the result writes them.
package struct RecordEntry: Sendable {
    package let record: String
    package let fields: [FieldEntry]
}

package enum FieldCatalog {
    /// Every record kind the tables describe.
    package static var records: [RecordEntry] {
        [RecordEntry(record: "transaction", fields: entries(TransactionRecord.fields) + [advancedCommerce]),
         RecordEntry(record: "renewal_info", fields: entries(RenewalInfo.fields) + [advancedCommerce]),
         RecordEntry(record: "receipt_in_app", fields: receiptInApp)]
    }

    /// The Advanced Commerce items a transaction's and a renewal info's writer add after the
    /// table's rows (TransactionJSON.swift).
    private static var advancedCommerce: FieldEntry {
        FieldEntry(name: "\(advancedCommerceMember)", type: "object", written: "when_present", attribute: nil, fields: [])
    }

    private static func entries<Model>(_ table: RecordTable<Model>) -> [FieldEntry] {
        let specs = table.allSpecs
        var out = specs.filter { !$0.nested }.map { entry($0) }
        let nested = specs.filter(\.nested)
        if !nested.isEmpty {
            out.append(FieldEntry(name: "\(table.nested.snake)", type: "object", written: "when_present", attribute: nil,
                                  fields: nested.map { entry($0) }))
        }
        return out
    }

    private static func entry(_ spec: FieldSpec, attribute: Int64? = nil) -> FieldEntry {
        FieldEntry(name: "\(spec.snake)", type: type(spec.kind), written: spec.output == .always ? "always" : "when_present",
                   attribute: attribute, fields: [])
    }

    private static func type(_ kind: FieldKind) -> String {
        switch kind {
        case .string, .code: return "string"
        case .int: return "integer"
        case .date: return "date_ms"
        case .bool, .flag: return "boolean"
        case .strings: return "string_array"
        }
    }

    /// A receipt record's row: the Transaction table's members written always (each with the
    /// attribute that fills it), the attributes that table does not name, and the unknown ones.
    private static var receiptInApp: [FieldEntry] {
        let specs = TransactionRecord.fields.alwaysWrittenSpecs
        var out: [FieldEntry] = []
        for (spec, column) in zip(specs, InAppAttributes.columns) {
            let attribute = column.attribute < 0 ? nil : InAppAttributes.rows[column.attribute]
            out.append(FieldEntry(name: "\(column.name)", type: attribute?.value.jsonType ?? type(spec.kind), written: "always",
                                  attribute: attribute?.type, fields: []))
        }
        for i in InAppAttributes.extras {
            let a = InAppAttributes.rows[i]
            out.append(FieldEntry(name: "\(a.name)", type: a.value.jsonType, written: "when_present", attribute: a.type, fields: []))
        }
        out.append(FieldEntry(name: "\(InAppAttributes.unknownMember)", type: "array", written: "when_present", attribute: nil,
                              fields: []))
        return out
    }
}
