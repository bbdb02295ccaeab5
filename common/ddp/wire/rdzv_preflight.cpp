// The pre-flight's messages (--ddp-preflight, agent/job/preflight.hpp),
// each to_message() beside its from_message().
#include "ddp/wire/rdzv_fields.hpp"
#include "ddp/wire/rdzv_messages.hpp"

namespace ddp::rdzv {

namespace {
constexpr std::uint64_t kMaxCheckMs = 60000;
constexpr std::size_t kTokenChars = 32;  // hex

bool is_token(const std::string& text) {
  return text.size() == kTokenChars && text.find_first_not_of("0123456789abcdef") == std::string::npos;
}
}  // namespace

Message Checked::to_message() const {
  Message m{"CHECKED", {}};
  m.set("what", what);
  if (mflops) m.set("mflops", *mflops);
  if (!token.empty()) m.set("token", token);
  if (kbps) m.set("kbps", *kbps);
  return set_text(m, "failed", failed);
}

Result<Checked> Checked::from_message(const Message& m) {
  Fields f(m, "CHECKED");
  Checked c;
  c.what = f.text("what");
  if (c.what != "compute" && c.what != "network") f.note("CHECKED: what='" + printable(c.what, 20) + "'");
  c.mflops = f.maybe_number("mflops", 0, 1ull << 40);
  c.failed = f.maybe_text("failed");
  c.token = f.maybe_text("token");
  if (!c.token.empty() && !is_token(c.token)) f.note("CHECKED: the token is not " + std::to_string(kTokenChars) + " hex digits");
  c.kbps = f.maybe_number("kbps", 0, 1ull << 40);
  if (c.kbps && c.token.empty()) f.note("CHECKED: a rate without its transfer's token");
  return f.done(std::move(c));
}

Message CheckCompute::to_message() const { return Message{"CHECKCPU", {}}.set("ms", ms); }

Result<CheckCompute> CheckCompute::from_message(const Message& m) {
  Fields f(m, "CHECKCPU");
  CheckCompute c{std::uint32_t(f.number("ms", 1, kMaxCheckMs))};
  return f.done(c);
}

Message CheckNetwork::to_message() const {
  Message m{"CHECKNET", {}};
  m.set("addr", addr).set("port", port).set("token", token).set("ms", ms);
  return m;
}

Result<CheckNetwork> CheckNetwork::from_message(const Message& m) {
  Fields f(m, "CHECKNET");
  CheckNetwork c;
  c.addr = f.text("addr");
  c.port = std::uint16_t(f.number("port", 1, 65535));
  c.token = f.text("token");
  if (!is_token(c.token))
    f.note("CHECKNET: the token is not " + std::to_string(kTokenChars) + " hex digits");
  c.ms = std::uint32_t(f.number("ms", 1, kMaxCheckMs));
  return f.done(std::move(c));
}

}  // namespace ddp::rdzv
