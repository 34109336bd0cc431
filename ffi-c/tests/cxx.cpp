// The header from C++: it compiles warning-free with g++ (-std=c++11 -pedantic), its
// functions have C linkage, and the handles fit RAII with std::unique_ptr.
#undef NDEBUG
#include <cassert>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "ferroflake.h"

namespace {

struct LayoutFree {
    void operator()(ferroflake_layout *layout) const { ferroflake_layout_free(layout); }
};
struct GeneratorFree {
    void operator()(ferroflake_generator *generator) const { ferroflake_generator_free(generator); }
};
using Layout = std::unique_ptr<ferroflake_layout, LayoutFree>;
using Generator = std::unique_ptr<ferroflake_generator, GeneratorFree>;

void ok(ferroflake_result result) {
    if (result != FERROFLAKE_RESULT_OK) {
        std::cerr << "ferroflake: " << ferroflake_result_message(result) << "\n";
    }
    assert(result == FERROFLAKE_RESULT_OK);
}

std::string encode(ferroflake_format format, std::uint64_t id) {
    char buf[FERROFLAKE_ENCODED_MAX_SIZE];
    std::size_t len = 0;
    ok(ferroflake_format_encode(format, id, buf, sizeof buf, &len));
    return std::string(buf, len);
}

}  // namespace

int main() {
    // The result type is exactly 32 bits wide in C++ as in C.
    static_assert(sizeof(FERROFLAKE_RESULT_OK) == sizeof(std::uint32_t), "result width");
    static_assert(sizeof(ferroflake_parts) == 4 * sizeof(std::uint64_t), "parts layout");

    ferroflake_layout *raw_layout = nullptr;
    ok(ferroflake_layout_new_named("sonyflake", &raw_layout));
    Layout layout(raw_layout);

    ferroflake_generator_options options;
    ok(FERROFLAKE_GENERATOR_OPTIONS_INIT(&options));
    options.clock = FERROFLAKE_CLOCK_MANUAL;
    options.manual_start_ms = 1700000000000ULL;
    ferroflake_generator *raw_generator = nullptr;
    ok(ferroflake_generator_new(layout.get(), 513, &options, &raw_generator));
    Generator generator(raw_generator);

    // Two std::threads share the generator.
    std::vector<std::uint64_t> a(3000), b(3000);
    std::thread first([&] { ok(ferroflake_generator_next_ids(generator.get(), a.data(), a.size())); });
    std::thread second([&] {
        for (auto &id : b) ok(ferroflake_generator_next_id(generator.get(), &id));
    });
    first.join();
    second.join();
    std::set<std::uint64_t> unique(a.begin(), a.end());
    unique.insert(b.begin(), b.end());
    assert(unique.size() == a.size() + b.size());

    ferroflake_parts parts;
    ok(ferroflake_layout_decode(layout.get(), *unique.rbegin(), &parts));
    assert(parts.node == 513);
    std::uint64_t parsed = 0;
    std::string text = encode(FERROFLAKE_FORMAT_BASE32, *unique.rbegin());
    assert(text.size() == 13);
    ok(ferroflake_format_parse(FERROFLAKE_FORMAT_BASE32, text.data(), text.size(), &parsed));
    assert(parsed == *unique.rbegin());
    assert(ferroflake_layout_new_named("nope", &raw_layout) == FERROFLAKE_RESULT_UNKNOWN_LAYOUT);
    assert(std::strcmp(ferroflake_version(), FERROFLAKE_VERSION) == 0);
    std::cout << "c++: " << unique.size() << " unique ids from 2 std::threads, last " << text
              << "\n";
    return 0;
}
