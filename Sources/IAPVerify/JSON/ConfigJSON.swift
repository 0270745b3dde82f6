// Reading small, human-written JSON (the config, the options, API calls, signer config, offer
// requests) through Jansson, whose errors name the line and column. Bodies Apple sends go
// through BodyJSON.swift instead. A ConfigConfigJSONDocument owns the parsed tree; ConfigConfigJSONValue is
// a borrowed view that must not outlive it.

import CJansson
import Glibc

/// A parsed JSON document. Owns the Jansson tree and frees it on deinit.
final class ConfigJSONDocument {
    let root: ConfigJSONValue

    /// Parses `bytes` strictly: duplicate keys and NUL characters are rejected.
    /// - Parameter what: names the input in error messages ("config", "options").
    init(bytes: UnsafeRawBufferPointer, what: String, status: StatusCode) throws(IAPVFailure) {
        var error = json_error_t()
        let flags = Int(JSON_REJECT_DUPLICATES)
        guard let base = bytes.baseAddress, bytes.count > 0 else {
            throw IAPVFailure(status, "\(what): empty input; expected a JSON object")
        }
        guard let parsed = json_loadb(base.assumingMemoryBound(to: CChar.self), bytes.count, flags, &error) else {
            let text = withUnsafeBytes(of: error.text) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            throw IAPVFailure(status, "\(what): invalid JSON at line \(error.line), column \(error.column): \(text)")
        }
        root = ConfigJSONValue(raw: parsed)
    }

    deinit { json_decref(root.raw) }

    static func parse(_ bytes: UnsafeRawBufferPointer, what: String, status: StatusCode) -> Result<ConfigJSONDocument, IAPVFailure> {
        do {
            return .success(try ConfigJSONDocument(bytes: bytes, what: what, status: status))
        } catch {
            return .failure(error)
        }
    }
}

/// A borrowed JSON value inside a `ConfigJSONDocument`.
struct ConfigJSONValue {
    let raw: UnsafeMutablePointer<json_t>

    typealias Kind = JSONKind

    var kind: Kind {
        switch cjansson_type(raw) {
        case Int32(JSON_OBJECT.rawValue): return .object
        case Int32(JSON_ARRAY.rawValue): return .array
        case Int32(JSON_STRING.rawValue): return .string
        case Int32(JSON_INTEGER.rawValue): return .integer
        case Int32(JSON_REAL.rawValue): return .real
        case Int32(JSON_TRUE.rawValue), Int32(JSON_FALSE.rawValue): return .bool
        default: return .null
        }
    }

    var typeName: String { kind.typeName }
    var isNull: Bool { kind == .null }

    var string: String? {
        guard kind == .string, let p = json_string_value(raw) else { return nil }
        let n = json_string_length(raw)
        return p.withMemoryRebound(to: UInt8.self, capacity: n) {
            String(decoding: UnsafeBufferPointer(start: $0, count: n), as: UTF8.self)
        }
    }

    var integer: Int64? { kind == .integer ? Int64(json_integer_value(raw)) : nil }
    var bool: Bool? { kind == .bool ? (cjansson_type(raw) == Int32(JSON_TRUE.rawValue)) : nil }
    var real: Double? { kind == .real ? json_real_value(raw) : nil }

    /// The array elements, or nil when this is not an array.
    var array: [ConfigJSONValue]? {
        guard kind == .array else { return nil }
        let n = json_array_size(raw)
        var out: [ConfigJSONValue] = []
        out.reserveCapacity(n)
        for i in 0..<n {
            if let item = json_array_get(raw, i) { out.append(ConfigJSONValue(raw: item)) }
        }
        return out
    }

    /// The object members in document order, or nil when this is not an object.
    var members: [(key: String, value: ConfigJSONValue)]? {
        guard kind == .object else { return nil }
        var out: [(key: String, value: ConfigJSONValue)] = []
        var iter = json_object_iter(raw)
        while let it = iter {
            if let k = json_object_iter_key(it), let v = json_object_iter_value(it) {
                let len = json_object_iter_key_len(it)
                let key = k.withMemoryRebound(to: UInt8.self, capacity: len) {
                    String(decoding: UnsafeBufferPointer(start: $0, count: len), as: UTF8.self)
                }
                out.append((key, ConfigJSONValue(raw: v)))
            }
            iter = json_object_iter_next(raw, it)
        }
        return out
    }

    /// Lookup by a literal key: no String bridging on the hot path.
    subscript(literal key: StaticString) -> ConfigJSONValue? {
        guard kind == .object else { return nil }
        let name = UnsafeRawPointer(key.utf8Start).assumingMemoryBound(to: CChar.self)
        guard let v = json_object_get(raw, name) else { return nil }
        return ConfigJSONValue(raw: v)
    }

    subscript(key: String) -> ConfigJSONValue? {
        guard kind == .object, let v = json_object_get(raw, key) else { return nil }
        return ConfigJSONValue(raw: v)
    }

    /// This value written out as compact JSON (for a part of the options that the body reader
    /// decodes, such as `renewal_info`, which has the same shape in a /verifyReceipt body).
    var serialised: [UInt8] {
        guard let text = json_dumps(raw, Int(JSON_COMPACT) | Int(JSON_PRESERVE_ORDER)) else { return [] }
        defer { free(text) }
        return Array(UnsafeRawBufferPointer(start: text, count: strlen(text)))
    }
}
