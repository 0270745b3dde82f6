import ArgumentParser
import IAPVerify

struct SignCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign", abstract: "Sign a promotional offer (V1 or V2), an introductory offer eligibility or an Advanced Commerce request.",
        discussion: "REQUEST.json: {\"kind\": ..., \"nonce\": \"<UUID>\", ...}. Manual: docs/offer-signatures.md.")

    @Argument(help: "Signature request JSON file, or - for stdin.")
    var file: String

    @OptionGroup var signing: SignerOptions

    func run() throws {
        try signing.run(file) { (s, raw, nowMs) throws(IAPVFailure) in try s.sign(raw, nowMs: nowMs).resultJSON() }
    }
}
