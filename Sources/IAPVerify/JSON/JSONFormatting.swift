// Pretty-printing result JSON for people (the CLI's --pretty), through Jansson.

import CJansson
import Glibc

package enum JSONFormatting {   // the CLI's pretty printer
    /// Re-indents a JSON document, keeping key order. Returns the input unchanged if it cannot.
    package static func pretty(_ json: [UInt8]) -> [UInt8] {
        var error = json_error_t()
        let parsed = json.withUnsafeBytes { raw -> UnsafeMutablePointer<json_t>? in
            guard let base = raw.baseAddress else { return nil }
            return json_loadb(base.assumingMemoryBound(to: CChar.self), raw.count, 0, &error)
        }
        guard let parsed else { return json }
        defer { json_decref(parsed) }
        let flags = Int(JSON_PRESERVE_ORDER) | 2  // JSON_INDENT(2)
        guard let text = json_dumps(parsed, flags) else { return json }
        defer { free(text) }
        return Array(UnsafeRawBufferPointer(start: text, count: strlen(text)))
    }
}
