import ArgumentParser
import IAPVerify

struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect", abstract: "Decode a receipt without verifying it (marked \"trusted\": false).",
        discussion: "Manual: docs/cli.md.")

    @Argument(help: "Receipt file (DER, base64 or PEM PKCS7; or an iOS 6 transaction receipt), or - for stdin.")
    var file: String

    @Flag(name: .long, help: "Indent the result JSON.")
    var pretty = false

    func run() throws {
        // An iOS 6 style transaction receipt (a base64 property list) is read, not inspected.
        let raw = try IO.read(file)
        if raw.withUnsafeBytes({ TransactionReceiptReader.looksLikeOne($0) }) {
            let report = raw.withUnsafeBytes { TransactionReceiptReader.read($0) }
            IO.printJSON(report.resultJSON(), pretty: pretty)
            if !report.isRead { throw ExitCode(1) }
            return
        }
        let input = try IO.receipt(raw, from: file)
        let (json, decoded) = input.withUnsafeBytes { ReceiptInspector.inspect($0) }
        IO.printJSON(json, pretty: pretty)
        if !decoded { throw ExitCode(1) }
    }
}
