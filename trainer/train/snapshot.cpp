#include "train/snapshot.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <csignal>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>

namespace ddp::train {
namespace {

// "DDPSNAP" and the format's digit; the end marker is the same in every format.
constexpr char kMagicStem[7] = {'D', 'D', 'P', 'S', 'N', 'A', 'P'};
constexpr char kEnd[8] = {'D', 'D', 'P', 'S', 'E', 'N', 'D', '1'};
constexpr std::uint32_t kMaxArrays = 64;
constexpr std::uint32_t kMaxNameBytes = 256;
constexpr const char* kPrefix = "snapshot-";
constexpr const char* kSuffix = ".ddps";

template <class T>
void put(std::vector<char>& out, T value) {
  for (std::size_t i = 0; i < sizeof(T); ++i) out.push_back(char((std::uint64_t(value) >> (8 * i)) & 0xff));
}
template <class T>
T take(const char* p) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) v |= std::uint64_t(std::uint8_t(p[i])) << (8 * i);
  return T(v);
}

std::uint32_t crc_of(const char* data, std::size_t n) {
  uLong crc = crc32(0L, Z_NULL, 0);
  while (n > 0) {  // zlib's length is a uInt: feed large buffers in pieces
    const uInt piece = uInt(std::min<std::size_t>(n, 1u << 30));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(data), piece);
    data += piece;
    n -= piece;
  }
  return std::uint32_t(crc);
}


// Step number of "snapshot-000000000123.ddps", or -1.
long long step_of(const std::string& name) {
  const std::size_t p = std::strlen(kPrefix), s = std::strlen(kSuffix);
  if (name.size() <= p + s || name.compare(0, p, kPrefix) != 0 || name.compare(name.size() - s, s, kSuffix) != 0)
    return -1;
  const std::string digits = name.substr(p, name.size() - p - s);
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stoll(digits);
}

Result<std::vector<std::string>> list_dir(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (!d) {
    if (errno == ENOENT) return names;
    return fail("snapshot directory " + dir + ": " + errno_text());
  }
  while (dirent* e = ::readdir(d)) names.emplace_back(e->d_name);
  ::closedir(d);
  return names;
}

Result<std::vector<char>> read_whole(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(path + ": " + errno_text());
  std::vector<char> bytes;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const std::string err = errno_text();
      ::close(fd);
      return fail(path + ": " + err);
    }
    if (n == 0) break;
    bytes.insert(bytes.end(), buf, buf + n);
  }
  ::close(fd);
  return bytes;
}

}  // namespace

std::string snapshot_file_name(std::uint64_t global_step) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s%012llu%s", kPrefix, static_cast<unsigned long long>(global_step), kSuffix);
  return buf;
}

std::vector<char> encode_snapshot(const Snapshot& snapshot) {
  std::string meta;
  for (const auto& [k, v] : snapshot.meta) meta += k + "=" + v + "\n";
  std::vector<char> out(kMagicStem, kMagicStem + 7);
  out.push_back(char('0' + snapshot.format));
  put<std::uint64_t>(out, 0);  // total length, patched below
  put<std::uint32_t>(out, std::uint32_t(meta.size()));
  out.insert(out.end(), meta.begin(), meta.end());
  put<std::uint32_t>(out, std::uint32_t(snapshot.arrays.size()));
  for (const SnapshotArray& array : snapshot.arrays) {
    if (snapshot.format >= 2) {
      put<std::uint32_t>(out, std::uint32_t(array.name.size()));
      out.insert(out.end(), array.name.begin(), array.name.end());
    }
    put<std::uint64_t>(out, array.values.size());
    const char* p = reinterpret_cast<const char*>(array.values.data());
    out.insert(out.end(), p, p + array.values.size() * sizeof(float));  // little-endian hosts only (x86-64, aarch64)
  }
  const std::uint64_t total = out.size() + 4 + 8;
  for (int i = 0; i < 8; ++i) out[8 + std::size_t(i)] = char((total >> (8 * i)) & 0xff);
  put<std::uint32_t>(out, crc_of(out.data(), out.size()));
  out.insert(out.end(), kEnd, kEnd + 8);
  return out;
}

namespace {

// The format's number from the magic (the digit after "DDPSNAP"), or -1
// when the bytes are not a snapshot at all.
int format_of(const std::vector<char>& b) {
  if (b.size() < 16 || std::memcmp(b.data(), kMagicStem, 7) != 0) return -1;
  return b[7] >= '0' && b[7] <= '9' ? b[7] - '0' : -1;
}

// Reads a decoded file's payload (between the header and the checksum), with
// a bound on every read: the checksum matched, but the bytes may still be
// anyone's.
class PayloadReader {
 public:
  PayloadReader(const char* begin, const char* end) : p_(begin), end_(end) {}
  std::uint64_t left() const { return std::uint64_t(end_ - p_); }
  bool has(std::uint64_t n) const { return left() >= n; }
  bool done() const { return p_ == end_; }
  template <class T>
  T number() {
    const T v = take<T>(p_);
    p_ += sizeof(T);
    return v;
  }
  std::string_view bytes(std::size_t n) {
    const std::string_view v(p_, n);
    p_ += n;
    return v;
  }

 private:
  const char* p_;
  const char* end_;
};

// Exactly what encode_snapshot() writes: "key=value\n" lines, keys non-empty,
// unique and in order (a std::map's). Anything else is not one of our files,
// whatever its checksum says: a repeated key would otherwise let the last one
// silently win.
Status read_meta(PayloadReader& in, const std::string& origin, std::map<std::string, std::string>& out) {
  if (!in.has(4)) return fail(origin + ": malformed");
  const std::uint32_t meta_len = in.number<std::uint32_t>();
  if (!in.has(meta_len)) return fail(origin + ": malformed metadata");
  const std::string_view meta = in.bytes(meta_len);
  for (std::size_t pos = 0; pos < meta.size();) {
    const std::size_t nl = meta.find('\n', pos);
    if (nl == std::string_view::npos) return fail(origin + ": malformed metadata (unterminated line)");
    const std::string_view line = meta.substr(pos, nl - pos);
    pos = nl + 1;
    const std::size_t eq = line.find('=');
    if (eq == std::string_view::npos || eq == 0) return fail(origin + ": malformed metadata line");
    std::string key(line.substr(0, eq));
    if (!out.empty() && !(out.rbegin()->first < key))
      return fail(origin + ": malformed metadata (a key repeated or out of order)");
    out.emplace_hint(out.end(), std::move(key), std::string(line.substr(eq + 1)));
  }
  return Ok{};
}

// The arrays: format 2 names each (non-empty, unique), format 1 none.
Status read_arrays(PayloadReader& in, int format, const std::string& origin, std::vector<SnapshotArray>& out) {
  if (!in.has(4)) return fail(origin + ": malformed");
  const std::uint32_t count = in.number<std::uint32_t>();
  if (count > kMaxArrays) return fail(origin + ": malformed (" + std::to_string(count) + " arrays)");
  for (std::uint32_t i = 0; i < count; ++i) {
    SnapshotArray array;
    if (format >= 2) {
      if (!in.has(4)) return fail(origin + ": malformed array header");
      const std::uint32_t name_len = in.number<std::uint32_t>();
      if (name_len == 0 || name_len > kMaxNameBytes || !in.has(name_len))
        return fail(origin + ": malformed array name");
      array.name = std::string(in.bytes(name_len));
      for (const SnapshotArray& earlier : out)
        if (earlier.name == array.name) return fail(origin + ": malformed (two arrays named '" + array.name + "')");
    }
    if (!in.has(8)) return fail(origin + ": malformed array header");
    const std::uint64_t floats = in.number<std::uint64_t>();
    if (floats > in.left() / sizeof(float)) return fail(origin + ": malformed array length");
    array.values.resize(floats);
    std::memcpy(array.values.data(), in.bytes(floats * sizeof(float)).data(), floats * sizeof(float));
    out.push_back(std::move(array));
  }
  return Ok{};
}

}  // namespace

Result<Snapshot> decode_snapshot(const std::vector<char>& b, const std::string& origin) {
  Snapshot s;
  s.format = format_of(b);
  if (s.format < 0) return fail(origin + ": not a ddp-train snapshot");
  if (s.format < kOldestSnapshotFormat || s.format > kSnapshotFormat)
    return fail(origin + ": snapshot format " + std::to_string(s.format) + ", which this ddp-train does not read (" +
                std::to_string(kOldestSnapshotFormat) + " to " + std::to_string(kSnapshotFormat) +
                "): resume it with a ddp-train that does");
  const std::uint64_t total = take<std::uint64_t>(b.data() + 8);
  if (b.size() < total)
    return fail(origin + ": truncated (" + std::to_string(b.size()) + " of " + std::to_string(total) + " bytes)");
  if (b.size() != total || total < 16 + 4 + 4 + 12)
    return fail(origin + ": length " + std::to_string(b.size()) + " does not match its header (" +
                std::to_string(total) + ")");
  if (std::memcmp(b.data() + total - 8, kEnd, 8) != 0) return fail(origin + ": end marker missing");
  const std::uint32_t stored_crc = take<std::uint32_t>(b.data() + total - 12);
  if (crc_of(b.data(), total - 12) != stored_crc) return fail(origin + ": checksum mismatch (corrupt)");
  PayloadReader in(b.data() + 16, b.data() + total - 12);
  if (Status st = read_meta(in, origin, s.meta); !st) return fail(st.error());
  if (Status st = read_arrays(in, s.format, origin, s.arrays); !st) return fail(st.error());
  if (!in.done()) return fail(origin + ": trailing bytes before the checksum");
  return s;
}

Status write_file_durably(const std::string& dir, const std::string& name, const std::vector<char>& bytes,
                          CrashPoint crash) {
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    return fail("cannot create snapshot directory " + dir + ": " + errno_text());
  const std::string tmp = dir + "/." + name + ".tmp";
  const std::string final_path = dir + "/" + name;
  // A new file, never an existing name: a stale temporary of ours goes first;
  // in a shared folder a name another user made (a link to one of our files,
  // say) cannot be removed, and O_EXCL|O_NOFOLLOW then refuses it.
  if (::unlink(tmp.c_str()) != 0 && errno != ENOENT)
    return fail("cannot replace " + tmp + ": " + errno_text() + " (another user's file? keep snapshots in a folder of your own)");
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return fail("cannot write " + tmp + ": " + errno_text());
  std::size_t written = 0;
  while (written < bytes.size()) {
    if (crash == CrashPoint::half_written && written >= bytes.size() / 2) ::raise(SIGKILL);
    const std::size_t chunk = crash == CrashPoint::half_written ? std::min<std::size_t>(bytes.size() / 2 + 1, bytes.size() - written)
                                                                : bytes.size() - written;
    const ssize_t n = ::write(fd, bytes.data() + written, chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const std::string err = errno_text();
      ::close(fd);
      ::unlink(tmp.c_str());  // a full disk must not leave half a file behind
      return fail("writing " + tmp + " failed: " + err + "; the previous snapshot is kept");
    }
    written += std::size_t(n);
  }
  if (::fsync(fd) != 0) {
    const std::string err = errno_text();
    ::close(fd);
    ::unlink(tmp.c_str());
    return fail("fsync of " + tmp + " failed: " + err + "; the previous snapshot is kept");
  }
  ::close(fd);
  if (crash == CrashPoint::before_rename) ::raise(SIGKILL);
  if (::rename(tmp.c_str(), final_path.c_str()) != 0) {
    const std::string err = errno_text();
    ::unlink(tmp.c_str());
    return fail("rename " + tmp + " -> " + final_path + " failed: " + err);
  }
  // The rename is durable only once the directory entry is on disk.
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return Ok{};
}

Result<SnapshotScan> find_newest_snapshot(const std::string& dir) {
  auto names = list_dir(dir);
  if (!names) return fail(names.error());
  std::vector<std::pair<long long, std::string>> found;
  for (const std::string& n : *names)
    if (long long step = step_of(n); step >= 0) found.emplace_back(step, n);
  std::sort(found.rbegin(), found.rend());
  SnapshotScan scan;
  for (const auto& [step, name] : found) {
    const std::string path = dir + "/" + name;
    auto bytes = read_whole(path);
    if (!bytes) {
      scan.warnings.push_back("skipping snapshot " + bytes.error());
      continue;
    }
    auto snap = decode_snapshot(*bytes, path);
    if (!snap) {
      scan.warnings.push_back("skipping snapshot " + snap.error());
      continue;
    }
    scan.newest = LoadedSnapshot{std::move(snap).value(), path};
    break;
  }
  return scan;
}

Status prune_snapshots(const std::string& dir, int keep) {
  auto names = list_dir(dir);
  if (!names) return fail(names.error());
  std::vector<std::pair<long long, std::string>> found;
  for (const std::string& n : *names) {
    if (long long step = step_of(n); step >= 0) found.emplace_back(step, n);
    // Temporaries of a writer that died mid-write (only rank 0 writes, and it is us).
    if (n.size() > 5 && n[0] == '.' && n.compare(n.size() - 4, 4, ".tmp") == 0 && n.find(kPrefix) == 1)
      ::unlink((dir + "/" + n).c_str());
  }
  std::sort(found.rbegin(), found.rend());
  for (std::size_t i = std::size_t(std::max(keep, 1)); i < found.size(); ++i)
    ::unlink((dir + "/" + found[i].second).c_str());
  return Ok{};
}

}  // namespace ddp::train
