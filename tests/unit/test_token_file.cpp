// The language model's data: token files (header, mapping, every refusal),
// the byte tokenizer and the held-out split, on the real text Debian ships
// (fortune's cookies: the fortunes package, in Debian 12, 13 and unstable).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "data/byte_tokenizer.hpp"
#include "data/gzip_file.hpp"
#include "data/token_file.hpp"
#include "data/token_windows.hpp"
#include "suites.hpp"
#include "train/gpt_trainer.hpp"
#include "train/setup.hpp"

using namespace ddp::train;

namespace {

const std::string kCookies = "/usr/share/games/fortunes/cookie";

std::string scratch_path(const char* name) { return "/tmp/ddp-tok-" + std::to_string(::getpid()) + "-" + name; }

std::vector<std::uint8_t> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void put_bytes(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

std::string open_error(const std::string& path) {
  auto file = TokenFile::open(path);
  ck_assert_msg(!file, "%s opened", path.c_str());
  return file.error();
}

}  // namespace

START_TEST(a_token_header_survives_its_own_bytes_and_refuses_what_does_not_fit) {
  const TokenHeader h{1, 50257, 123456789012ull, "gpt2"};
  auto bytes = encode_token_header(h);
  ck_assert(bytes && bytes->size() == kTokenHeaderBytes);
  auto back = decode_token_header(*bytes, "f");
  ck_assert(back && *back == h);
  CK_CONTAINS(encode_token_header({1, 65537, 0, "bytes"}).error(),
              "a vocabulary of 65537 tokens (a token file holds 1 to 65,536");
  ck_assert(!encode_token_header({1, 0, 0, "bytes"}));
  ck_assert(encode_token_header({1, 65536, 0, "bytes"}));
  CK_CONTAINS(encode_token_header({1, 256, 0, std::string(16, 'x')}).error(), "1 to 15 bytes");
  auto other = *bytes;
  other[0] = 'X';
  CK_CONTAINS(decode_token_header(other, "f").error(),
              "f: not a token file (no DDPTOKEN header); make one with ddp-tokenize");
  other = *bytes;
  other[8] = 2;
  CK_CONTAINS(decode_token_header(other, "f").error(), "f: token file version 2, this ddp-train reads 1");
  other = *bytes;
  other[14] = 1;  // vocabulary 65536 + 50257
  CK_CONTAINS(decode_token_header(other, "f").error(), "a vocabulary of");
  other = *bytes;
  other[63] = 1;
  CK_CONTAINS(decode_token_header(other, "f").error(), "reserved header bytes are not zero");
}
END_TEST

START_TEST(a_token_file_is_mapped_as_written_and_checked_whole) {
  const auto path = scratch_path("ok.tok");
  const std::vector<std::uint16_t> tokens = {0, 1, 65535, 7, 65534};
  ck_assert(write_token_file(path, "wide", 65536, tokens));
  {
    auto file = TokenFile::open(path);
    ck_assert_msg(file, "%s", file ? "" : file.error().c_str());
    ck_assert(std::vector<std::uint16_t>(file->tokens().begin(), file->tokens().end()) == tokens);
    CK_STR_EQ(file->header().tokenizer, "wide");
    TokenFile moved = std::move(file).value();  // the mapping moves with it
    ck_assert_uint_eq(moved.tokens()[2], 65535);
  }
  CK_CONTAINS(write_token_file(path, "bytes", 256, tokens).error(), "token 2 is outside the vocabulary");
  auto bytes = file_bytes(path);
  bytes.resize(bytes.size() - 1);
  put_bytes(path, bytes);
  CK_CONTAINS(open_error(path), "the header says 5 tokens, the file holds 9 bytes after it");
  bytes.resize(kTokenHeaderBytes + 2 * 5);
  bytes[12] = 0, bytes[13] = 1, bytes[14] = 0;  // vocabulary 256: token 2 (65535) is outside
  put_bytes(path, bytes);
  CK_CONTAINS(open_error(path), "token 2 is 65535, outside the vocabulary of 256");
  put_bytes(path, {1, 2, 3});
  CK_CONTAINS(open_error(path), "not a token file");
  std::remove(path.c_str());
  CK_CONTAINS(open_error(path), "cannot open " + path + ": No such file or directory");
}
END_TEST

START_TEST(the_held_out_part_starts_a_line) {
  const std::string text = "one\ntwo\nthree\nfour\n";  // 19 bytes
  const std::span<const std::uint8_t> t(reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
  ck_assert_uint_eq(held_out_start(t, 0.3), 14);   // the last 5 bytes: "four\n", from a line's start
  ck_assert_uint_eq(held_out_start(t, 0.6), 8);    // the last 11 bytes: "\nthree\nfour\n", from "three"
  ck_assert_uint_eq(held_out_start(t, 0.5), 14);   // the last 9: "ree\nfour\n", from the next line
  ck_assert_uint_eq(held_out_start(t, 0.01), 19);  // no line starts in the last byte: nothing held out
  const std::string one_line = "no newline at all";
  ck_assert_uint_eq(held_out_start({reinterpret_cast<const std::uint8_t*>(one_line.data()), one_line.size()}, 0.5),
                    one_line.size());
  const auto tokens = byte_tokens(t);
  ck_assert_uint_eq(tokens.size(), text.size());
  ck_assert_uint_eq(tokens[3], '\n');
}
END_TEST

// Fortune's cookies, as ddp-tokenize splits them: the held-out part, back to the text.
START_TEST(fortunes_cookies_become_tokens_and_back) {
  auto text = read_maybe_gzip(kCookies, std::size_t(64) << 20);
  ck_assert_msg(text, "%s (packaging/install-deps.sh test installs fortunes)", text ? "" : text.error().c_str());
  ck_assert_uint_gt(text->size(), 200000);
  const std::span<const std::uint8_t> all(*text);
  const auto cut = held_out_start(all, 0.1);
  ck_assert_uint_eq((*text)[cut - 1], '\n');
  ck_assert(cut > all.size() * 89 / 100 && cut <= all.size() * 90 / 100 + 200);
  const auto path = scratch_path("cookie.val.tok");
  ck_assert(write_token_file(path, kByteTokenizer, kByteVocab, byte_tokens(all.subspan(cut))));
  auto file = TokenFile::open(path);
  ck_assert(file);
  ck_assert_uint_eq(file->header().vocab, 256);
  ck_assert(std::equal(file->tokens().begin(), file->tokens().end(), all.begin() + std::ptrdiff_t(cut), all.end()));
  std::remove(path.c_str());
}
END_TEST

// Windows of context tokens and the next one, read in order; a row's window
// depends on the step and the row only, so one rank with accumulation reads
// what N ranks read, and a resumed run what an uninterrupted one did.
START_TEST(token_windows_are_dealt_by_step_and_row) {
  ck_assert(!TokenWindows::plan(64, 64, 4));  // no room for the next token
  const auto w = TokenWindows::plan(1000, 64, 4);
  ck_assert(w);
  ck_assert_uint_eq(w->windows(), 15);  // (1000 - 1) / 64
  ck_assert_uint_eq(w->start(0, 0), 0);
  ck_assert_uint_eq(w->start(0, 3), 3 * 64);
  ck_assert_uint_eq(w->start(1, 0), 4 * 64);
  ck_assert_uint_eq(w->start(3, 3), 0);  // window 15: round again
  ck_assert_double_eq_tol(w->passes(30), 8.0, 1e-9);
  std::vector<std::uint16_t> tokens(1000);
  for (std::size_t i = 0; i < tokens.size(); ++i) tokens[i] = std::uint16_t(i % 251);
  std::vector<std::uint16_t> in(2 * 64), target(2 * 64);
  w->fill(tokens, 2, 1, 2, in.data(), target.data());  // step 2, rows 1 and 2: windows 9 and 10
  ck_assert_uint_eq(in[0], 9 * 64 % 251);
  ck_assert_uint_eq(target[0], (9 * 64 + 1) % 251);
  ck_assert_uint_eq(target[63], (10 * 64) % 251);  // the last target: the next window's first token
  ck_assert_uint_eq(in[64], 10 * 64 % 251);
  // Two ranks of 2 rows each hold the rows one rank holds in 2 micro-batches.
  ck_assert_int_eq(first_row_of(1, 2, 1, 0), first_row_of(0, 2, 2, 1));
  ck_assert_int_eq(first_row_of(1, 1, 2, 1), 3);
}
END_TEST

// The GPT's buckets cover its array once, from the end (the final
// LayerNorm's, with the loss and stop slots, first), and the run's plan
// refuses what does not fit, naming the option.
START_TEST(the_gpt_run_is_planned_and_bad_options_are_refused) {
  const auto c = gpt_config("small", 0, 0, 0, 0, 0);
  const GptLayout l = gpt_layout(*c);
  const ParamLayout p = gpt_param_layout(l, 64 * 1024, 256 * 1024);
  ck_assert_uint_eq(p.total, l.total + 2);
  ck_assert_uint_eq(p.buckets.front().offset + p.buckets.front().count, p.total);
  std::size_t end = p.total;
  for (const auto& b : p.buckets) {  // contiguous, descending, each group whole
    ck_assert_uint_eq(b.offset + b.count, end);
    end = b.offset;
  }
  ck_assert_uint_eq(end, 0);
  ck_assert_int_eq(p.buckets.back().ready_after_layer, 0);  // the embeddings: ready last
  ck_assert_int_gt(int(p.buckets.size()), 1);
  TrainOptions o;
  o.model = "gpt";
  TokenHeader bytes{1, 256, 100000, "bytes"};
  auto plan = plan_gpt_run(o, 2, bytes);
  ck_assert(plan);
  ck_assert_int_eq(plan->run.micro, 8);  // 16 sequences by default
  ck_assert_str_eq(plan->run.optimizer.c_str(), "adamw");
  ck_assert_int_eq(plan->schedule.warmup, 20);
  o.batch_size = 12, o.batch_size_given = true;
  CK_CONTAINS(plan_gpt_run(o, 8, bytes).error(), "use a multiple of 8");
  o.batch_size = 16;
  o.gpt_vocab = 100;
  CK_CONTAINS(plan_gpt_run(o, 2, bytes).error(), "larger than the model's (100)");
  o.gpt_vocab = 0, o.gpt_heads = 3;
  CK_CONTAINS(plan_gpt_run(o, 2, bytes).error(), "does not divide");
  o.gpt_heads = 0, o.device = "cuda";
  CK_CONTAINS(plan_gpt_run(o, 2, bytes).error(), "--device cpu");
  // --precision: bf16 for the GPT on the GPU unless fp32 is asked; fp32 only elsewhere.
  ck_assert(*matmul_precision(o) == MatmulPrecision::bf16);
  o.precision = "fp32";
  ck_assert(*matmul_precision(o) == MatmulPrecision::fp32);
  o.precision = "bf16", o.device = "cpu";
  CK_CONTAINS(plan_gpt_run(o, 2, bytes).error(), "--precision bf16 is --model gpt's on --device cuda");
  o.precision = "auto";
  ck_assert(*matmul_precision(o) == MatmulPrecision::fp32);
  o.model = "mlp", o.device = "cuda";
  ck_assert(*matmul_precision(o) == MatmulPrecision::fp32);
  o.precision = "bf16";
  CK_CONTAINS(matmul_precision(o).error(), "--model mlp on --device cuda computes in fp32");
}
END_TEST

// --data random: the same seed gives the same tokens, every one inside the
// vocabulary, each value about equally often (nothing to learn).
START_TEST(random_tokens_are_uniform_over_the_vocabulary_and_seeded) {
  const auto a = random_tokens(256 * 4096, 256, 7);
  ck_assert(a == random_tokens(256 * 4096, 256, 7));
  ck_assert(a != random_tokens(256 * 4096, 256, 8));
  std::vector<int> seen(256, 0);
  for (const auto t : a) ++seen[t];
  for (const int n : seen) ck_assert_int_lt(std::abs(n - 4096), 400);  // 6 standard deviations
  const auto gpt2 = random_tokens(100000, 50257, 1);
  ck_assert_int_eq(*std::max_element(gpt2.begin(), gpt2.end()) < 50257, 1);
  ck_assert_int_gt(*std::max_element(gpt2.begin(), gpt2.end()), 50000);
}
END_TEST

Suite* token_data_suite() {
  return make_suite("token_data",
                    {random_tokens_are_uniform_over_the_vocabulary_and_seeded,
                     a_token_header_survives_its_own_bytes_and_refuses_what_does_not_fit,
                     a_token_file_is_mapped_as_written_and_checked_whole, the_held_out_part_starts_a_line,
                     fortunes_cookies_become_tokens_and_back, token_windows_are_dealt_by_step_and_row,
                     the_gpt_run_is_planned_and_bad_options_are_refused},
                    30);
}
