// The trainer's data path: IDX files (the real Fashion-MNIST Debian ships) and
// DistributedSampler, checked index for index against Debian's PyTorch.
#include <zlib.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "data/idx.hpp"
#include "data/sampler.hpp"
#include "suites.hpp"

using namespace ddp::train;

namespace {

const std::string kFashion = "/usr/share/datasets/fashion-mnist";

// torch's DistributedSampler output for one configuration, from /usr/bin/python3.
std::vector<std::size_t> torch_indices(std::size_t n, unsigned replicas, unsigned rank, bool shuffle, unsigned seed,
                                       bool drop_last, unsigned epoch) {
  std::ostringstream cmd;
  cmd << "/usr/bin/python3 -c 'from torch.utils.data import DistributedSampler as D; "
      << "s=D(range(" << n << "),num_replicas=" << replicas << ",rank=" << rank
      << ",shuffle=" << (shuffle ? "True" : "False") << ",seed=" << seed
      << ",drop_last=" << (drop_last ? "True" : "False") << "); s.set_epoch(" << epoch
      << "); print(\" \".join(map(str, s)))'";
  FILE* p = popen(cmd.str().c_str(), "r");
  ck_assert_ptr_nonnull(p);
  std::vector<std::size_t> out;
  unsigned long v = 0;
  while (std::fscanf(p, "%lu", &v) == 1) out.push_back(v);
  ck_assert_int_eq(pclose(p), 0);
  return out;
}

std::string temp_file(const std::string& bytes, bool gzip) {
  char name[] = "/tmp/ddp-idx-XXXXXX";
  const int fd = mkstemp(name);
  ck_assert_int_ge(fd, 0);
  close(fd);
  if (gzip) {
    gzFile f = gzopen(name, "wb");
    gzwrite(f, bytes.data(), unsigned(bytes.size()));
    gzclose(f);
  } else {
    std::ofstream(name, std::ios::binary) << bytes;
  }
  return name;
}

}  // namespace

START_TEST(reads_real_fashion_mnist) {
  const auto images = read_idx(kFashion + "/train-images-idx3-ubyte.gz");
  ck_assert_msg(images.ok(), "%s", images.ok() ? "" : images.error().c_str());
  ck_assert(images->dims == (std::vector<std::uint32_t>{60000, 28, 28}));
  ck_assert_uint_eq(images->item_size(), 784);
  const auto labels = read_idx(kFashion + "/t10k-labels-idx1-ubyte.gz");
  ck_assert(labels.ok());
  ck_assert_uint_eq(labels->items(), 10000);
  std::vector<int> seen(10);
  for (const auto l : labels->data) {
    ck_assert_uint_lt(l, 10);
    ++seen[l];
  }
  for (const int count : seen) ck_assert_int_eq(count, 1000);  // Fashion-MNIST's test split is balanced
}
END_TEST

START_TEST(plain_and_gzip_idx_and_their_errors) {
  const std::string ok(
      "\x00\x00\x08\x02\x00\x00\x00\x02\x00\x00\x00\x03"
      "abcdef",
      18);
  for (const bool gz : {false, true}) {
    const auto path = temp_file(ok, gz);
    const auto a = read_idx(path);
    ck_assert_msg(a.ok(), "%s", a.ok() ? "" : a.error().c_str());
    ck_assert(a->dims == (std::vector<std::uint32_t>{2, 3}));
    ck_assert_int_eq(a->data[5], 'f');
    std::remove(path.c_str());
  }
  const auto err = [](const std::string& bytes) {
    const auto path = temp_file(bytes, false);
    const auto r = read_idx(path);
    std::remove(path.c_str());
    ck_assert(!r.ok());
    return r.error();
  };
  CK_CONTAINS(err(std::string("\x01\x00\x08\x01", 4)), "bad magic");
  CK_CONTAINS(err(std::string("\x00\x00\x0d\x01\x00\x00\x00\x01", 8) + "x"), "not unsigned byte");
  CK_CONTAINS(err(std::string("\x00\x00\x08\x02\x00\x00", 6)), "truncated");
  CK_CONTAINS(err(ok.substr(0, 17)), "5 data bytes, its dimensions say 6");
  CK_CONTAINS(err(std::string("\x00\x00\x08\x02\xff\xff\xff\xff\xff\xff\xff\xff", 12)), "exceed");
  // A gzip stream cut in the middle.
  const auto gz = temp_file(std::string(4096, 'a'), true);
  std::string bytes;
  {
    std::ifstream in(gz, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::ofstream(gz, std::ios::binary | std::ios::trunc) << bytes.substr(0, bytes.size() / 2);
  const auto cut = read_idx(gz);
  ck_assert(!cut.ok());
  std::remove(gz.c_str());
  CK_CONTAINS(read_idx("/nonexistent/x.gz").error(), "cannot open /nonexistent/x.gz");
}
END_TEST

START_TEST(sampler_matches_torch) {
  struct Case {
    std::size_t n;
    unsigned replicas, rank;
    bool shuffle;
    unsigned seed;
    bool drop_last;
    unsigned epoch;
  };
  const Case cases[] = {{10, 3, 1, true, 5, false, 2},         {10, 3, 2, true, 5, true, 2},
                        {7, 4, 3, false, 0, false, 0},         {7, 4, 0, false, 0, true, 0},
                        {3, 8, 6, true, 1, false, 4},          {60000, 4, 2, true, 0, false, 1},
                        {1000, 6, 5, true, 123456789, true, 7}};
  for (const auto& c : cases) {
    const auto ours = distributed_indices({c.n, c.replicas, c.rank, c.shuffle, c.seed, c.drop_last}, c.epoch);
    const auto theirs = torch_indices(c.n, c.replicas, c.rank, c.shuffle, c.seed, c.drop_last, c.epoch);
    ck_assert_msg(ours == theirs, "N=%zu R=%u rank=%u shuffle=%d seed=%u drop_last=%d epoch=%u: %zu vs %zu indices",
                  c.n, c.replicas, c.rank, c.shuffle, c.seed, c.drop_last, c.epoch, ours.size(), theirs.size());
  }
}
END_TEST

START_TEST(sampler_ranks_partition_the_epoch) {
  std::vector<int> hits(100);
  for (unsigned r = 0; r < 4; ++r)
    for (const auto i : distributed_indices({100, 4, r, true, 9, false}, 3)) ++hits[i];
  for (const int h : hits) ck_assert_int_eq(h, 1);  // 100 % 4 == 0: no padding, each sample once
  ck_assert(distributed_indices({100, 4, 0, true, 9, false}, 3) != distributed_indices({100, 4, 0, true, 9, false}, 4));
}
END_TEST

Suite* trainer_data_suite() {
  return make_suite("trainer_data",
                    {reads_real_fashion_mnist, plain_and_gzip_idx_and_their_errors, sampler_matches_torch,
                     sampler_ranks_partition_the_epoch},
                    60);
}
