// The rendezvous wire protocol's pure layers, fed bytes a peer chose before it
// is authenticated: the bounded line assembler, the strict decoder (and its
// promise to be canonical), every message's from_message (and its promise to
// round-trip), percent-decoding, the secret and nonce checks.
//
// Input: the first byte sets the size of the chunks the stream arrives in
// (as recv() would cut it), the rest is the stream.
#include <string>

#include "ddp/wire/failure.hpp"
#include "job/failure_text.hpp"
#include "ddp/wire/rdzv_messages.hpp"
#include "ddp/wire/rdzv_protocol.hpp"
#include "fuzz.hpp"

namespace rdzv = ddp::rdzv;

namespace {

// A message read as T must come back the same from its own line.
template <class T>
void round_trips(const rdzv::Message& m) {
  const auto read = T::from_message(m);
  if (!read) {
    FUZZ_CHECK(!read.error().empty());
    return;
  }
  const auto line = rdzv::encode(read->to_message());
  if (line.empty()) return;  // FAIL and DONE shorten a tail that would not fit; the rest always fits
  const auto again = rdzv::decode(line.substr(0, line.size() - 1));
  FUZZ_CHECK(again.ok());
  const auto reread = T::from_message(*again);
  FUZZ_CHECK(reread.ok() && *reread == *read);
}

void check_messages(const rdzv::Message& m) {
  round_trips<rdzv::Challenge>(m);
  round_trips<rdzv::Response>(m);
  round_trips<rdzv::Welcome>(m);
  round_trips<rdzv::Refused>(m);
  round_trips<rdzv::Join>(m);
  round_trips<rdzv::Fail>(m);
  round_trips<rdzv::Stopped>(m);
  round_trips<rdzv::Start>(m);
  round_trips<rdzv::Done>(m);
  const auto report = rdzv::decode_report(m);
  const auto order = rdzv::decode_order(m);
  FUZZ_CHECK(!(report && order) || m.verb == "HB");  // the two directions share only the heartbeat
  if (const auto done = rdzv::Done::from_message(m); done && done->verdict.cause)
    FUZZ_CHECK(!ddp::agent::describe(*done->verdict.cause).empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t chunk = 1 + data[0] % 64;
  const auto stream = ddp::fuzz::as_text(data + 1, size - 1);

  rdzv::LineReader reader;
  bool poisoned = false;
  for (std::size_t pos = 0; pos < stream.size() && !poisoned; pos += chunk) {
    if (!reader.feed(stream.substr(pos, chunk))) poisoned = true;
    while (auto line = reader.next()) {
      FUZZ_CHECK(!poisoned);
      FUZZ_CHECK(line->size() <= rdzv::kMaxLineBytes);
      FUZZ_CHECK(line->find('\n') == std::string::npos);
      const auto message = rdzv::decode(*line);
      if (!message) {
        FUZZ_CHECK(!message.error().empty());
        FUZZ_CHECK(message.error().size() < 512);  // quotes at most ~40 bytes of the input
        continue;
      }
      // Canonical: decode accepts only what encode writes.
      FUZZ_CHECK(rdzv::encode(*message) == *line + "\n");
      check_messages(*message);
      for (const auto& [key, value] : message->fields) {
        FUZZ_CHECK(message->get(key).has_value());
        (void)message->get_uint(key, 0, 1u << 20);
        // Every decoded value survives its own encoding.
        const auto again = rdzv::percent_decode(rdzv::percent_encode(value));
        FUZZ_CHECK(again && *again == value);
      }
    }
    FUZZ_CHECK(reader.buffered() <= rdzv::kMaxLineBytes + chunk);
  }
  if (poisoned) {
    FUZZ_CHECK(!reader.next().has_value());
    FUZZ_CHECK(!reader.feed("X\n"));
  }

  if (const auto decoded = rdzv::percent_decode(stream)) FUZZ_CHECK(rdzv::percent_encode(*decoded) == stream);
  // A near-secret (hex digits, with 'Z' where the input has one): the message
  // about a bad secret never quotes any 8 characters of it.
  std::string near_secret;
  for (const char c : stream) near_secret += c == 'Z' ? 'Z' : "0123456789abcdef"[c & 15];
  if (const auto ok = rdzv::check_secret(near_secret); !ok) {
    for (std::size_t i = 0; i + 8 <= near_secret.size(); ++i)
      FUZZ_CHECK(ok.error().find(near_secret.substr(i, 8)) == std::string::npos);
  }
  (void)rdzv::check_nonce(stream);
  FUZZ_CHECK(!rdzv::mac_equal("", ""));
  return 0;
}
