// The machinery behind the record field tables (RecordFieldTables.swift): one reader, which takes
// Apple's casing and the FieldReader flavour, and one writer, which writes the result JSON's
// snake_case names. Each table row names a field once: both spellings, the JSON type, when it is
// written and the model property it reads and sets.

/// Which of Apple's spellings a record arrives in.
enum FieldCasing: Sendable {
    /// `transaction_id`: /verifyReceipt bodies, the entitlement input, per-call `renewal_info` and
    /// every result this library writes.
    case snake
    /// `transactionId`: StoreKit 2 signed payloads.
    case camel
}

/// A field's JSON type (read in the reader's flavour: see FieldReader.swift).
enum FieldKind: Sendable {
    case string
    /// A code kept as text that Apple signs as a number (`revocationReason`) and sends elsewhere
    /// as text (`cancellation_reason`): strict reading wants the number.
    case code
    case int
    /// Unix milliseconds. The snake_case name ends in `_ms`; when that member is absent the one
    /// named `text` (Apple's "2020-11-25 08:31:02 Etc/GMT", or ms) is read instead.
    case date(text: StaticString)
    case bool
    /// One of Apple's 0/1 status codes, as a boolean.
    case flag
    case strings
}

/// When the writer writes a field.
enum FieldOutput: Sendable {
    /// Always, null when the model has no value.
    case always
    /// Only when the model has a value (the StoreKit 2 fields).
    case whenPresent
}

/// The Swift type of the model property a row reads and sets.
enum FieldStorage: Sendable {
    case string, optionalString, int, optionalInt, bool, optionalBool, optionalStrings
    /// An `IDText` (a transaction id: read and written as text, held without a String).
    case id, optionalID
    /// A `TextView` into the text the writer is given (written only: receipt records).
    case view
    /// An `Int64?` written as its decimal text (an id Apple signs as an INTEGER; written only).
    case decimal
}

/// One row, as the reader and the writer use it: plain data.
struct FieldSpec: Sendable {
    let snake: StaticString
    /// nil: signed payloads carry no such member (a table's `derive` may set it).
    let camel: StaticString?
    let kind: FieldKind
    /// Not 0: the record's identity. Such fields are checked first, in this order, and a record
    /// without one is refused ("… is missing"); an empty one is written as null.
    let required: Int
    /// The model property: its type, and where it is stored in the model (from its key path).
    let storage: FieldStorage
    let offset: Int
    /// The member's one-line meaning (the description: JSON/Surface.swift).
    let meaning: StaticString
    /// Set by the table from the section the row is in.
    fileprivate(set) var output = FieldOutput.always
    fileprivate(set) var nested = false

    func name(_ casing: FieldCasing) -> StaticString? { casing == .snake ? snake : camel }
}

/// One row of a record field table: a field's names, JSON type and model property. The property
/// is named by a key path to a stored property, which the table turns into an offset once: reading
/// and writing a thousand records then costs no key path lookups and no closure calls.
struct RecordField<Model>: Sendable {
    fileprivate(set) var spec: FieldSpec

    private init<T>(_ snake: StaticString, _ camel: StaticString?, _ kind: FieldKind, required: Int = 0,
                    _ storage: FieldStorage, _ path: WritableKeyPath<Model, T>, _ meaning: StaticString) {
        guard let offset = MemoryLayout<Model>.offset(of: path) else { preconditionFailure("\(snake): not a stored property") }
        spec = FieldSpec(snake: snake, camel: camel, kind: kind, required: required, storage: storage, offset: offset, meaning: meaning)
    }

    /// A text field (`kind` .string or .code).
    static func string(_ snake: StaticString, _ camel: StaticString?, as kind: FieldKind = .string, required: Int = 0,
                       _ path: WritableKeyPath<Model, String>, _ meaning: StaticString) -> Self {
        Self(snake, camel, kind, required: required, .string, path, meaning)
    }

    static func string(_ snake: StaticString, _ camel: StaticString?, as kind: FieldKind = .string,
                       _ path: WritableKeyPath<Model, String?>, _ meaning: StaticString) -> Self {
        Self(snake, camel, kind, .optionalString, path, meaning)
    }

    /// A transaction id, held as an IDText (`kind` .string).
    static func id(_ snake: StaticString, _ camel: StaticString?, required: Int = 0, _ path: WritableKeyPath<Model, IDText>, _ meaning: StaticString) -> Self {
        Self(snake, camel, .string, required: required, .id, path, meaning)
    }

    static func id(_ snake: StaticString, _ camel: StaticString?, _ path: WritableKeyPath<Model, IDText?>, _ meaning: StaticString) -> Self {
        Self(snake, camel, .string, .optionalID, path, meaning)
    }

    /// A number (`kind` .int or .date).
    static func int(_ snake: StaticString, _ camel: StaticString?, as kind: FieldKind = .int, _ path: WritableKeyPath<Model, Int64>, _ meaning: StaticString) -> Self {
        Self(snake, camel, kind, .int, path, meaning)
    }

    static func int(_ snake: StaticString, _ camel: StaticString?, as kind: FieldKind = .int, _ path: WritableKeyPath<Model, Int64?>, _ meaning: StaticString) -> Self {
        Self(snake, camel, kind, .optionalInt, path, meaning)
    }

    /// A boolean (`kind` .bool or .flag).
    static func bool(_ snake: StaticString, _ camel: StaticString?, as kind: FieldKind = .bool, _ path: WritableKeyPath<Model, Bool>, _ meaning: StaticString) -> Self {
        Self(snake, camel, kind, .bool, path, meaning)
    }

    static func bool(_ snake: StaticString, _ camel: StaticString?, as kind: FieldKind = .bool, _ path: WritableKeyPath<Model, Bool?>, _ meaning: StaticString) -> Self {
        Self(snake, camel, kind, .optionalBool, path, meaning)
    }

    static func strings(_ snake: StaticString, _ camel: StaticString?, _ path: WritableKeyPath<Model, [String]?>, _ meaning: StaticString) -> Self {
        Self(snake, camel, .strings, .optionalStrings, path, meaning)
    }

    /// Text kept as a view of the writer's text buffer (a table only written, never read).
    static func view(_ snake: StaticString, required: Int = 0, _ path: WritableKeyPath<Model, TextView>, _ meaning: StaticString) -> Self {
        Self(snake, nil, .string, required: required, .view, path, meaning)
    }

    /// A number written as its decimal text (a table only written, never read).
    static func decimal(_ snake: StaticString, _ path: WritableKeyPath<Model, Int64?>, _ meaning: StaticString) -> Self {
        Self(snake, nil, .string, .decimal, path, meaning)
    }
}

/// A record's fields, in the order the result JSON writes them (and the reader checks them, after
/// the required ones), with the nested object some of them sit in.
struct RecordTable<Model>: Sendable {
    /// Row by row: what the field is, and where the model holds it.
    private let specs: [FieldSpec]
    /// The nested object's name in each casing (`commitment`, `commitmentInfo`).
    let nested: (snake: StaticString, camel: StaticString)
    /// What a casing does not carry but implies, set after every field is read.
    private let derive: @Sendable (inout Model, FieldCasing) -> Void

    private let snakeNames: FieldNameIndex
    private let camelNames: FieldNameIndex
    private let nestedSnakeNames: FieldNameIndex
    private let nestedCamelNames: FieldNameIndex
    private let requiredOrder: [Int]
    /// The rows written always come first: `specs[..<alwaysCount]`.
    private let alwaysCount: Int
    /// The slot of each date's snake_case text member (-1: none).
    private let textSlot: [Int]
    /// Where a reader notes the nested object (after the fields and the date text members).
    private let nestedSlot: Int
    /// For each slot, the row it belongs to (a date's text member: its date's row; -1: the
    /// nested object), and the rows read in the general pass (not required, not nested), as bits.
    private let rowOfSlot: [Int]
    private let generalRows: UInt64
    /// The rows written only when present (not nested), as bits.
    private let whenPresentRows: UInt64
    private let hasNestedRows: Bool

    /// Slots a reader fills: field `i` at `i`, then the date text members, then the nested object.
    private typealias Slots = InlineArray<64, UInt32>

    /// - Parameters:
    ///   - always: the fields written even when the model has no value (as null).
    ///   - whenPresent: the fields written only when it has one (StoreKit 2's).
    ///   - nested: the nested object's name in each casing, and its fields (written when present).
    ///   - derive: sets what a casing implies but does not carry, after every field is read.
    init(always: [RecordField<Model>], whenPresent: [RecordField<Model>],
         nested: (snake: StaticString, camel: StaticString, fields: [RecordField<Model>]),
         derive: @escaping @Sendable (inout Model, FieldCasing) -> Void = { _, _ in }) {
        let fields = always + whenPresent.map { var f = $0; f.spec.output = .whenPresent; return f }
            + nested.fields.map { var f = $0; f.spec.output = .whenPresent; f.spec.nested = true; return f }
        let specs = fields.map(\.spec)
        self.specs = specs
        alwaysCount = always.count
        self.nested = (nested.snake, nested.camel)
        self.derive = derive
        var next = specs.count
        let textSlot = specs.map { spec in
            guard case .date = spec.kind else { return -1 }
            defer { next += 1 }
            return next
        }
        let nestedSlot = next
        precondition(nestedSlot < Slots.count)
        self.textSlot = textSlot
        self.nestedSlot = nestedSlot
        func names(_ casing: FieldCasing, nested inner: Bool) -> FieldNameIndex {
            var entries: [(name: StaticString, slot: Int)] = []
            for (i, spec) in specs.enumerated() where spec.nested == inner {
                guard let name = spec.name(casing) else { continue }
                entries.append((name, i))
                if casing == .snake, case .date(let text) = spec.kind { entries.append((text, textSlot[i])) }
            }
            if !inner { entries.append((casing == .snake ? nested.snake : nested.camel, nestedSlot)) }
            return FieldNameIndex(entries)
        }
        snakeNames = names(.snake, nested: false)
        camelNames = names(.camel, nested: false)
        nestedSnakeNames = names(.snake, nested: true)
        nestedCamelNames = names(.camel, nested: true)
        requiredOrder = specs.indices.filter { specs[$0].required != 0 }.sorted { specs[$0].required < specs[$1].required }
        var rowOfSlot = [Int](repeating: -1, count: nestedSlot + 1)
        for i in specs.indices {
            rowOfSlot[i] = i
            if textSlot[i] >= 0 { rowOfSlot[textSlot[i]] = i }
        }
        self.rowOfSlot = rowOfSlot
        generalRows = specs.indices.reduce(UInt64(0)) { bits, i in
            specs[i].required == 0 && !specs[i].nested ? bits | (1 << UInt64(i)) : bits
        }
        whenPresentRows = specs.indices.reduce(UInt64(0)) { bits, i in
            specs[i].output == .whenPresent && !specs[i].nested ? bits | (1 << UInt64(i)) : bits
        }
        hasNestedRows = specs.contains { $0.nested }
    }

    /// The rows written always, in order (a receipt's record is written in their shape).
    var alwaysWrittenSpecs: [FieldSpec] {
        specs.filter { $0.output == .always && !$0.nested }
    }

    /// Every row, in order, with the section it is in (`iapverify fields`).
    var allSpecs: [FieldSpec] { specs }

    /// The snake_case names of the rows written always, in order (tests compare tables by them).
    var alwaysWrittenNames: [String] {
        alwaysWrittenSpecs.map { "\($0.snake)" }
    }

    // MARK: reading

    /// Reads one record from a JSON object into `model` (which starts as the model's empty record).
    /// A required field that is absent, or any field present with the wrong type, is an error
    /// naming it; absent fields leave the model's default.
    /// With `checkOnly`, every field is checked exactly as a read checks it (the same errors, in the
    /// same order) but no text is copied out: for a record whose value a later one replaces.
    /// - Returns: false when the object has no member for a row written only when present (nor the
    ///   nested object): those rows of the model are then as they were.
    @discardableResult
    func read(_ object: JSONValue, into model: inout Model, _ casing: FieldCasing, _ flavour: FieldFlavour,
              path: String, index: Int? = nil, checkOnly: Bool = false) throws(FieldProblem) -> Bool {
        var texts = RecentTexts()
        return try read(object, into: &model, casing, flavour, path: path, index: index, checkOnly: checkOnly, texts: &texts)
    }

    /// The same, making repeated texts (a product id in every record) once: `texts` is shared by
    /// the records of one list.
    @discardableResult
    func read(_ object: JSONValue, into model: inout Model, _ casing: FieldCasing, _ flavour: FieldFlavour,
              path: String, index: Int? = nil, checkOnly: Bool = false, texts: inout RecentTexts) throws(FieldProblem) -> Bool {
        let decoder = try FieldDecoder(object, path: path, index: index, flavour)
        var found = Slots(repeating: 0)
        // The rows something was found for: the general pass visits only those, in row order.
        var foundRows: UInt64 = 0
        let names = casing == .snake ? snakeNames : camelNames
        object.forEachMember { key, value in
            if let slot = names.slot(key) {
                found[slot] = value.at
                let row = rowOfSlot[slot]
                if row >= 0 { foundRows |= 1 << UInt64(row) }
            }
        }
        func value(_ slot: Int) -> JSONValue? {
            let at = found[slot]
            return at == 0 ? nil : FieldDecoder.present(JSONValue(view: object.view, at: at))
        }
        for i in requiredOrder {
            guard specs[i].name(casing) != nil, let v = value(i) else {
                throw FieldProblem(message: "\(decoder.path).\(specs[i].name(casing) ?? specs[i].snake) is missing")
            }
            try set(i, v, text: nil, casing, decoder, checkOnly, &model, &texts)
        }
        // Every row not required and not nested, in row order, that has a member (the others
        // would read nothing): the same reads, errors and order as visiting every row.
        var rows = foundRows & generalRows
        while rows != 0 {
            let i = rows.trailingZeroBitCount
            rows &= rows &- 1
            if let v = value(i) {
                try set(i, v, text: nil, casing, decoder, checkOnly, &model, &texts)
            } else if casing == .snake, textSlot[i] >= 0, let text = value(textSlot[i]) {
                try set(i, nil, text: text, casing, decoder, checkOnly, &model, &texts)
            }
        }
        var touched = foundRows & whenPresentRows != 0
        if hasNestedRows, let inner = value(nestedSlot) {
            touched = true
            let name = casing == .snake ? nested.snake : nested.camel
            let innerDecoder = try FieldDecoder(inner, path: "\(decoder.path).\(name)", flavour)
            var innerFound = Slots(repeating: 0)
            let innerNames = casing == .snake ? nestedSnakeNames : nestedCamelNames
            inner.forEachMember { key, value in
                if let slot = innerNames.slot(key) { innerFound[slot] = value.at }
            }
            for i in specs.indices where specs[i].nested {
                let at = innerFound[i]
                guard at != 0, let v = FieldDecoder.present(JSONValue(view: inner.view, at: at)) else { continue }
                try set(i, v, text: nil, casing, innerDecoder, checkOnly, &model, &texts)
            }
        }
        derive(&model, casing)
        return touched
    }

    /// Reads field `i`, present (or, for a snake_case date, its text member), into the model.
    private func set(_ i: Int, _ v: JSONValue?, text: JSONValue?, _ casing: FieldCasing,
                     _ d: FieldDecoder, _ checkOnly: Bool, _ model: inout Model, _ texts: inout RecentTexts) throws(FieldProblem) {
        let spec = specs[i]
        let key = spec.name(casing) ?? spec.snake
        switch spec.storage {
        case .string, .optionalString:
            let s: String
            if checkOnly, d.flavour == .tolerant {
                try d.checkString(v!, key)   // what `d.string` would refuse, without making the String
                return
            }
            if case .code = spec.kind, d.flavour == .strict {
                s = String(try d.int(v!, key))   // Apple signs a number
            } else if let bytes = v!.utf8 {
                s = texts.text(bytes)   // what `d.string` makes of a JSON string, shared when repeated
            } else {
                s = try d.string(v!, key)
            }
            if spec.storage == .string { Self.store(s, at: spec.offset, in: &model) } else { Self.store(Optional(s), at: spec.offset, in: &model) }
        case .id, .optionalID:
            if checkOnly, d.flavour == .tolerant {
                try d.checkString(v!, key)
                return
            }
            // A JSON string straight from its bytes (what `d.string` would decode them to); a
            // number, in the tolerant flavour, through its text.
            let text: IDText
            if let bytes = v!.utf8 { text = IDText(utf8: bytes) } else { text = IDText(try d.string(v!, key)) }
            if spec.storage == .id { Self.store(text, at: spec.offset, in: &model) } else { Self.store(Optional(text), at: spec.offset, in: &model) }
        case .int, .optionalInt:
            let n: Int64
            if case .date(let textName) = spec.kind {
                guard let ms = try d.date(ms: v, key, text: text, textName) else { return }
                n = ms
            } else {
                n = try d.int(v!, key)
            }
            if spec.storage == .int { Self.store(n, at: spec.offset, in: &model) } else { Self.store(Optional(n), at: spec.offset, in: &model) }
        case .bool, .optionalBool:
            let b: Bool
            if case .flag = spec.kind { b = try d.flag(v!, key) } else { b = try d.bool(v!, key) }
            if spec.storage == .bool { Self.store(b, at: spec.offset, in: &model) } else { Self.store(Optional(b), at: spec.offset, in: &model) }
        case .optionalStrings:
            Self.store(Optional(try d.stringArray(v!, key)), at: spec.offset, in: &model)
        case .view, .decimal:
            // Only written: a table with such rows is never read from JSON.
            throw FieldProblem(message: "\(d.path).\(key) cannot be read here")
        }
    }

    /// Sets the stored property at `offset`, whose type the row's key path fixed as T.
    @inline(__always) private static func store<T>(_ value: T, at offset: Int, in model: inout Model) {
        withUnsafeMutableBytes(of: &model) { ($0.baseAddress! + offset).assumingMemoryBound(to: T.self).pointee = value }
    }

    // MARK: writing

    /// Writes the record as a JSON object in the snake_case names. (`model` is inout only to be
    /// read in place; it is not changed.)
    func write(_ model: inout Model, into w: inout JSONWriter) {
        w.beginObject()
        writeMembers(&model, into: &w)
        w.endObject()
    }

    /// Writes the record's rows written always, and nothing else, from the model's bytes at `base`
    /// (which those rows must lie in): for a model whose other rows are all empty (a transaction
    /// without StoreKit 2 fields), which would write nothing.
    func writeAlways(at base: UnsafeRawPointer, into w: inout JSONWriter) {
        w.beginObject()
        for i in 0..<alwaysCount { Self.write(specs[i], base, .init(start: nil, count: 0), into: &w) }
        w.endObject()
    }

    /// The record's members without the braces, for a writer that adds members of its own.
    /// `text` is the buffer the model's views point into (none: the model has no views).
    func writeMembers(_ model: inout Model, text: UnsafeBufferPointer<UInt8> = .init(start: nil, count: 0),
                      into w: inout JSONWriter) {
        withUnsafeMutableBytes(of: &model) { raw in writeMembers(at: UnsafeRawPointer(raw.baseAddress!), text: text, into: &w) }
    }

    /// Writes the record where it is (an element of an array, read in place, not copied).
    func write(at model: UnsafePointer<Model>, into w: inout JSONWriter) {
        w.beginObject()
        writeMembers(at: UnsafeRawPointer(model), text: .init(start: nil, count: 0), into: &w)
        w.endObject()
    }

    private func writeMembers(at base: UnsafeRawPointer, text: UnsafeBufferPointer<UInt8>, into w: inout JSONWriter) {
        var hasNested = false
        for i in specs.indices {
            if specs[i].nested {
                hasNested = hasNested || Self.has(specs[i], base)
            } else {
                Self.write(specs[i], base, text, into: &w)
            }
        }
        guard hasNested else { return }
        w.key(nested.snake)
        w.beginObject()
        for i in specs.indices where specs[i].nested { Self.write(specs[i], base, text, into: &w) }
        w.endObject()
    }

    private static func has(_ spec: FieldSpec, _ base: UnsafeRawPointer) -> Bool {
        let p = base + spec.offset
        switch spec.storage {
        case .string, .int, .bool: return true
        case .optionalString: return p.assumingMemoryBound(to: String?.self).pointee != nil
        case .id: return true
        case .optionalID: return p.assumingMemoryBound(to: IDText?.self).pointee != nil
        case .optionalInt: return p.assumingMemoryBound(to: Int64?.self).pointee != nil
        case .optionalBool: return p.assumingMemoryBound(to: Bool?.self).pointee != nil
        case .optionalStrings: return p.assumingMemoryBound(to: [String]?.self).pointee != nil
        case .view: return p.assumingMemoryBound(to: TextView.self).pointee.isPresent
        case .decimal: return p.assumingMemoryBound(to: Int64?.self).pointee != nil
        }
    }

    /// Inlined into the loops over a table's rows: no call per field.
    @inline(__always) private static func write(_ spec: FieldSpec, _ base: UnsafeRawPointer, _ text: UnsafeBufferPointer<UInt8>,
                              into w: inout JSONWriter) {
        let p = base + spec.offset
        let always = spec.output == .always
        switch spec.storage {
        case .string:
            let s = p.assumingMemoryBound(to: String.self)
            w.key(spec.snake)
            if spec.required != 0, s.pointee.isEmpty { w.null() } else { w.string(s.pointee) }   // only a receipt record lacks its ids
        case .optionalString:
            let s = p.assumingMemoryBound(to: String?.self)
            if always || s.pointee != nil { w.key(spec.snake); w.string(s.pointee) }
        case .id:
            let text = p.assumingMemoryBound(to: IDText.self)
            w.key(spec.snake)
            if spec.required != 0, text.pointee.isEmpty { w.null() } else { text.pointee.withUTF8 { w.string(utf8: $0) } }
        case .optionalID:
            let text = p.assumingMemoryBound(to: IDText?.self)
            guard always || text.pointee != nil else { return }
            w.key(spec.snake)
            if let id = text.pointee { id.withUTF8 { w.string(utf8: $0) } } else { w.null() }
        case .int:
            w.key(spec.snake)
            w.int(p.assumingMemoryBound(to: Int64.self).pointee)
        case .optionalInt:
            let n = p.assumingMemoryBound(to: Int64?.self).pointee
            if always || n != nil { w.key(spec.snake); w.int(n) }
        case .bool:
            w.key(spec.snake)
            w.bool(p.assumingMemoryBound(to: Bool.self).pointee)
        case .optionalBool:
            let b = p.assumingMemoryBound(to: Bool?.self).pointee
            if always || b != nil { w.key(spec.snake); w.bool(b) }
        case .optionalStrings:
            let list = p.assumingMemoryBound(to: [String]?.self)
            guard let items = list.pointee else {
                if always { w.key(spec.snake); w.null() }
                return
            }
            w.key(spec.snake)
            w.beginArray()
            for s in items { w.string(s) }
            w.endArray()
        case .view:
            let view = p.assumingMemoryBound(to: TextView.self).pointee
            let bytes = view.bytes(in: text)
            guard always || bytes != nil else { return }
            w.key(spec.snake)
            // As a model's String: a required id that is empty is written as null.
            if let bytes, spec.required == 0 || bytes.count > 0 { w.string(utf8: bytes) } else { w.null() }
        case .decimal:
            let n = p.assumingMemoryBound(to: Int64?.self).pointee
            guard always || n != nil else { return }
            w.key(spec.snake)
            if let n { w.decimalString(n) } else { w.null() }
        }
    }
}
