#include "ddp/wire/rdzv_messages.hpp"

#include "ddp/base/bounds.hpp"
#include "ddp/base/parse.hpp"
#include "ddp/base/version.hpp"
#include "ddp/wire/rdzv_fields.hpp"

namespace ddp::rdzv {

namespace {

// ---- lists inside one field -----------------------------------------------

Result<std::vector<WorkerPlacement>> parse_placements(std::string_view text) { return decode_placements(text); }

// Nodes and their ranks: "0:0-3;2:8,9".
std::string format_stalled(const std::vector<StalledNode>& nodes) {
  std::string out;
  for (const auto& n : nodes) out += (out.empty() ? "" : ";") + std::to_string(n.node) + ":" + format_runs(n.ranks);
  return out;
}

Result<std::vector<StalledNode>> parse_stalled(std::string_view text) {
  std::vector<StalledNode> nodes;
  for (const auto entry : split_list(text, ';')) {
    const auto colon = entry.find(':');
    if (colon == std::string_view::npos) return fail("'" + printable(entry, 40) + "' is not NODE:RANKS");
    const auto node = parse_uint(entry.substr(0, colon), 0, kMaxNode, "a node");
    if (!node) return fail(node.error());
    auto ranks = parse_runs(entry.substr(colon + 1), 0, kMaxRank, kMaxWorkersPerNode, "its ranks");
    if (!ranks) return fail(ranks.error());
    nodes.push_back({std::uint32_t(*node), std::move(ranks).value()});
  }
  return nodes;
}

// Words of any bytes: each percent-encoded (so none holds ';'), ';' between.
std::string format_words(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : ";") + percent_encode(w);
  return out;
}

Result<std::vector<std::string>> parse_words(std::string_view text) {
  std::vector<std::string> words;
  for (const auto piece : split_list(text, ';')) {
    auto word = percent_decode(piece);
    if (!word) return fail(word.error());
    words.push_back(std::move(word).value());
  }
  return words;
}

// ---- the failure's fields, in FAIL and DONE --------------------------------

void put_hang(Message& m, const HangFacts& h) {
  m.set("hang_timeout_ms", h.timeout_ms).set("hang_since_ms", h.since_ms).set("hang_in", std::uint64_t(h.where));
  if (h.step) m.set("hang_step", *h.step);
  if (h.never) m.set("hang_never", 1);
  if (!h.stalled.empty()) m.set("hang_stalled", h.stalled);
  if (!h.progressing.empty()) m.set("hang_progressing", h.progressing);
  if (h.survived_abort) m.set("hang_survived", 1);
}

std::optional<HangFacts> get_hang(Fields& f) {
  const auto timeout = f.maybe_number("hang_timeout_ms", 1, 86400000);
  if (!timeout) return std::nullopt;
  HangFacts h;
  h.timeout_ms = std::uint32_t(*timeout);
  h.since_ms = f.number("hang_since_ms", 1, ~0ull >> 1);
  h.where = StalledIn(f.number("hang_in", 0, 2));
  h.step = f.maybe_number("hang_step", 0, ~0ull);
  h.never = f.flag("hang_never");
  h.stalled = f.runs("hang_stalled", 0, kMaxRank, kMaxWorkersPerNode);
  h.progressing = f.runs("hang_progressing", 0, kMaxRank, kMaxWorkersPerNode);
  h.survived_abort = f.flag("hang_survived");
  return h;
}

void put_failure(Message& m, const Failure& f) {
  m.set("kind", kind_name(f.kind)).set("attempt", f.attempt);
  if (f.at_rendezvous) m.set("rendezvous", 1);
  m.set("node", f.node);
  set_text(m, "host", f.host);
  set_text(m, "addr", f.addr);
  if (f.rank) m.set("rank", *f.rank);
  if (f.local_rank) m.set("local", *f.local_rank);
  set_text(m, "time", f.time);
  m.set("code", std::uint64_t(f.exit_code));
  if (f.signal) m.set("signal", std::uint64_t(f.signal));
  set_text(m, "detail", f.detail);
  set_text(m, "consequence", f.consequence);
  set_text(m, "tail", f.stderr_tail);
  set_text(m, "error_file", f.error_file);
  if (f.hang) put_hang(m, *f.hang);
  if (f.cls) m.set("class", class_name(*f.cls));
}

Failure get_failure(Fields& fields) {
  Failure f;
  const auto kind = fields.text("kind");
  if (const auto k = kind_from_name(kind))
    f.kind = *k;
  else if (!kind.empty())
    fields.note("unknown failure kind '" + printable(kind, 40) + "'");
  f.attempt = std::uint32_t(fields.number("attempt", 0, kMaxAttempt));
  f.at_rendezvous = fields.flag("rendezvous");
  f.node = std::uint32_t(fields.number("node", 0, kMaxNode));
  f.host = fields.maybe_text("host");
  f.addr = fields.maybe_text("addr");
  f.rank = fields.maybe_number("rank", 0, kMaxRank);
  f.local_rank = fields.maybe_number("local", 0, kMaxWorkersPerNode);
  f.time = fields.maybe_text("time");
  f.exit_code = int(fields.number("code", 0, 255));
  f.signal = int(fields.maybe_number("signal", 1, 127).value_or(0));
  f.detail = fields.maybe_text("detail");
  f.consequence = fields.maybe_text("consequence");
  f.stderr_tail = fields.maybe_text("tail");
  f.error_file = fields.maybe_text("error_file");
  f.hang = get_hang(fields);
  if (const auto cls = fields.maybe_text("class"); !cls.empty()) {
    f.cls = class_from_name(cls);
    if (!f.cls) fields.note("unknown failure class '" + printable(cls, 40) + "'");
  }
  return f;
}

// A worker's stderr tail is the one field of any length: halve it (its
// newest half) until the line fits.
Message fitted(Message m) {
  while (encode(m).empty()) {
    const auto tail = m.get("tail");
    if (!tail || tail->empty()) break;
    m.set("tail", "..." + tail->substr(tail->size() / 2 + 3));
  }
  return m;
}

Result<Failure> parse_failure_line(std::string_view line) {
  auto m = decode(line);
  if (!m) return fail(m.error());
  auto fail_message = Fail::from_message(*m);
  if (!fail_message) return fail(fail_message.error());
  return fail_message->failure;
}

// One message of a variant V, read as T.
template <class T, class V>
Result<V> as(const Message& m) {
  auto r = T::from_message(m);
  if (!r) return fail(r.error());
  return V(std::move(r).value());
}

}  // namespace

// ---- the handshake ---------------------------------------------------------

Message Challenge::to_message() const {
  Message m{"CHALLENGE", {}};
  return m.set("version", kChallengeFormVersion)
      .set("protocol", version)
      .set("release", release)
      .set("run", run)
      .set("nonce", nonce);
}

Result<Challenge> Challenge::from_message(const Message& m) {
  Fields f(m, "CHALLENGE");
  Challenge c;
  const auto form = f.number("version", 0, 1u << 20);
  c.version = std::uint32_t(f.maybe_number("protocol", 0, 1u << 20).value_or(form));  // before 5: `version`
  c.release = f.maybe_text("release");
  c.run = f.text("run");
  c.nonce = f.text("nonce");
  return f.done(std::move(c));
}

Message Response::to_message() const {
  Message m{"RESPONSE", {}};
  return m.set("node", node).set("cnonce", cnonce).set("mac", mac).set("version", version).set("release", release);
}

Result<Response> Response::from_message(const Message& m) {
  Fields f(m, "RESPONSE");
  Response r;
  r.node = std::uint32_t(f.number("node", 0, kMaxNode));
  r.cnonce = f.text("cnonce");
  r.mac = f.text("mac");
  r.version = std::uint32_t(f.maybe_number("version", 0, 1u << 20).value_or(3));  // protocol 3 sends none
  r.release = f.maybe_text("release");
  return f.done(std::move(r));
}

Message Welcome::to_message() const { return Message{"WELCOME", {{"mac", mac}}}; }

Result<Welcome> Welcome::from_message(const Message& m) {
  Fields f(m, "WELCOME");
  Welcome w{f.text("mac")};
  return f.done(std::move(w));
}

Message Refused::to_message() const {
  Message m{"REFUSED", {{"reason", reason}}};
  return set_text(m, "mac", mac);
}

Result<Refused> Refused::from_message(const Message& m) {
  Fields f(m, "REFUSED");
  Refused r{f.text("reason"), f.maybe_text("mac")};
  return f.done(std::move(r));
}

Message Elsewhere::to_message() const { return Message{"ELSEWHERE", {{"run", run}}}; }

Result<Elsewhere> Elsewhere::from_message(const Message& m) {
  Fields f(m, "ELSEWHERE");
  Elsewhere e{f.text("run")};
  return f.done(std::move(e));
}

std::string refusal_for_version(std::uint32_t node, const std::string& from, const Response& theirs) {
  // Agents of protocol 3 do not say their release.
  const auto release = [](const std::string& r) { return r.empty() ? std::string("of an older release") : r; };
  return "node " + std::to_string(node) + " (" + from + ") runs slurm-ddp " + printable(release(theirs.release), 40) +
         " (rendezvous protocol " + std::to_string(theirs.version) + ") but node 0 runs slurm-ddp " + kVersion +
         " (protocol " + std::to_string(kProtocolVersion) +
         "): install the same slurm-ddp release on every node of the step";
}

// ---- agent -> coordinator --------------------------------------------------

Message Join::to_message() const {
  Message m{"JOIN", {}};
  m.set("nproc", nproc).set("workers", encode_placements(workers)).set("host", host).set("addr", addr);
  if (check_port != 0) m.set("check_port", check_port);
  return set_text(m, "slurm_node", slurm_node);
}

Result<Join> Join::from_message(const Message& m) {
  Fields f(m, "JOIN");
  Join j;
  j.nproc = std::uint32_t(f.number("nproc", 1, kMaxWorkersPerNode));
  j.workers = f.parsed("workers", parse_placements);
  j.host = f.text("host");
  j.addr = f.text("addr");
  j.slurm_node = f.maybe_text("slurm_node");
  j.check_port = std::uint16_t(f.maybe_number("check_port", 1, 65535).value_or(0));
  return f.done(std::move(j));
}

Message Heartbeat::to_message() const { return Message{"HB", {}}; }

Result<Heartbeat> Heartbeat::from_message(const Message& m) { return Fields(m, "HB").done(Heartbeat{}); }

Message Fail::to_message() const {
  Message m{"FAIL", {}};
  put_failure(m, failure);
  return fitted(std::move(m));
}

Result<Fail> Fail::from_message(const Message& m) {
  Fields f(m, "FAIL");
  Fail fail_message{get_failure(f)};
  return f.done(std::move(fail_message));
}

Message Hanging::to_message() const { return Message{"HANGING", {}}.set("attempt", attempt); }

Result<Hanging> Hanging::from_message(const Message& m) {
  Fields f(m, "HANGING");
  Hanging h{std::uint32_t(f.number("attempt", 0, kMaxAttempt))};
  return f.done(h);
}

Message Load::to_message() const {
  Message m{"LOAD", {}};
  m.set("attempt", attempt).set("window_ms", window_ms).set("on_cpu", on_cpu).set("waiting", waiting);
  if (throttled) m.set("throttled", *throttled);
  if (!nccl.empty()) m.set("nccl", nccl);
  return m;
}

Result<Load> Load::from_message(const Message& m) {
  Fields f(m, "LOAD");
  Load l;
  l.attempt = std::uint32_t(f.number("attempt", 0, kMaxAttempt));
  l.window_ms = std::uint32_t(f.number("window_ms", 1, 600000));
  l.on_cpu = f.runs("on_cpu", 0, 1000, kMaxWorkersPerNode);
  l.waiting = f.runs("waiting", 0, 1000, kMaxWorkersPerNode);
  if (l.on_cpu.size() != l.waiting.size()) f.note("LOAD: on_cpu and waiting differ in length");
  if (const auto t = f.maybe_number("throttled", 0, 1000)) l.throttled = std::uint32_t(*t);
  if (m.get("nccl")) l.nccl = f.runs("nccl", 0, 1000, kMaxWorkersPerNode);
  if (!l.nccl.empty() && l.nccl.size() != l.on_cpu.size()) f.note("LOAD: nccl and on_cpu differ in length");
  return f.done(std::move(l));
}

Message Stopped::to_message() const {
  Message m{"STOPPED", {}};
  m.set("attempt", attempt);
  return set_text(m, "unhealthy", unhealthy);
}

Result<Stopped> Stopped::from_message(const Message& m) {
  Fields f(m, "STOPPED");
  Stopped s{std::uint32_t(f.number("attempt", 0, kMaxAttempt)), f.maybe_text("unhealthy")};
  return f.done(std::move(s));
}

Message Signalled::to_message() const { return Message{"SIGNALLED", {}}.set("signal", signal); }

Result<Signalled> Signalled::from_message(const Message& m) {
  Fields f(m, "SIGNALLED");
  Signalled s{std::uint32_t(f.number("signal", 1, 64))};
  return f.done(std::move(s));
}

Message Finished::to_message() const { return Message{"FINISHED", {}}.set("attempt", attempt); }

Result<Finished> Finished::from_message(const Message& m) {
  Fields f(m, "FINISHED");
  Finished done{std::uint32_t(f.number("attempt", 0, kMaxAttempt))};
  return f.done(done);
}

// ---- coordinator -> agent --------------------------------------------------

Message Start::to_message() const {
  Message m{"START", {}};
  return m.set("attempt", attempt)
      .set("master_addr", master_addr)
      .set("master_port", master_port)
      .set("groups", group_nodes)
      .set("counts", group_workers);
}

Result<Start> Start::from_message(const Message& m) {
  Fields f(m, "START");
  Start s;
  s.attempt = std::uint32_t(f.number("attempt", 0, kMaxAttempt));
  s.master_addr = f.text("master_addr");
  if (s.master_addr.empty()) f.note("START: master_addr is empty");
  s.master_port = std::uint16_t(f.number("master_port", 1, 65535));
  s.group_nodes = f.runs("groups", 0, kMaxNode, kMaxNode + 1);
  s.group_workers = f.runs("counts", 1, kMaxWorkersPerNode, kMaxNode + 1);
  if (s.group_nodes.empty() || s.group_nodes.size() != s.group_workers.size())
    f.note("START names " + std::to_string(s.group_nodes.size()) + " group(s) but gives " +
           std::to_string(s.group_workers.size()) + " worker count(s)");
  return f.done(std::move(s));
}

Message Stop::to_message() const { return Message{"STOP", {}}.set("attempt", attempt); }

Result<Stop> Stop::from_message(const Message& m) {
  Fields f(m, "STOP");
  Stop s{std::uint32_t(f.number("attempt", 0, kMaxAttempt))};
  return f.done(s);
}

Message Bye::to_message() const { return Message{"BYE", {}}; }

Result<Bye> Bye::from_message(const Message& m) { return Fields(m, "BYE").done(Bye{}); }

// Success is DONE alone; a failed job's DONE carries its root cause.
Message Done::to_message() const {
  Message m{"DONE", {}};
  if (!verdict.cause) return m;
  const RootCause& c = *verdict.cause;
  put_failure(m, c.failure);
  m.set("attempts", c.attempts);
  set_text(m, "also_stalled", format_stalled(c.also_stalled));
  if (c.related) {
    const auto line = encode(Fail{*c.related}.to_message());
    set_text(m, "related", line.empty() ? "" : line.substr(0, line.size() - 1));
  }
  if (c.restarts_exhausted) m.set("restarts_exhausted", *c.restarts_exhausted);
  set_text(m, "left", format_words(c.left));
  return fitted(std::move(m));
}

Result<Done> Done::from_message(const Message& m) {
  Fields f(m, "DONE");
  Done done;
  if (!m.get("kind")) return f.done(done);
  RootCause c;
  c.failure = get_failure(f);
  c.attempts = std::uint32_t(f.number("attempts", 1, kMaxRestarts + 1));
  c.also_stalled = f.parsed("also_stalled", parse_stalled);
  if (m.get("related")) c.related = f.parsed("related", parse_failure_line);
  c.restarts_exhausted = f.maybe_number("restarts_exhausted", 0, kMaxRestarts);
  c.left = f.parsed("left", parse_words);
  done.verdict.cause = std::move(c);
  return f.done(std::move(done));
}

// ---- by verb ---------------------------------------------------------------

Result<Report> decode_report(const Message& m) {
  if (m.verb == "HB") return as<Heartbeat, Report>(m);
  if (m.verb == "JOIN") return as<Join, Report>(m);
  if (m.verb == "FAIL") return as<Fail, Report>(m);
  if (m.verb == "HANGING") return as<Hanging, Report>(m);
  if (m.verb == "LOAD") return as<Load, Report>(m);
  if (m.verb == "STOPPED") return as<Stopped, Report>(m);
  if (m.verb == "FINISHED") return as<Finished, Report>(m);
  if (m.verb == "CHECKED") return as<Checked, Report>(m);
  if (m.verb == "SIGNALLED") return as<Signalled, Report>(m);
  return fail("an agent does not send " + printable(m.verb, 40));
}

Result<Order> decode_order(const Message& m) {
  if (m.verb == "HB") return as<Heartbeat, Order>(m);
  if (m.verb == "START") return as<Start, Order>(m);
  if (m.verb == "STOP") return as<Stop, Order>(m);
  if (m.verb == "BYE") return as<Bye, Order>(m);
  if (m.verb == "DONE") return as<Done, Order>(m);
  if (m.verb == "CHECKCPU") return as<CheckCompute, Order>(m);
  if (m.verb == "CHECKNET") return as<CheckNetwork, Order>(m);
  return fail("the coordinator does not send " + printable(m.verb, 40));
}

}  // namespace ddp::rdzv
