#include "data/idx.hpp"

#include "data/gzip_file.hpp"

namespace ddp::train {

std::size_t IdxArray::item_size() const {
  std::size_t size = 1;
  for (std::size_t i = 1; i < dims.size(); ++i) size *= dims[i];
  return size;
}

Result<IdxArray> parse_idx(const std::vector<std::uint8_t>& b, const std::string& origin) {
  // Header: two zero bytes, a type byte (0x08 = unsigned byte), a dimension
  // count, then one big-endian uint32 per dimension.
  if (b.size() < 4 || b[0] != 0 || b[1] != 0) return fail(origin + ": not an IDX file (bad magic)");
  if (b[2] != 0x08) return fail(origin + ": IDX element type " + std::to_string(b[2]) + " is not unsigned byte (8)");
  const std::size_t ndim = b[3];
  if (ndim == 0 || ndim > 8) return fail(origin + ": IDX with " + std::to_string(ndim) + " dimensions");
  if (b.size() < 4 + 4 * ndim) return fail(origin + ": IDX header is truncated");
  IdxArray a;
  std::uint64_t count = 1;
  for (std::size_t i = 0; i < ndim; ++i) {
    const std::uint8_t* p = &b[4 + 4 * i];
    const std::uint32_t d =
        (std::uint32_t(p[0]) << 24) | (std::uint32_t(p[1]) << 16) | (std::uint32_t(p[2]) << 8) | p[3];
    a.dims.push_back(d);
    count *= d;
    if (count > b.size()) return fail(origin + ": IDX dimensions exceed the file's size");
  }
  const std::size_t header = 4 + 4 * ndim;
  if (b.size() - header != count)
    return fail(origin + ": IDX holds " + std::to_string(b.size() - header) + " data bytes, its dimensions say " +
                std::to_string(count));
  a.data.assign(b.begin() + std::ptrdiff_t(header), b.end());
  return a;
}

Result<IdxArray> read_idx(const std::string& path, std::size_t max_bytes) {
  auto bytes = read_maybe_gzip(path, max_bytes);
  if (!bytes) return fail(bytes.error());
  return parse_idx(*bytes, path);
}

}  // namespace ddp::train
