// The value kinds of both JSON readers, in one place.

/// The kinds of JSON value both readers (simdjson's tape and Jansson) report.
enum JSONKind {
    case object, array, string, integer, real, bool, null

    /// For messages: "expected a string, got an array".
    var typeName: String {
        switch self {
        case .object: return "an object"
        case .array: return "an array"
        case .string: return "a string"
        case .integer: return "an integer"
        case .real: return "a real number"
        case .bool: return "a boolean"
        case .null: return "null"
        }
    }
}
