// The rendezvous' authentication from protocol 9 on, with no I/O: the
// handshake's proofs, bound to node 0's endpoint as well as to the step, the
// node and both nonces; and the seal every message carries after the
// handshake, so that nothing on the way (a process relaying between a port
// it squats and node 0's real one, a forged or replayed line) is acted on.
// Protocol 1-8's proofs (rdzv_protocol.hpp's client_mac/server_mac) stay,
// only to name an older release's agent and be named by it.
//
//   coordinator -> agent : CHALLENGE ... nonce=<snonce>
//   agent -> coordinator : RESPONSE node=<n> cnonce=<cnonce> mac=<client_proof>
//   coordinator -> agent : WELCOME mac=<server_proof>
//                      or REFUSED reason=<why> [mac=<refusal_proof>]
//   then every line both ways: "<message> seq=<n> mac=<seal>" (Seal)
//
// Each proof is HMAC-SHA256 keyed with the secret's text over
//   "slurm-ddp rdzv v2 <role> run=<run> node=<node> snonce=<s> cnonce=<c> addr=<addr> port=<port>"
// (run, the nonces and addr percent-encoded; a refusal's proof adds
// " reason=<percent-encoded reason>"): the agent binds the address and port
// it connected to, node 0 the connection's own (getsockname), so a proof
// made for another port never verifies. The session's key is the same HMAC
// with role "session-key".
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "ddp/base/result.hpp"

namespace ddp::rdzv {

inline constexpr int kAuthVersion2 = 2;

// Node 0's rendezvous as both ends see it: the agent the address (IPv4, as
// inet_ntop writes it) and port it connected to; node 0 the connection's
// own address and port.
struct Endpoint {
  std::string addr;
  std::uint16_t port = 0;
};

// What one handshake's proofs bind.
struct HandshakeFacts {
  std::string_view secret;
  std::string_view run;
  std::uint32_t node = 0;
  std::string_view server_nonce, client_nonce;
  Endpoint node0;
};

std::string client_proof(const HandshakeFacts& facts);
std::string server_proof(const HandshakeFacts& facts);
// Node 0's own refusal (a node already in, a node taken out): the agent
// ends on it. Any other REFUSED is a stranger's word and passed by.
std::string refusal_proof(const HandshakeFacts& facts, std::string_view reason);
std::string session_key(const HandshakeFacts& facts);

// A pre-flight transfer's first line, "<token> <proof>\n": node 0's token
// (CHECKNET's, 32 hex digits) and its proof, HMAC-SHA256 keyed with the
// secret over "slurm-ddp check v1 run=<run> token=<token>". The receiving
// node checks it before the bytes count: a stranger's connection is never a
// transfer, and never displaces one. The sender gets the line in its
// environment (SLURM_DDP_CHECK_HEAD), never on its command line.
std::string transfer_head(std::string_view secret, std::string_view run, std::string_view token);
// The token of a head line (without its '\n') that proves the secret.
std::optional<std::string> verified_token(std::string_view secret, std::string_view run, std::string_view head);
inline constexpr std::size_t kTransferHeadBytes = 32 + 1 + 64 + 1;  // with its '\n'

// An agent of this release answering the challenge of an older protocol
// (so that an older node 0 can name both releases) makes its client nonce
// with this mark in front. The older proof covers the nonce, so nobody can
// take the mark off: node 0 of this release, shown such an answer as an
// older agent's, knows it was relayed from another port, not sent by an
// older agent, and does not end the step on it.
std::string marked_client_nonce();
bool is_marked(std::string_view client_nonce);

// Every line after the handshake, both ways: numbered from 0 in each
// direction and MAC'd with the session's key, the direction and the number
// included. A line that fails (injected, altered, replayed, reordered, or
// without a seal) is an error naming it, and is dropped: the number is not
// used up, so the real lines that follow still open.
class Seal {
 public:
  enum class Side { Agent, Node0 };
  Seal(std::string_view key, Side side);
  ~Seal();
  Seal(Seal&&) noexcept;
  Seal& operator=(Seal&&) noexcept;

  // `line` (an encoded message without its '\n') with " seq=<n> mac=<hex>".
  std::string close(std::string_view line);
  // The message line inside a sealed `line` (without '\n'), when its
  // number is the next expected and its MAC verifies.
  Result<std::string> open(std::string_view line);

  // What a seal adds to a line, at most.
  static constexpr std::size_t kOverhead = 5 + 20 + 5 + 64;

 private:
  std::string mac(std::string_view direction, std::uint64_t seq, std::string_view line);
  struct Hmac;
  std::unique_ptr<Hmac> hmac_;
  Side side_;
  std::uint64_t sent_ = 0, opened_ = 0;
};

}  // namespace ddp::rdzv
