// The libFuzzer entry point. libFuzzer provides main(), so this file holds no top-level state:
// everything lives in Harness (lazily initialised statics).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    Harness.run(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
