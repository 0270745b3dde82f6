import ArgumentParser
import IAPVerify

struct APIResponseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "api-response", abstract: "Interpret an App Store Server API answer: next action, verified transactions, entitlements.",
        discussion: "--options must say which call answered: {\"endpoint\": ..., \"environment\": ..., \"http_status\": ...}. Manual: docs/server-api.md.")

    @Argument(help: "Answer body file (may be empty), or - for stdin.")
    var file: String

    @OptionGroup var common: VerifierOptions

    @Option(name: .long, help: "Required: which call answered, as a JSON file with at least {\"endpoint\": ..., \"http_status\": ...} (docs/server-api.md).")
    var options: String

    func run() throws {
        try common.verify(try IO.json(try IO.read(file), from: file), checksBundle: true, options: options) {
            (verifier, raw, options: APIResponseOptions, now) throws(IAPVFailure) in try verifier.interpretAPIResponse(raw, options: options, nowMs: now)
        }
    }
}
