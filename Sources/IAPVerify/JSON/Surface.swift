// The description of the library's surface: every member of every document it writes or reads,
// said once. A document's members are the cases of one enum (`SurfaceObject`), in the order they
// are written; each case says its JSON name, type, nullability, enum values and meaning in one
// `spec`. Writers take keys only from these enums (`JSONWriter.field(_:_:)` below), so a writer
// cannot emit a member the description lacks, and `iapverify fields --json` prints the same enums
// (Verifier/SurfaceCatalog.swift), from which the schemas, the docs tables and the bindings are
// generated or checked (docs/contributing.md).

/// A JSON value's shape, as the description prints it.
package enum MemberType: Sendable {
    case string
    case integer
    /// Unix milliseconds (an integer).
    case ms
    case boolean
    /// Any JSON value, passed through as given (a payload exactly as Apple signed it).
    case json
    /// An object whose members another enum describes.
    case object(any SurfaceDescribed.Type)
    /// An object whose members are data (a key per group, per header, per attribute name).
    case map(MemberElement)
    case array(MemberElement)
}

/// The element of an array or the value of a map.
package enum MemberElement: Sendable {
    case string, integer, boolean, json
    case object(any SurfaceDescribed.Type)
}

/// When a member is in the document.
package enum MemberPresence: Sendable {
    /// Always (null when the member is nullable and has no value).
    case always
    /// Only when it has a value.
    case whenPresent
}

/// The values a string (or integer) member may take.
package enum MemberValues: Sendable {
    case any
    /// Exactly these, space-separated.
    case words(StaticString)
    /// A vocabulary's words (its enum's raw values).
    case vocabulary(any SurfaceWords.Type)
    /// These are named; others pass through as given (Apple adds values without notice).
    case open(StaticString)
}

/// One member: all the description says about it. Every property is a literal or a metatype, so
/// a writer that asks only for `name` costs what a literal key cost.
package struct MemberSpec: Sendable {
    package let name: StaticString
    package let type: MemberType
    package let nullable: Bool
    package let presence: MemberPresence
    package let values: MemberValues
    package let meaning: StaticString
    /// An input key's default, as JSON text (nil: required, or a result member).
    package let defaultJSON: StaticString?
    /// Apple's name for the same field in signed payloads (`transactionId`), where it has one.
    package let appleName: StaticString?
    /// A receipt record's member: the attribute type Apple signs it as.
    package let attribute: Int64?

    @inline(__always)
    package init(_ name: StaticString, _ type: MemberType, nullable: Bool = false, presence: MemberPresence = .always,
                values: MemberValues = .any, default defaultJSON: StaticString? = nil, appleName: StaticString? = nil,
                attribute: Int64? = nil, _ meaning: StaticString) {
        self.defaultJSON = defaultJSON
        self.appleName = appleName
        self.attribute = attribute
        self.name = name
        self.type = type
        self.nullable = nullable
        self.presence = presence
        self.values = values
        self.meaning = meaning
    }
}

/// An object the description names: its members, in the order they are written.
package protocol SurfaceDescribed {
    /// The object's name in the description (`transaction`, `jws_result`).
    static var objectName: StaticString { get }
    static var meaning: StaticString { get }
    static var memberSpecs: [MemberSpec] { get }
}

/// An object whose members are the enum's cases, in the order they are written. (The records a
/// field table reads and writes, transactions and renewal infos, are described by their tables.)
package protocol SurfaceObject: SurfaceDescribed, CaseIterable, Sendable {
    var spec: MemberSpec { get }
}

extension SurfaceObject {
    package static var memberSpecs: [MemberSpec] { allCases.map(\.spec) }
}

extension SurfaceObject {
    /// The member an input key names (the config, a call), by its JSON name.
    static func member(named name: String) -> Self? { allCases.first { "\($0.spec.name)" == name } }

    /// The "unknown key" refusal, with the nearest known key as a hint.
    static func unknownKey(_ name: String, in path: String) -> String {
        "\(path): unknown key \"\(name)\"" + CallKeys.didYouMean(name, among: allCases.map { "\($0.spec.name)" })
    }
}

/// A vocabulary whose words a member takes (a verdict, an action, a state).
package protocol SurfaceWords: Sendable {
    static var surfaceWords: [String] { get }
}

extension SurfaceWords where Self: CaseIterable & RawRepresentable, RawValue == String {
    package static var surfaceWords: [String] { allCases.map(\.rawValue) }
}

extension MemberValues {
    /// The words, or nil for `.any`.
    package var words: [String]? {
        switch self {
        case .any: return nil
        case .words(let w), .open(let w): return "\(w)".split(separator: " ").map(String.init)
        case .vocabulary(let v): return v.surfaceWords
        }
    }
}

// Writing a described member. The only way a result writer names a key: a key the description
// lacks does not compile.
extension JSONWriter {
    @inline(__always) mutating func key<M: SurfaceObject>(_ m: M) { key(m.spec.name) }
    @inline(__always) mutating func field<M: SurfaceObject>(_ m: M, _ v: String?) { key(m.spec.name); string(v) }
    @inline(__always) mutating func field<M: SurfaceObject>(_ m: M, _ v: Int64?) { key(m.spec.name); int(v) }
    @inline(__always) mutating func field<M: SurfaceObject>(_ m: M, _ v: Bool?) { key(m.spec.name); bool(v) }
    mutating func field<M: SurfaceObject>(_ m: M, _ list: [String]) {
        key(m.spec.name)
        beginArray()
        for s in list { string(s) }
        endArray()
    }
    /// A member written only when it has a value.
    mutating func optional<M: SurfaceObject>(_ m: M, _ v: String?) { if let v { field(m, v) } }
    mutating func optional<M: SurfaceObject>(_ m: M, _ v: Int64?) { if let v { field(m, v) } }
    mutating func optional<M: SurfaceObject>(_ m: M, _ v: Bool?) { if let v { field(m, v) } }
}
