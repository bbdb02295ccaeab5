// The agents' rendezvous wire protocol and its authentication, with no I/O:
// the line format of every message (encoding and strict decoding), a bounded
// line assembler for a byte stream, and the challenge-response MACs. The
// messages themselves, one struct each, are in rdzv_messages.hpp. Pure
// (except random_hex), so it can be unit-tested and fuzzed; the sockets and
// the coordinator live in agent/.
//
// Everything here reads bytes a peer chose, before it is authenticated: every
// input is bounded, every malformed input is an error value, nothing throws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ddp/base/result.hpp"

namespace ddp::rdzv {

// The challenge-response's version, in the strings the MACs cover (below):
// unchanged since protocol 1. The messages' own version, kProtocolVersion, is
// in rdzv_messages.hpp.
inline constexpr int kAuthVersion = 1;
inline constexpr std::size_t kMaxLineBytes = 16 * 1024;  // a longer line closes the connection
inline constexpr std::size_t kMaxFields = 64;
inline constexpr std::size_t kMaxNameBytes = 32;  // a verb or a key
inline constexpr std::size_t kNonceBytes = 32;    // random bytes in each nonce (hex: twice as many chars)

// One protocol message: one text line "VERB key=value key=value\n".
// VERB: 1-32 chars [A-Z_]. key: 1-32 chars [a-z0-9_], unique within a message.
// value: percent-encoded: bytes outside [A-Za-z0-9._:/,+@-] are written %XX (upper-case hex);
// so values may hold spaces, '=', newlines, any bytes (e.g. the last lines of a worker's stderr).
// Tokens are separated by exactly one space; a value may be empty ("reason=").
struct Message {
  std::string verb;
  std::vector<std::pair<std::string, std::string>> fields;  // in order

  // The (decoded) value of `key`, or nullopt when the message has no such field.
  std::optional<std::string> get(std::string_view key) const;
  // The field parsed as a decimal unsigned number within [min, max]; the error names
  // the verb, the key and (shortened) the value, or says the field is missing.
  Result<std::uint64_t> get_uint(std::string_view key, std::uint64_t min, std::uint64_t max) const;
  // Replaces the value of an existing key in place, else appends the field. Does not
  // validate: encode() refuses a message with a bad key.
  Message& set(std::string key, std::string value);
  Message& set(std::string key, std::uint64_t value);
  // A list of numbers, comma-separated runs: "7", "0-5" (A < B: A, A+1 ..
  // B), "2x16" (2, sixteen times); at least one number, each within [min,
  // max], at most max_items in all; the error names the field. set() writes
  // the shortest of these for each stretch of the list.
  Result<std::vector<std::uint32_t>> get_uint_list(std::string_view key, std::uint32_t min, std::uint32_t max,
                                                   std::size_t max_items) const;
  Message& set(std::string key, const std::vector<std::uint32_t>& values);

  bool operator==(const Message&) const = default;
};

// The line for `m`, ending with '\n'. Returns "" when `m` is not valid - a bad verb or
// key, a duplicate key, more than kMaxFields fields, or a line (without its '\n') over
// kMaxLineBytes - since the peer would refuse it anyway. Verbs and keys are never
// escaped: a bad one is the caller's bug, so it must show, not travel. A caller putting
// unbounded text in a value (a stderr tail) must shorten it until encode() is non-empty.
// For every valid message, decode(encode(m) without '\n') == m.
std::string encode(const Message& m);

// Parses one line WITHOUT its trailing '\n'. Strict, and canonical: it accepts only
// what encode() writes, so decode(x) succeeding implies encode(*decode(x)) == x + '\n'.
// Errors: a line over kMaxLineBytes, a '\r' anywhere (CRLF), an empty line, a bad verb,
// stray or doubled spaces, a field without '=', a bad key, a duplicate key, more than
// kMaxFields fields, a raw byte outside the value alphabet, a bad %-escape (not two
// upper-case hex digits, or escaping a byte that needs none). The messages say what is
// wrong and quote at most ~40 bytes of the input, with unprintable bytes as \xNN.
Result<Message> decode(std::string_view line);

// Numbers in runs, the form lists of node and rank numbers travel in (the
// message's lists, Message::get_uint_list): "7", "0-5" (A < B: A, A+1 .. B),
// "2x16" (2, sixteen times), comma-separated; format_runs writes the shortest
// for each stretch. parse_runs: at least one number, each within [min, max],
// at most max_items in all; errors name `what`.
std::string format_runs(const std::vector<std::uint32_t>& values);
Result<std::vector<std::uint32_t>> parse_runs(std::string_view text, std::uint32_t min, std::uint32_t max,
                                              std::size_t max_items, std::string_view what);

// The value alphabet's encoding on its own (used by encode() and by the MAC strings).
std::string percent_encode(std::string_view raw);
// Its strict inverse; the error names the position of the first bad byte.
Result<std::string> percent_decode(std::string_view encoded);

// Assembles lines from a byte stream (a non-blocking socket) with a bound, so a peer
// cannot make us buffer more than one kMaxLineBytes line plus what one feed() holds.
class LineReader {
 public:
  explicit LineReader(std::size_t max_line = kMaxLineBytes) : max_line_(max_line) {}
  // A peer that proved who it is may send longer lines (up to kMaxLineBytes)
  // than a stranger.
  void set_max_line(std::size_t max_line) { max_line_ = max_line; }
  // Appends bytes. Error when a line grows past the limit, with or without its
  // '\n' yet (then the reader is poisoned: it drops what it holds, every later feed()
  // errors and next() returns nullopt, including for lines completed before - the
  // connection is to be closed, so nothing more from that peer is acted on).
  Status feed(std::string_view bytes);
  // The next complete line without its '\n', or nullopt.
  std::optional<std::string> next();
  // Bytes fed and not yet returned by next() (each complete line's '\n' included).
  std::size_t buffered() const;

 private:
  std::deque<std::string> lines_;  // complete lines, without '\n'
  std::string partial_;            // the line after the last '\n' so far
  std::size_t buffered_ = 0;
  std::size_t max_line_;
  bool poisoned_ = false;
};

// Authentication: a per-job secret both ends know; challenge-response, the secret never on the wire.
//   coordinator -> agent : CHALLENGE version=<kProtocolVersion> release=<slurm-ddp's> run=<run id> nonce=<32 random bytes hex>
//   agent -> coordinator : RESPONSE node=<node rank> cnonce=<hex> mac=<client_mac(...)> version=.. release=..
//   coordinator -> agent : WELCOME mac=<server_mac(...)>     (mutual: the agent checks it)
//                      or REFUSED reason=<text>
// (the messages: rdzv_messages.hpp)
// Both MACs are HMAC-SHA256 keyed with the secret's text (the 64 hex characters as they
// are, not decoded), over a domain-separated string that binds the role, the protocol
// version, the run id, the node rank and both nonces:
//   "slurm-ddp rdzv v1 client-mac run=<run> node=<node> snonce=<server nonce> cnonce=<client nonce>"
//   "slurm-ddp rdzv v1 server-mac run=<run> node=<node> snonce=<server nonce> cnonce=<client nonce>"
// with run and both nonces percent_encode()d (so no input can forge a separator), node in
// decimal, single spaces, no newline. So a response from another job (other secret or
// run id), a replay against a fresh server nonce, or a server MAC reflected as a client
// MAC never verifies. The MACs are 64 lower-case hex characters; "" when `secret` is
// empty or OpenSSL fails, and mac_equal() never accepts "".

// `bytes` random bytes as lower-case hex (2 * bytes characters), from getrandom(2); on a
// kernel without getrandom (ENOSYS, old kernels or seccomp sandboxes) from /dev/urandom.
// Aborts the process only when neither entropy source works: a predictable nonce would
// quietly defeat the authentication, and there is no sensible way to carry on.
std::string random_hex(std::size_t bytes);
// `size` bytes as lower-case hex; HMAC-SHA256 keyed with `key` over `data`,
// in it ("" for an empty key, or when OpenSSL fails: mac_equal never takes "").
std::string to_hex(const unsigned char* data, std::size_t size);
std::string hmac_sha256_hex(std::string_view key, std::string_view data);
std::string client_mac(std::string_view secret, std::string_view run_id, std::uint32_t node,
                       std::string_view server_nonce, std::string_view client_nonce);
std::string server_mac(std::string_view secret, std::string_view run_id, std::uint32_t node,
                       std::string_view server_nonce, std::string_view client_nonce);
// Constant time in the length of the strings (CRYPTO_memcmp). False on a length
// mismatch, and false when either is empty (a failed MAC computation is "").
bool mac_equal(std::string_view a, std::string_view b);
// The secret as it travels in the job environment (SLURM_DDP_SECRET): 64 hex characters
// (either case). The error says what is wrong (length, or position of a non-hex
// character) and never contains the value or any part of it.
Status check_secret(std::string_view secret);
// A nonce as random_hex(kNonceBytes) makes it: 2 * kNonceBytes hex characters (either
// case). Each end checks the other's, so a peer cannot weaken freshness with a short one.
Status check_nonce(std::string_view nonce);

}  // namespace ddp::rdzv
