import ArgumentParser
import IAPVerify

struct FieldsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fields", abstract: "Print the description of the library's surface: every result document, option and config key.",
        discussion: "From the core's own description: what the JSON Schemas and the docs tables are generated from and the bindings are checked against. Manual: docs/cli.md.")

    @Flag(name: .long, help: "Print JSON (the only format).")
    var json = false

    @Flag(name: .long, help: "Indent the JSON.")
    var pretty = false

    func run() throws {
        IO.printJSON(Array(FieldList.json().utf8), pretty: pretty)
    }
}

/// The core's tables and enums as one JSON document, in their own order (the same core always
/// gives the same bytes).
enum FieldList {
    static func json() -> String {
        let records = FieldCatalog.records.map { "\"\($0.record)\":" + fields($0.fields) }
        // The whole description (documents, objects, options, config), then the record tables
        // and vocabularies the older checks read.
        let surface = String(decoding: SurfaceCatalog.json().dropLast(), as: UTF8.self)
        return surface + ",\"records\":{" + records.joined(separator: ",") + "},"
            + "\"verdicts\":" + words(Verdict.allCases.map(\.rawValue)) + ","
            + "\"inspect_verdicts\":" + words([ReceiptReport.unverifiedVerdict]) + ","
            + "\"actions\":" + words(NextAction.allCases.map(\.rawValue)) + ","
            + "\"notification_actions\":" + words(NotificationAction.every.map(\.rawValue)) + ","
            + "\"realtime_actions\":" + words(RealtimeAction.every.map(\.rawValue)) + ","
            + "\"entitlement_states\":" + words(EntitlementState.allCases.map(\.rawValue)) + ","
            + "\"notification_effects\":" + words(NotificationEffect.allCases.map(\.rawValue)) + ","
            + "\"environments\":" + words(PurchaseEnvironment.allCases.map(\.rawValue)) + ","
            + "\"server_environments\":" + words(ServerEnvironment.allCases.map(\.rawValue)) + "}"
    }

    private static func fields(_ list: [FieldEntry]) -> String {
        "[" + list.map { f in
            "{\"name\":\(text(f.name)),\"type\":\(text(f.type)),\"written\":\(text(f.written))"
                + (f.attribute.map { ",\"attribute\":\($0)" } ?? "")
                + (f.fields.isEmpty ? "" : ",\"fields\":" + fields(f.fields)) + "}"
        }.joined(separator: ",") + "]"
    }

    private static func words(_ list: [String]) -> String { "[" + list.map(text).joined(separator: ",") + "]" }

    private static func text(_ s: String) -> String { "\"" + StateDiagram.escaped(s) + "\"" }
}
