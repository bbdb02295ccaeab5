// ddp-tokenize: texts (plain or gzip, one after the other) into the token
// files ddp-train reads for --model gpt (data/token_file.hpp), one token a
// byte, the last part held out for validation:
//
//   ddp-tokenize /usr/share/games/fortunes/{cookie,computers,songs-poems} --out fortunes
//     -> fortunes.train.tok, fortunes.val.tok
//   ddp-tokenize --decode fortunes.val.tok     (the text back, to standard output)
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "data/byte_tokenizer.hpp"
#include "data/gzip_file.hpp"
#include "data/token_file.hpp"

namespace {

using namespace ddp;
using namespace ddp::train;

constexpr std::size_t kMaxText = std::size_t(4) << 30;  // a uint16 a byte: 8 GiB of tokens at most

struct Options {
  std::vector<std::string> inputs;
  std::string out, decode;
  double held_out = 0.1;
};

// The texts, one after the other.
Result<std::vector<std::uint8_t>> read_texts(const std::vector<std::string>& paths) {
  std::vector<std::uint8_t> all;
  for (const auto& path : paths) {
    auto text = read_maybe_gzip(path, kMaxText - all.size());
    if (!text) return fail(text.error());
    all.insert(all.end(), text->begin(), text->end());
  }
  return all;
}

int encode(const Options& o) {
  auto text = read_texts(o.inputs);
  if (!text) {
    std::fprintf(stderr, "ddp-tokenize: %s\n", text.error().c_str());
    return 1;
  }
  const std::string named = o.inputs.size() == 1 ? o.inputs[0] : std::to_string(o.inputs.size()) + " texts";
  const std::span<const std::uint8_t> all(*text);
  const std::size_t cut = held_out_start(all, o.held_out);
  if (cut == 0 || cut == all.size()) {
    std::fprintf(stderr,
                 "ddp-tokenize: %s: %zu bytes leave no line for one of the two parts at --held-out %.3g; give a "
                 "longer text or another fraction\n",
                 named.c_str(), all.size(), o.held_out);
    return 1;
  }
  const auto train = byte_tokens(all.first(cut)), val = byte_tokens(all.subspan(cut));
  for (const auto& [suffix, tokens] : {std::pair{".train.tok", &train}, std::pair{".val.tok", &val}}) {
    if (auto ok = write_token_file(o.out + suffix, kByteTokenizer, kByteVocab, *tokens); !ok) {
      std::fprintf(stderr, "ddp-tokenize: %s\n", ok.error().c_str());
      return 1;
    }
  }
  std::printf(
      "ddp-tokenize: %s: %zu bytes -> %s.train.tok (%zu tokens), %s.val.tok (%zu tokens, the last %.3g "
      "from a line's start); tokenizer %s, vocabulary %u\n",
      named.c_str(), all.size(), o.out.c_str(), train.size(), o.out.c_str(), val.size(), o.held_out, kByteTokenizer,
      kByteVocab);
  return 0;
}

int decode(const std::string& path) {
  auto file = TokenFile::open(path);
  if (!file) {
    std::fprintf(stderr, "ddp-tokenize: %s\n", file.error().c_str());
    return 1;
  }
  if (file->header().tokenizer != kByteTokenizer) {
    std::fprintf(stderr, "ddp-tokenize: %s: tokenizer '%s'; only '%s' can be decoded\n", path.c_str(),
                 file->header().tokenizer.c_str(), kByteTokenizer);
    return 1;
  }
  for (const auto token : file->tokens()) std::putchar(int(token));
  return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"A text into ddp-train's token files (one token a byte), with a held-out part"};
  auto* input = app.add_option("texts", o.inputs, "the texts, plain or gzip-compressed, one after the other");
  auto* out = app.add_option("--out", o.out, "writes OUT.train.tok and OUT.val.tok");
  app.add_option("--held-out", o.held_out, "the share of the text held out, from a line's start")
      ->check(CLI::Range(0.001, 0.5));
  auto* dec = app.add_option("--decode", o.decode, "print a token file's text instead")->excludes(input, out);
  input->excludes(dec);
  CLI11_PARSE(app, argc, argv);
  if (!o.decode.empty()) return decode(o.decode);
  if (o.inputs.empty() || o.out.empty()) {
    std::fprintf(stderr, "ddp-tokenize: give texts and --out PREFIX (or --decode FILE)\n");
    return 2;
  }
  return encode(o);
}
