-- Tests for resty.iapverify, run by LuaJIT: `luajit t/test.lua REPO_ROOT LIBRARY_PATH`.
local root, library = arg[1], arg[2]
package.path = root .. "/bindings/lua/lib/?.lua;" .. package.path
local iapverify = require "resty.iapverify"
local cjson = require "cjson"

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
check(iapverify.version() == "0.1.0", "version")

-- The cdef must match the header, function by function.
local header = read(root .. "/Include/iapverify.h"):gsub("/%*.-%*/", "")
local module = read(root .. "/bindings/lua/lib/resty/iapverify.lua")
local cdef = module:match("ffi%.cdef %[%[(.-)%]%]")
local count = 0
for decl in header:gmatch("[%w_ ]+[%s%*]+iapv_[%w_]+%b();") do
    count = count + 1
    check(normalize(cdef):find(normalize(decl), 1, true) ~= nil, "cdef matches header: " .. normalize(decl))
end
check(count == 13, "the header declares 13 functions, found " .. count)

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
