// A purchase service on Hummingbird 2 that links the iapverify core as a Swift library (the
// IAPVerifyCore product, module IAPVerify): no C ABI in between.
//
//     PurchaseServer --config verifier.json [--host 127.0.0.1] [--port 8080]
//
// POST /transactions          {"user_id", "signed_transaction"}: a StoreKit 2 signed transaction
//                             the app sends after a purchase; delivered once, to its owner only
// POST /apple/notifications   {"signedPayload"}: App Store Server Notifications V2
// GET  /users/{id}/entitlements
//
// IAPV_EXAMPLE_NOW_MS (tests only) fixes the clock every decision uses, in Unix milliseconds.

import Foundation
import Hummingbird
import IAPVerify

@main
enum PurchaseServer {
    static func main() async throws {
        let arguments = Arguments(CommandLine.arguments.dropFirst())

        // The verifier: built once from the config, shared by every request (it is Sendable).
        let verifier: Verifier
        do {
            let config = try Array(Data(contentsOf: URL(fileURLWithPath: arguments.configPath)))
            verifier = try config.withUnsafeBytes { raw in try Verifier(json: raw) }
        } catch let failure as IAPVFailure {
            fail("\(arguments.configPath): \(failure.status.name): \(failure.message)")   // the message names the key
        } catch {
            fail("cannot read \(arguments.configPath): \(error.localizedDescription)")
        }

        let clock = Clock(fixedMs: ProcessInfo.processInfo.environment["IAPV_EXAMPLE_NOW_MS"].map { text in
            guard let ms = Int64(text), ms > 10_000_000_000 else { fail("IAPV_EXAMPLE_NOW_MS must be Unix milliseconds, got \(text)") }
            return ms
        })
        if let fixed = clock.fixedMs { log("fixed_clock", ["now_ms": String(fixed), "note": "IAPV_EXAMPLE_NOW_MS is for tests only"]) }

        let routes = Routes(verifier: verifier, store: PurchaseStore(verifier: verifier), clock: clock)
        let (host, port) = (arguments.host, arguments.port)
        let app = Application(
            router: routes.router(),
            configuration: .init(address: .hostname(host, port: port), serverName: "iapverify-swift-example"),
            onServerRunning: { channel in
                // The line run-tests.sh waits for; with --port 0 it tells which port was taken.
                say("listening on \(host):\(channel.localAddress?.port ?? port)")
            }
        )
        try await app.runService()
    }
}

/// The command line: --config FILE (required), --host, --port (0: any free port).
struct Arguments {
    var configPath = ""
    var host = "127.0.0.1"
    var port = 8080

    init(_ argv: ArraySlice<String>) {
        var rest = argv
        var config: String?
        while let argument = rest.popFirst() {
            switch argument {
            case "--config": config = rest.popFirst()
            case "--host":
                guard let address = rest.popFirst() else { fail("--host needs an address") }
                host = address
            case "--port":
                guard let text = rest.popFirst(), let n = Int(text), (0...65535).contains(n) else { fail("--port needs 0-65535") }
                port = n
            case "-h", "--help":
                say("usage: PurchaseServer --config FILE.json [--host 127.0.0.1] [--port 8080]   (--port 0: any free port)")
                exit(0)
            default: fail("unknown argument \(argument) (try --help)")
            }
        }
        guard let config else { fail("--config FILE.json is required: the verifier config (docs/config.md)") }
        configPath = config
    }
}

/// The library reads no clock: every call is given this one.
struct Clock: Sendable {
    /// IAPV_EXAMPLE_NOW_MS, for tests only.
    let fixedMs: Int64?

    func nowMs() -> Int64 {
        fixedMs ?? Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
    }
}

/// One JSON object per line on stderr: the event and its fields.
func log(_ event: String, _ fields: [String: String] = [:]) {
    var line = fields
    line["event"] = event
    if let data = try? JSONSerialization.data(withJSONObject: line, options: [.sortedKeys]) {
        FileHandle.standardError.write(data + Data("\n".utf8))
    }
}

/// A line on stdout, written at once (not held in a buffer while stdout is a pipe).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("PurchaseServer: \(message)\n".utf8))
    exit(2)
}
