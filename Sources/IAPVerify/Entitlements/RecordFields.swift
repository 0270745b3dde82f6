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

/// How a row reads and sets its model property: by the Swift type the property holds.
enum FieldAccess<Model>: Sendable {
    case string(@Sendable (Model) -> String?, @Sendable (inout Model, String) -> Void)
    case int(@Sendable (Model) -> Int64?, @Sendable (inout Model, Int64) -> Void)
    case bool(@Sendable (Model) -> Bool?, @Sendable (inout Model, Bool) -> Void)
    case strings(@Sendable (Model) -> [String]?, @Sendable (inout Model, [String]) -> Void)
}

/// One row of a record field table.
struct RecordField<Model>: Sendable {
    let snake: StaticString
    /// nil: signed payloads carry no such member (a table's `derive` may set it).
    let camel: StaticString?
    let kind: FieldKind
    /// Not 0: the record's identity. Such fields are checked first, in this order, and a record
    /// without one is refused ("… is missing"); an empty one is written as null.
    let required: Int
    let access: FieldAccess<Model>
    /// Set by the table from the section the row is in.
    fileprivate(set) var output = FieldOutput.always
    fileprivate(set) var nested = false

    func name(_ casing: FieldCasing) -> StaticString? { casing == .snake ? snake : camel }

    typealias Getter<T> = @Sendable (Model) -> T?
    typealias Setter<T> = @Sendable (inout Model, T) -> Void

    /// A text field (`kind` .string or .code).
    static func string(_ snake: StaticString, _ camel: StaticString?, as kind: FieldKind = .string, required: Int = 0,
                       _ get: @escaping Getter<String>, _ set: @escaping Setter<String>) -> Self {
        Self(snake: snake, camel: camel, kind: kind, required: required, access: .string(get, set))
    }

    /// A number (`kind` .int or .date).
    static func int(_ snake: StaticString, _ camel: StaticString?, as kind: FieldKind = .int,
                    _ get: @escaping Getter<Int64>, _ set: @escaping Setter<Int64>) -> Self {
        Self(snake: snake, camel: camel, kind: kind, required: 0, access: .int(get, set))
    }

    /// A boolean (`kind` .bool or .flag).
    static func bool(_ snake: StaticString, _ camel: StaticString?, as kind: FieldKind = .bool,
                     _ get: @escaping Getter<Bool>, _ set: @escaping Setter<Bool>) -> Self {
        Self(snake: snake, camel: camel, kind: kind, required: 0, access: .bool(get, set))
    }

    static func strings(_ snake: StaticString, _ camel: StaticString?, _ get: @escaping Getter<[String]>, _ set: @escaping Setter<[String]>) -> Self {
        Self(snake: snake, camel: camel, kind: .strings, required: 0, access: .strings(get, set))
    }
}

/// A record's fields, in the order the result JSON writes them (and the reader checks them, after
/// the required ones), with the nested object some of them sit in.
struct RecordTable<Model>: Sendable {
    let fields: [RecordField<Model>]
    /// The nested object's name in each casing (`commitment`, `commitmentInfo`).
    let nested: (snake: StaticString, camel: StaticString)
    /// What a casing does not carry but implies, set after every field is read.
    let derive: @Sendable (inout Model, FieldCasing) -> Void

    private let snakeNames: FieldNameIndex
    private let camelNames: FieldNameIndex
    private let nestedSnakeNames: FieldNameIndex
    private let nestedCamelNames: FieldNameIndex
    private let requiredOrder: [Int]

    /// Slots a reader fills: field `i` at `i`, its date text member at `maxFields + i`, the nested
    /// object at `nestedSlot`.
    private static var maxFields: Int { 60 }
    private static var nestedSlot: Int { 2 * maxFields }

    /// - Parameters:
    ///   - always: the fields written even when the model has no value (as null).
    ///   - whenPresent: the fields written only when it has one (StoreKit 2's).
    ///   - nested: the nested object's name in each casing, and its fields (written when present).
    ///   - derive: sets what a casing implies but does not carry, after every field is read.
    init(always: [RecordField<Model>], whenPresent: [RecordField<Model>],
         nested: (snake: StaticString, camel: StaticString, fields: [RecordField<Model>]),
         derive: @escaping @Sendable (inout Model, FieldCasing) -> Void = { _, _ in }) {
        let fields = always + whenPresent.map { var f = $0; f.output = .whenPresent; return f }
            + nested.fields.map { var f = $0; f.output = .whenPresent; f.nested = true; return f }
        precondition(fields.count <= Self.maxFields)
        self.fields = fields
        self.nested = (nested.snake, nested.camel)
        self.derive = derive
        func names(_ casing: FieldCasing, nested inner: Bool) -> FieldNameIndex {
            var entries: [(name: StaticString, slot: Int)] = []
            for (i, f) in fields.enumerated() where f.nested == inner {
                guard let name = f.name(casing) else { continue }
                entries.append((name, i))
                if casing == .snake, case .date(let text) = f.kind { entries.append((text, Self.maxFields + i)) }
            }
            if !inner { entries.append((casing == .snake ? nested.snake : nested.camel, Self.nestedSlot)) }
            return FieldNameIndex(entries)
        }
        snakeNames = names(.snake, nested: false)
        camelNames = names(.camel, nested: false)
        nestedSnakeNames = names(.snake, nested: true)
        nestedCamelNames = names(.camel, nested: true)
        requiredOrder = fields.indices.filter { fields[$0].required != 0 }.sorted { fields[$0].required < fields[$1].required }
    }

    // MARK: reading

    /// Reads one record from a JSON object into `model` (which starts as the model's empty record).
    /// A required field that is absent, or any field present with the wrong type, is an error
    /// naming it; absent fields leave the model's default.
    func read(_ object: JSONValue, into model: inout Model, _ casing: FieldCasing, _ flavour: FieldFlavour,
              path: String, index: Int? = nil) throws(FieldProblem) {
        let decoder = try FieldDecoder(object, path: path, index: index, flavour)
        var found = InlineArray<121, UInt32>(repeating: 0)
        let names = casing == .snake ? snakeNames : camelNames
        object.forEachMember { key, value in
            if let slot = names.slot(key) { found[slot] = value.at }
        }
        func value(_ slot: Int) -> JSONValue? {
            let at = found[slot]
            return at == 0 ? nil : FieldDecoder.present(JSONValue(view: object.view, at: at))
        }
        for i in requiredOrder {
            let f = fields[i]
            guard f.name(casing) != nil, value(i) != nil else {
                throw FieldProblem(message: "\(decoder.path).\(f.name(casing) ?? f.snake) is missing")
            }
            try set(f, value(i), text: nil, casing, decoder, &model)
        }
        var hasNested = false
        for (i, f) in fields.enumerated() where f.required == 0 {
            if f.nested { hasNested = true; continue }
            guard let v = value(i) else {
                if case .date = f.kind, casing == .snake, let text = value(Self.maxFields + i) {
                    try set(f, nil, text: text, casing, decoder, &model)
                }
                continue
            }
            try set(f, v, text: nil, casing, decoder, &model)
        }
        if hasNested, let inner = value(Self.nestedSlot) {
            let name = casing == .snake ? nested.snake : nested.camel
            let innerDecoder = try FieldDecoder(inner, path: "\(decoder.path).\(name)", flavour)
            var innerFound = InlineArray<60, UInt32>(repeating: 0)
            let innerNames = casing == .snake ? nestedSnakeNames : nestedCamelNames
            inner.forEachMember { key, value in
                if let slot = innerNames.slot(key) { innerFound[slot] = value.at }
            }
            for (i, f) in fields.enumerated() where f.nested {
                let at = innerFound[i]
                guard at != 0, let v = FieldDecoder.present(JSONValue(view: inner.view, at: at)) else { continue }
                try set(f, v, text: nil, casing, innerDecoder, &model)
            }
        }
        derive(&model, casing)
    }

    /// Reads one present field (or, for a snake_case date, its text member) into the model.
    private func set(_ f: RecordField<Model>, _ v: JSONValue?, text: JSONValue?, _ casing: FieldCasing,
                     _ d: FieldDecoder, _ model: inout Model) throws(FieldProblem) {
        let key = f.name(casing) ?? f.snake
        switch f.access {
        case .string(_, let set):
            if case .code = f.kind, d.flavour == .strict {
                set(&model, String(try d.int(v!, key)))   // Apple signs a number
            } else {
                set(&model, try d.string(v!, key))
            }
        case .int(_, let set):
            if case .date(let textName) = f.kind {
                if let ms = try d.date(ms: v, key, text: text, textName) { set(&model, ms) }
            } else {
                set(&model, try d.int(v!, key))
            }
        case .bool(_, let set):
            if case .flag = f.kind { set(&model, try d.flag(v!, key)) } else { set(&model, try d.bool(v!, key)) }
        case .strings(_, let set):
            set(&model, try d.stringArray(v!, key))
        }
    }

    // MARK: writing

    /// Writes the record as a JSON object in the snake_case names.
    func write(_ model: Model, into w: inout JSONWriter) {
        w.beginObject()
        writeMembers(model, into: &w)
        w.endObject()
    }

    /// The record's members without the braces, for a writer that adds members of its own.
    func writeMembers(_ model: Model, into w: inout JSONWriter) {
        var hasNested = false
        for f in fields {
            if f.nested {
                hasNested = hasNested || Self.has(f, model)
            } else {
                Self.write(f, model, into: &w)
            }
        }
        guard hasNested else { return }
        w.key(nested.snake)
        w.beginObject()
        for f in fields where f.nested { Self.write(f, model, into: &w) }
        w.endObject()
    }

    private static func has(_ f: RecordField<Model>, _ model: Model) -> Bool {
        switch f.access {
        case .string(let get, _): return get(model) != nil
        case .int(let get, _): return get(model) != nil
        case .bool(let get, _): return get(model) != nil
        case .strings(let get, _): return get(model) != nil
        }
    }

    private static func write(_ f: RecordField<Model>, _ model: Model, into w: inout JSONWriter) {
        let always = f.output == .always
        switch f.access {
        case .string(let get, _):
            var s = get(model)
            if f.required != 0, s?.isEmpty == true { s = nil }   // only a receipt record can lack its ids
            if s != nil || always { w.key(f.snake); w.string(s) }
        case .int(let get, _):
            let n = get(model)
            if n != nil || always { w.key(f.snake); w.int(n) }
        case .bool(let get, _):
            let b = get(model)
            if b != nil || always { w.key(f.snake); w.bool(b) }
        case .strings(let get, _):
            guard let list = get(model) else {
                if always { w.key(f.snake); w.null() }
                return
            }
            w.key(f.snake)
            w.beginArray()
            for s in list { w.string(s) }
            w.endArray()
        }
    }
}
