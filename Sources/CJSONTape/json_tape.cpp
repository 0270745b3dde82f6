// simdjson behind the small C API of json_tape.h: parse, the strictness checks simdjson leaves to
// its callers, and a per-thread list of idle parsers so that a parse allocates nothing once warm.

#include "json_tape.h"

#include <simdjson.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

static_assert(simdjson::SIMDJSON_VERSION_MAJOR == 3, "json_tape.h reads simdjson 3's tape layout");

namespace {

using simdjson::dom::parser;

// Jansson's nesting limit, so that config-parsed and body-parsed JSON nest alike.
constexpr size_t max_depth = 2048;
// Idle parsers kept per thread, and the largest input a kept parser may be sized for: a parser
// holds about 14 bytes per input byte, so bigger ones are returned to the allocator at once.
constexpr size_t idle_per_thread = 2;
constexpr size_t keep_capacity = 4u << 20;

struct IdleParsers {
    std::vector<parser *> list;
    ~IdleParsers() {
        for (parser *p : list) delete p;
    }
};
thread_local IdleParsers idle;

parser *take_parser(size_t length) {
    parser *p = nullptr;
    if (!idle.list.empty()) {
        p = idle.list.back();
        idle.list.pop_back();
    } else {
        p = new (std::nothrow) parser();
        if (p == nullptr) return nullptr;
    }
    if (p->capacity() < length || p->max_depth() != max_depth) {
        size_t capacity = std::max<size_t>(length, 4096);
        if (p->allocate(capacity, max_depth) != simdjson::SUCCESS) {
            delete p;
            return nullptr;
        }
    }
    return p;
}

void give_back(parser *p) {
    if (idle.list.size() < idle_per_thread && p->capacity() <= keep_capacity) {
        idle.list.push_back(p);
    } else {
        delete p;
    }
}

constexpr uint64_t value_mask = 0x00FFFFFFFFFFFFFFull;

std::string_view string_at(const simdjson::dom::document &doc, uint32_t at) {
    const uint8_t *p = doc.string_buf.get() + (doc.tape[at] & value_mask);
    uint32_t n;
    memcpy(&n, p, sizeof n);
    return std::string_view(reinterpret_cast<const char *>(p + sizeof n), n);
}

// The same for an object with many keys: all of them sorted, then neighbours compared.
bool has_duplicate_key_sorted(const simdjson::dom::document &doc, uint32_t at, uint32_t end) {
    json_tape_view t{doc.tape.get(), doc.string_buf.get()};
    thread_local std::vector<std::string_view> keys;
    keys.clear();
    for (uint32_t i = at + 1; i < end; i = json_tape_after(t, i + 1)) keys.push_back(string_at(doc, i));
    std::sort(keys.begin(), keys.end());
    return std::adjacent_find(keys.begin(), keys.end()) != keys.end();
}

// True when some key of the object at `at` appears twice.
bool has_duplicate_key(const simdjson::dom::document &doc, uint32_t at) {
    json_tape_view t{doc.tape.get(), doc.string_buf.get()};
    uint32_t end = json_tape_end(t, at);
    // Up to 32 keys (every object Apple sends): kept on the stack, each with a 6-bit signature
    // (its length and three bytes) in a 64-bit mask, so that keys are compared only when their
    // signatures meet and distinct keys cost one test each. (A per-thread list cost a TLS lookup
    // per object in a shared library.)
    std::string_view keys[32];
    uint8_t signature[32];
    uint64_t seen = 0;
    size_t n = 0;
    for (uint32_t i = at + 1; i < end; i = json_tape_after(t, i + 1)) {
        if (n == 32) return has_duplicate_key_sorted(doc, at, end);
        const std::string_view k = string_at(doc, i);
        const size_t len = k.size();
        const unsigned mix = len == 0 ? 0
            : unsigned(len * 7 + uint8_t(k[0]) * 3 + uint8_t(k[len - 1]) + uint8_t(k[len >> 1]) * 5);
        const uint8_t s = uint8_t((mix ^ (mix >> 6)) & 63);
        if (seen & (uint64_t(1) << s)) {
            for (size_t a = 0; a < n; a++)
                if (signature[a] == s && keys[a] == k) return true;
        }
        seen |= uint64_t(1) << s;
        keys[n] = k;
        signature[n] = s;
        n++;
    }
    return false;
}

// What simdjson accepts but the project's JSON rules refuse (the same rules as Jansson's strict
// mode, which reads the config): one linear pass over the tape.
// `may_hold_nul`: false when the input has no backslash. simdjson refuses raw control characters
// in strings, so a NUL can only come from an escape; a body without escapes needs no NUL search.
const char *strictness_problem(const simdjson::dom::document &doc, bool may_hold_nul) {
    const uint64_t *w = doc.tape.get();
    unsigned root = unsigned(w[1] >> 56);
    if (root != '{' && root != '[') return "the top level must be an object or an array";
    uint32_t last = uint32_t(w[0] & value_mask);
    for (uint32_t i = 1; i < last;) {
        switch (unsigned(w[i] >> 56)) {
        case '"': {
            if (may_hold_nul) {
                std::string_view s = string_at(doc, i);
                if (memchr(s.data(), 0, s.size()) != nullptr) return "a string holds a NUL character (\\u0000)";
            }
            i += 1;
            break;
        }
        case 'u':
            return "an integer is too big (beyond 64-bit signed)";
        case 'l':
        case 'd':
            i += 2;
            break;
        case '{':
            if (has_duplicate_key(doc, i)) return "an object has a duplicate key";
            i += 1;
            break;
        default:
            i += 1;
            break;
        }
    }
    return nullptr;
}

}  // namespace

// A json_tape is the parser holding it: no object of its own (a second allocation per parse).
static json_tape *as_tape(parser *p) { return reinterpret_cast<json_tape *>(p); }
static parser *as_parser(const json_tape *doc) { return reinterpret_cast<parser *>(const_cast<json_tape *>(doc)); }

extern "C" json_tape *json_tape_parse(const void *bytes, size_t length, const char **error) {
    *error = nullptr;
    parser *p = take_parser(length);
    if (p == nullptr) {
        *error = "out of memory";
        return nullptr;
    }
    // The parser copies the input into its own padded buffer (simdjson reads past the end).
    auto parsed = p->parse(static_cast<const uint8_t *>(bytes), length, true);
    if (parsed.error() != simdjson::SUCCESS) {
        *error = simdjson::error_message(parsed.error());
        give_back(p);
        return nullptr;
    }
    const bool may_hold_nul = memchr(bytes, '\\', length) != nullptr;
    if (const char *problem = strictness_problem(p->doc, may_hold_nul)) {
        *error = problem;
        give_back(p);
        return nullptr;
    }
    return as_tape(p);
}

extern "C" json_tape_view json_tape_get_view(const json_tape *doc) {
    const parser *p = as_parser(doc);
    return json_tape_view{p->doc.tape.get(), p->doc.string_buf.get()};
}

extern "C" void json_tape_free(json_tape *doc) {
    if (doc == nullptr) return;
    give_back(as_parser(doc));
}
