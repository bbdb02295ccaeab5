// The trainer's IDX reader (MNIST / Fashion-MNIST image and label files):
// header, dimensions and size checks on bytes from disk, and the bounded gzip
// path (a gzip bomb must end in an error, not in the node's memory).
//
// Input: an IDX file, plain or gzip-compressed.
#include <sys/mman.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "data/idx.hpp"
#include "fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::uint8_t> bytes(data, data + size);
  if (const auto array = ddp::train::parse_idx(bytes, "fuzz.idx")) {
    FUZZ_CHECK(!array->dims.empty());
    FUZZ_CHECK(array->items() * array->item_size() == array->data.size());
  } else {
    FUZZ_CHECK(array.error().find("fuzz.idx") != std::string::npos);
  }
  // The file path (zlib reads plain and gzip files alike), from a memory file,
  // with a small decompression bound so that bound is exercised too.
  const int fd = ::memfd_create("fuzz-idx", MFD_CLOEXEC);
  FUZZ_CHECK(fd >= 0);
  FUZZ_CHECK(::write(fd, data, size) == ssize_t(size));
  const auto path = "/proc/self/fd/" + std::to_string(fd);
  if (const auto array = ddp::train::read_idx(path, 1 << 16)) {
    FUZZ_CHECK(array->data.size() <= (1u << 16));
    FUZZ_CHECK(array->items() * array->item_size() == array->data.size());
  }
  ::close(fd);
  return 0;
}
