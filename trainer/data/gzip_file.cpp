#include "data/gzip_file.hpp"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace ddp::train {

Result<std::vector<std::uint8_t>> read_maybe_gzip(const std::string& path, std::size_t max_bytes) {
  const std::unique_ptr<gzFile_s, int (*)(gzFile)> f(gzopen(path.c_str(), "rb"), gzclose);
  if (!f) return fail("cannot open " + path + ": " + std::strerror(errno));
  std::vector<std::uint8_t> bytes;
  std::uint8_t buf[1 << 16];
  for (;;) {
    const int n = gzread(f.get(), buf, sizeof buf);
    if (n < 0) {
      int err = 0;
      return fail(path + ": " + gzerror(f.get(), &err) + " (corrupt or truncated gzip?)");
    }
    if (n == 0) return bytes;
    if (bytes.size() + std::size_t(n) > max_bytes)
      return fail(path + ": more than " + std::to_string(max_bytes) + " bytes once decompressed");
    bytes.insert(bytes.end(), buf, buf + n);
  }
}

}  // namespace ddp::train
