// The snapshot reader: a training snapshot comes back from disk after any
// crash, truncation or bit flip, and must be refused with a reason, never
// crash the resume or be half-used; its metadata (snapshot_meta.hpp) too.
#include <vector>

#include "fuzz.hpp"
#include "train/snapshot.hpp"
#include "train/snapshot_meta.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<char> bytes(data, data + size);
  const auto snapshot = ddp::train::decode_snapshot(bytes, "fuzz.ddps");
  if (!snapshot) {
    FUZZ_CHECK(!snapshot.error().empty());
    return 0;
  }
  // Accepted bytes are exactly what the writer would write for that content.
  FUZZ_CHECK(ddp::train::encode_snapshot(*snapshot) == bytes);
  // Metadata read strictly, and what its writer writes reads back.
  const auto meta = ddp::train::from_meta(snapshot->meta, "fuzz.ddps");
  if (!meta) {
    FUZZ_CHECK(!meta.error().empty());
    return 0;
  }
  const auto again = ddp::train::from_meta(ddp::train::to_meta(*meta), "fuzz.ddps");
  FUZZ_CHECK(again.ok() && again->position == meta->position && again->model == meta->model);
  return 0;
}
