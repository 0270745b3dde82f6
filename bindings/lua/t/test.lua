-- Tests for resty.iapverify, run by LuaJIT: `luajit t/test.lua REPO_ROOT LIBRARY_PATH`.
local root, library = arg[1], arg[2]
-- IAPVERIFY_LUA_INSTALLED=1 (t/rock.sh): test the module as luarocks installed it, on LUA_PATH.
local installed = os.getenv("IAPVERIFY_LUA_INSTALLED") == "1"
if not installed then package.path = root .. "/bindings/lua/lib/?.lua;" .. package.path end
local module_path = package.searchpath("resty.iapverify", package.path)
local iapverify = require "resty.iapverify"
local cjson = require "cjson"
local ffi = require "ffi"

local passed, failed = 0, 0
local function check(cond, what)
    if cond then passed = passed + 1 else failed = failed + 1; io.stderr:write("FAIL: ", what, "\n") end
end
local function read(path)
    local f = assert(io.open(path, "rb"))
    local data = f:read("*a")
    f:close()
    return data
end
local function normalize(s) return (s:gsub("%s+", " "):gsub("%s*([%(%),;%*])%s*", "%1")) end

assert(iapverify.load(library))
local version = read(root .. "/VERSION"):gsub("%s+$", "")
check(iapverify.version() == version, "library version is VERSION")
check(iapverify._VERSION == version, "resty.iapverify _VERSION is VERSION")
if installed then
    check(module_path and not module_path:find(root .. "/bindings/", 1, true), "installed module under test: " .. tostring(module_path))
end

-- The cdef must match the header, function by function.
local header = read(root .. "/Include/iapverify.h"):gsub("/%*.-%*/", "")
local module = read(root .. "/bindings/lua/lib/resty/iapverify.lua")
local cdef = module:match("ffi%.cdef %[%[(.-)%]%]")
local count = 0
for decl in header:gmatch("[%w_ ]+[%s%*]+iapv_[%w_]+%b();") do
    count = count + 1
    check(normalize(cdef):find(normalize(decl), 1, true) ~= nil, "cdef matches header: " .. normalize(decl))
end
local declared = 0
for _ in cdef:gmatch("[%s%*]iapv_[%w_]+%(") do declared = declared + 1 end
check(count == declared, "the header declares " .. count .. " functions, the cdef " .. declared)

-- The shared expectations, as every binding answers them.
local doc = cjson.decode(read(root .. "/Tests/shared/expectations.json"))
local fixtures = root .. "/" .. doc.fixtures .. "/"
for _, case in ipairs(doc.cases) do
    local v = assert(iapverify.new(case.config))
    local input = read(fixtures .. case.input)
    local options = next(case.options) and case.options or nil
    local res, err
    if case.kind == "receipt" then
        res, err = v:verify_receipt(input, case.now_ms, options)
    else
        res, err = v:interpret_response(input, case.now_ms, options)
    end
    check(res ~= nil, case.name .. ": " .. tostring(err))
    if res then
        check(res.verdict == case.verdict, case.name .. ": verdict " .. res.verdict)
        check(res.valid == (case.verdict == "valid"), case.name .. ": valid")
        local got = {}
        for _, e in ipairs(res.result.entitlements) do
            got[#got + 1] = table.concat({ e.id, tostring(e.active), e.state, tostring(e.transaction_id) }, " ")
        end
        local want = {}
        for _, e in ipairs(case.entitlements) do
            want[#want + 1] = table.concat({ e.id, tostring(e.active), e.state, tostring(e.transaction_id) }, " ")
        end
        check(table.concat(got, "|") == table.concat(want, "|"), case.name .. ": entitlements " .. table.concat(got, "|"))
        local deliver = {}
        for _, d in ipairs(res.result.delivery.to_deliver) do deliver[#deliver + 1] = d.transaction_id end
        check(table.concat(deliver, ",") == table.concat(case.to_deliver, ","), case.name .. ": to_deliver")
        if case.kind == "response" then
            check(res.result.action == case.action and res.result.status == case.status, case.name .. ": action/status")
        end
    end
    v:close()
end

-- Errors come back as nil, "IAPV_E_...: message".
local v, err = iapverify.new({ bundle_id = "a", colour = "red" })
check(v == nil and err:find("^IAPV_E_CONFIG: .*colour") ~= nil, "config error names the key: " .. tostring(err))
v = assert(iapverify.new('{"bundle_id":"*","max_input_bytes":100}'))
local res
res, err = v:verify_receipt(("x"):rep(101), 0)
check(res == nil and err:find("^IAPV_E_TOO_LARGE") ~= nil, "too large")
res, err = v:verify_receipt("x", 0, { colour = 1 })
check(res == nil and err:find("^IAPV_E_INVALID_ARGUMENT") ~= nil, "bad options")
res = assert(v:verify_receipt("garbage", 0))
check(res.verdict == "malformed" and not res.valid, "garbage is malformed")
res = assert(v:compute_entitlements('{"transactions":[]}', 0))
check(res.valid, "entitlements call")
v:close()
res, err = v:verify_receipt("x", 0)
check(res == nil and err:find("closed") ~= nil, "closed verifier")

-- Bad arguments: each is nil and "IAPV_E_INVALID_ARGUMENT: ...", never a Lua error or a crash.
local function refused(what, pattern, fn, ...)
    local ok, res2, err2 = pcall(fn, ...)
    check(ok, what .. ": raised " .. tostring(res2))
    if ok then
        check(res2 == nil and type(err2) == "string" and err2:find("^IAPV_E_INVALID_ARGUMENT: ") ~= nil
              and err2:find(pattern, 1, true) ~= nil, what .. ": " .. tostring(err2))
    end
end
local closed = v
for _, name in ipairs({ "verify_receipt", "interpret_response", "compute_entitlements", "verify_jws" }) do
    refused("closed " .. name, "the verifier is closed", closed[name], closed, "{}", 0)
end
check(closed:close() == true and closed:close() == true, "close twice")

v = assert(iapverify.new({ bundle_id = "*" }))
refused("method called with a dot", "call methods with a colon", v.verify_receipt, "x", 0)
refused("close called with a dot", "call methods with a colon", v.close)
refused("method on another table", "not a verifier", v.verify_receipt, { handle = true }, "x", 0)
local not_strings = { { "nil", nil }, { "number", 12345 }, { "table", { 1, 2 } }, { "boolean", true },
                      { "function", print }, { "cdata", ffi.new("int[1]") } }
for _, case in ipairs(not_strings) do
    refused("receipt " .. case[1], "receipt must be a string, not " .. case[1], v.verify_receipt, v, case[2], 0)
    refused("token " .. case[1], "token must be a string, not " .. case[1], v.verify_jws, v, case[2], 0)
    refused("body " .. case[1], "body must be a string, not " .. case[1], v.interpret_response, v, case[2], 0)
    if case[1] ~= "table" then
        refused("entitlements input " .. case[1], "input must be a table or JSON text, not " .. case[1],
                v.compute_entitlements, v, case[2], 0)
        refused("config " .. case[1], "config must be a table or JSON text, not " .. case[1], iapverify.new, case[2])
    end
    if case[1] ~= "nil" and case[1] ~= "table" then
        refused("options " .. case[1], "options must be a table or JSON text", v.verify_receipt, v, "x", 0, case[2])
    end
end
refused("options that JSON cannot carry", "options cannot be encoded as JSON", v.verify_receipt, v, "x", 0, { f = print })
refused("config that JSON cannot carry", "config cannot be encoded as JSON", iapverify.new, { bundle_id = print })
local bad_now = { { "missing", nil, "now_ms is required" }, { "string", "1745000000000", "must be a number or an int64_t, not string" },
                  { "table", {}, "not table" }, { "boolean", true, "not boolean" }, { "NaN", 0 / 0, "now_ms is NaN" },
                  { "2^63", 2 ^ 63, "signed 64-bit" }, { "2^64", 2 ^ 64, "signed 64-bit" }, { "huge", math.huge, "signed 64-bit" },
                  { "below -2^63", -2 ^ 64, "signed 64-bit" }, { "-huge", -math.huge, "signed 64-bit" },
                  { "uint64 2^63", 0x8000000000000000ULL, "signed 64-bit" }, { "uint64 max", 0xffffffffffffffffULL, "signed 64-bit" },
                  { "int32 cdata", ffi.new("int32_t", 5), "int64_t, not ctype<int>" } }
for _, case in ipairs(bad_now) do
    for _, name in ipairs({ "verify_receipt", "interpret_response", "compute_entitlements", "verify_jws" }) do
        refused("now_ms " .. case[1] .. " in " .. name, case[3], v[name], v, "{}", case[2])
    end
end
-- now_ms inside int64 reaches the library: the largest double below 2^63, int64 cdata, uint64 that
-- fits, and a fraction (rounded down). A negative time is the library's own IAPV_E_INVALID_ARGUMENT.
for _, now in ipairs({ 2 ^ 63 - 1024, 0x7fffffffffffffffLL, 1745000000000ULL, 1745000000000.75 }) do
    res, err = v:verify_receipt("x", now)
    check(res ~= nil and res.verdict == "malformed", "now_ms " .. tostring(now) .. ": " .. tostring(err))
end
for _, now in ipairs({ -1, -0.5, -2 ^ 63, -0x7fffffffffffffffLL - 1 }) do
    res, err = v:verify_receipt("x", now)
    check(res == nil and err:find("^IAPV_E_INVALID_ARGUMENT: now_ms") ~= nil, "negative now_ms " .. tostring(now) .. ": " .. tostring(err))
end
check(iapverify.entitlement(nil, "x") == nil and iapverify.entitlement({}, "x") == nil, "entitlement of nothing")
v:close()

-- StoreKit 2
v = assert(iapverify.new({ bundle_id = "*", environments = { "Sandbox" } }))
local token = read(fixtures .. "jws/transaction_autorenew_sandbox_2022-11.jws"):gsub("%s+$", "")
res = assert(v:verify_jws(token, 1893456000000))
check(res.valid and res.result.kind == "transaction", "verify_jws: " .. res.verdict)
v:close()

-- A loop to shake out leaks or crashes in the FFI glue.
v = assert(iapverify.new({ bundle_id = "com.dashedspace.analytics" }))
local receipt = read(fixtures .. "receipts/production_2025-04-18_com.dashedspace.analytics_sha256.der")
local valid = 0
for _ = 1, 2000 do
    if v:verify_receipt(receipt, 1745000000000).valid then valid = valid + 1 end
end
check(valid == 2000, "2000 verifications")

print(("lua-test: %d passed, %d failed"):format(passed, failed))
os.exit(failed == 0 and 0 or 1)
