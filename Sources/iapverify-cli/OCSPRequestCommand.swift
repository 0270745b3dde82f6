import ArgumentParser
import IAPVerify

struct OCSPRequestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ocsp-request", abstract: "Print the OCSP request and responder URL for the signing certificate of a JWS or receipt.",
        discussion: "POST the DER (base64-decode \"request\") to \"responder_url\" with Content-Type application/ocsp-request, then pass the answer, base64, in --options {\"ocsp_responses\": [...]}. Manual: docs/revocation.md.")

    @Argument(help: "A compact JWS or a receipt (DER, base64 or PEM), or - for stdin.")
    var file: String

    @OptionGroup var common: VerifierOptions
    @OptionGroup var call: OptionsFile

    func run() throws {
        let read = try IO.read(file)
        // A JWS is verified as `jws` would, anything else as `receipt` would (Input.kind).
        let isJWS = Input.kind(of: read).kind == .jws
        let input = try isJWS ? IO.jws(read, from: file) : IO.receipt(read, from: file)
        let now = try common.nowMs()
        // The request is for the signing certificate, whatever the bundle: nothing to say about it.
        let verifier = try common.makeVerifier(checksBundle: false)
        let revocation: RevocationReport?
        let verdict: Verdict
        let reason: String
        do {
            if isJWS {
                let options: JWSOptions = try common.callOptions(call.options, for: verifier)
                let r = try input.withUnsafeBytes { raw throws(IAPVFailure) in try verifier.verifyJWS(raw, options: options, nowMs: now) }
                (revocation, verdict, reason) = (r.revocation, r.verdict, r.judgement.reason)
            } else {
                let options: ReceiptOptions = try common.callOptions(call.options, for: verifier)
                let r = try input.withUnsafeBytes { raw throws(IAPVFailure) in try verifier.verifyReceipt(raw, options: options, nowMs: now) }
                (revocation, verdict, reason) = (r.revocation, r.verdict, r.judgement.reason)
            }
        } catch let failure as IAPVFailure {
            throw UsageFailure(description: "\(failure.status.name): \(failure.message)")
        }
        guard let revocation, let request = revocation.request else {
            throw UsageFailure(description: "no OCSP request: the chain was not verified (\(verdict.rawValue): \(reason))")
        }
        var w = "{\"responder_url\":"
        w += revocation.responderURL.map { "\"\($0)\"" } ?? "null"
        w += ",\"request\":\"\(request)\",\"status\":\"\(revocation.status.name)\",\"verdict\":\"\(verdict.rawValue)\"}"
        IO.printJSON(Array(w.utf8), pretty: common.pretty)
    }
}
