import ArgumentParser
import IAPVerify

struct ResponseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "response", abstract: "Interpret a /verifyReceipt JSON body: status, next action, entitlements.",
        discussion: "Manual: docs/cli.md.")

    @Argument(help: "Response body file, or - for stdin.")
    var file: String

    @Option(name: .long, help: "Which /verifyReceipt host answered: Production or Sandbox.")
    var environment: String?

    @Option(name: .long, help: ArgumentHelp("Deprecated: the old name of --environment.", visibility: .hidden))
    var endpoint: String?

    @Option(name: .long, help: "Which attempt this was (1-based), for the retry back-off.")
    var attempt: Int64?

    @OptionGroup var common: VerifierOptions
    @OptionGroup var call: OptionsFile

    func run() throws {
        try common.verify(try IO.json(try IO.read(file), from: file), checksBundle: true, options: call.options, adjust: flags) {
            (verifier, raw, options: ResponseOptions, now) throws(IAPVFailure) in try verifier.interpretResponse(raw, options: options, nowMs: now)
        }
    }

    /// --environment (or --endpoint) and --attempt over what the options file says.
    func flags(_ options: inout ResponseOptions) throws {
        if let endpoint {
            IO.warn("--endpoint is deprecated: use --environment \(endpoint.prefix(1).uppercased() + endpoint.dropFirst().lowercased()); --endpoint goes in the next release")
        }
        if let name = environment ?? endpoint {
            guard let known = ServerEnvironment(anyCase: name), known != .localTesting else {
                throw UsageFailure(description: "--environment must be Production or Sandbox, got \(name)")
            }
            options.environment = known
        }
        if let attempt {
            guard attempt >= 1 else { throw UsageFailure(description: "--attempt must be >= 1") }
            options.attempt = attempt
        }
    }
}
