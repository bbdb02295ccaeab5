// Shared by the fuzz targets: the libFuzzer entry point, and a check that
// stops the run with a message when a property the code promises is broken
// (a crash is what libFuzzer and the sanitizers look for; a broken promise
// must become one).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

#define FUZZ_CHECK(cond)                                                                    \
  do {                                                                                      \
    if (!(cond)) {                                                                          \
      std::fprintf(stderr, "%s:%d: property violated: %s\n", __FILE__, __LINE__, #cond);   \
      std::abort();                                                                         \
    }                                                                                       \
  } while (0)

namespace ddp::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Splits `text` at every `sep`: a way for one input to carry several parts.
template <class F>
void for_each_part(std::string_view text, char sep, F&& f) {
  for (std::size_t start = 0; start <= text.size();) {
    const auto end = std::min(text.find(sep, start), text.size());
    f(text.substr(start, end - start));
    start = end + 1;
  }
}

}  // namespace ddp::fuzz
