import ArgumentParser
import IAPVerify

struct APIRequestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "api-request", abstract: "Build the exact HTTP request for an App Store Server API call (no network).",
        discussion: "CALL.json names the endpoint and its parameters; the output is method, url, headers and body to send as is. Manual: docs/server-api.md.")

    @Argument(help: "Call JSON file, e.g. {\"endpoint\": \"transaction_history\", \"transaction_id\": \"...\"}, or - for stdin.")
    var file: String

    @OptionGroup var signing: SignerOptions

    func run() throws {
        try signing.run(file) { (s, raw, nowMs) throws(IAPVFailure) in try s.apiRequest(raw, nowMs: nowMs).resultJSON() }
    }
}
