// swift-tools-version: 6.0
import PackageDescription

/// Sanitizer builds (Tests/hardening/sanitizers.sh sets IAPV_SANITIZE=1) leave the sanitizer
/// runtime to the executable, so the shared library must not insist on resolving every symbol.
let sanitizing = Context.environment["IAPV_SANITIZE"] != nil

/// Linker settings for the shipped shared library: export only `iapv_*` (version script),
/// fail on unresolved symbols, and record the SONAME that C consumers link against. These are GNU
/// ld / ELF flags, so they apply on Linux only: elsewhere the manifest and the core still build
/// (a port gives the C library its own export list and install name: docs/deployment.md).
let cABILinkerSettings: [LinkerSetting] = [
    .unsafeFlags([
        "-Xlinker", "--version-script=\(Context.packageDirectory)/Sources/IAPVerifyC/exports.map",
        "-Xlinker", "-soname=libiapverify.so.1",
        "-Xlinker", "-z", "-Xlinker", "now",  // bind every symbol at load time (full RELRO with relro)
    ] + (sanitizing ? [] : ["-Xlinker", "-z", "-Xlinker", "defs"]), .when(platforms: [.linux]))
]

/// The DocC plugin, only for `make docc` (it sets IAPV_DOCC=1): packages that depend on this one,
/// and every other build here, neither resolve nor fetch it.
let documentationDependencies: [Package.Dependency] = Context.environment["IAPV_DOCC"] != nil
    ? [.package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0")] : []

let package = Package(
    name: "iapverify",
    products: [
        .library(name: "iapverify", type: .dynamic, targets: ["IAPVerifyC"]),
        // The Swift core, for Swift hosts that want the typed API rather than the C ABI.
        .library(name: "IAPVerifyCore", targets: ["IAPVerify"]),
        .executable(name: "iapverify-cli", targets: ["iapverify-cli"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ] + documentationDependencies,
    targets: [
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CJansson", pkgConfig: "jansson", providers: [.apt(["libjansson-dev"])]),
        // simdjson (Debian's libsimdjson-dev) behind a small C API: the JSON bodies Apple sends.
        .target(
            name: "CJSONTape",
            path: "Sources/CJSONTape",
            linkerSettings: [.linkedLibrary("simdjson")]
        ),
        // The AVX2 bulk of base64 decoding (receipts arrive as base64), with no dependency.
        .target(name: "CFastBase64", path: "Sources/CFastBase64"),
        // Include/iapverify.h as a module: the C boundary builds against the header it implements.
        .systemLibrary(name: "CIAPVerifyHeader"),
        .target(
            name: "IAPVerify",
            // No swift-asn1: it imports FoundationEssentials, which then came with the library.
            // (No unsafe flags either, so that IAPVerifyCore stays usable as a versioned dependency:
            // Tests/c/run.sh checks that Foundation, the regex modules and libdispatch stay out.)
            dependencies: ["COpenSSL", "CJansson", "CJSONTape", "CFastBase64"],
            exclude: ["README.md"] + ["Receipt", "Trust", "Policy", "VerifyReceipt", "StoreKit2", "Entitlements", "JSON",
                                      "Encoding", "Verifier", "ServerAPI", "Vocabulary"].map { "\($0)/README.md" }
        ),
        .target(
            name: "IAPVerifyC",
            dependencies: ["IAPVerify", "CIAPVerifyHeader"],
            exclude: ["exports.map"],
            linkerSettings: cABILinkerSettings
        ),
        // libFuzzer targets (Fuzz/run.sh builds this with --sanitize=fuzzer; a plain build is inert).
        .executableTarget(
            name: "iapverify-fuzz",
            dependencies: ["IAPVerify"],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        .executableTarget(
            name: "iapverify-cli",
            dependencies: ["IAPVerify", "CIAPVerifyHeader", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            // stdio globals (stdin/stdout/stderr) are fine in a single-threaded command.
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        .testTarget(
            name: "IAPVerifyTests",
            // swift-asn1 stays as the oracle BERTree is checked against (BERTreeTests).
            dependencies: ["IAPVerify", "IAPVerifyC", "CIAPVerifyHeader", .product(name: "SwiftASN1", package: "swift-asn1")],
            resources: [.copy("Fixtures")],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
    ],
    cxxLanguageStandard: .cxx17
)
