#include "ddp/wire/rdzv_auth.hpp"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/params.h>

#include <charconv>
#include <climits>

#include "ddp/base/parse.hpp"
#include "ddp/wire/rdzv_protocol.hpp"

namespace ddp::rdzv {

namespace {

constexpr std::string_view kMark = "5dd9a9e47a5e1000";  // 16 hex digits, see marked_client_nonce()

std::string proof_input(std::string_view role, const HandshakeFacts& f) {
  return "slurm-ddp rdzv v" + std::to_string(kAuthVersion2) + " " + std::string(role) + " run=" + percent_encode(f.run) +
         " node=" + std::to_string(f.node) + " snonce=" + percent_encode(f.server_nonce) +
         " cnonce=" + percent_encode(f.client_nonce) + " addr=" + percent_encode(f.node0.addr) +
         " port=" + std::to_string(f.node0.port);
}

}  // namespace

std::string client_proof(const HandshakeFacts& facts) {
  return hmac_sha256_hex(facts.secret, proof_input("client-mac", facts));
}

std::string server_proof(const HandshakeFacts& facts) {
  return hmac_sha256_hex(facts.secret, proof_input("server-mac", facts));
}

std::string refusal_proof(const HandshakeFacts& facts, std::string_view reason) {
  return hmac_sha256_hex(facts.secret, proof_input("refusal-mac", facts) + " reason=" + percent_encode(reason));
}

std::string session_key(const HandshakeFacts& facts) {
  return hmac_sha256_hex(facts.secret, proof_input("session-key", facts));
}

std::string transfer_head(std::string_view secret, std::string_view run, std::string_view token) {
  const auto proof = hmac_sha256_hex(secret, "slurm-ddp check v1 run=" + percent_encode(run) + " token=" + percent_encode(token));
  return std::string(token) + " " + proof + "\n";
}

std::optional<std::string> verified_token(std::string_view secret, std::string_view run, std::string_view head) {
  if (head.size() != kTransferHeadBytes - 1 || head[32] != ' ') return std::nullopt;
  const auto token = head.substr(0, 32);
  if (token.find_first_not_of("0123456789abcdef") != std::string_view::npos) return std::nullopt;
  const auto expected = transfer_head(secret, run, token);
  if (!mac_equal(head.substr(33), std::string_view(expected).substr(33, 64))) return std::nullopt;
  return std::string(token);
}

std::string marked_client_nonce() {
  return std::string(kMark) + random_hex(kNonceBytes - kMark.size() / 2);
}

bool is_marked(std::string_view client_nonce) { return client_nonce.starts_with(kMark); }

// ---------------------------------------------------------------------------
// Seal: one keyed HMAC context per connection, re-initialised per line with
// its key kept (EVP_MAC_init with no key): node 0 seals and opens a line per
// node and heartbeat, 16,384 of them a second on the largest steps.

struct Seal::Hmac {
  EVP_MAC* mac = nullptr;
  EVP_MAC_CTX* ctx = nullptr;
  bool ok = false;
  explicit Hmac(std::string_view key) {
    mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
    ctx = mac ? EVP_MAC_CTX_new(mac) : nullptr;
    char digest[] = "SHA256";
    const OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                                 OSSL_PARAM_construct_end()};
    ok = ctx && !key.empty() &&
         EVP_MAC_init(ctx, reinterpret_cast<const unsigned char*>(key.data()), key.size(), params) == 1;
  }
  ~Hmac() {
    EVP_MAC_CTX_free(ctx);
    EVP_MAC_free(mac);
  }
  Hmac(const Hmac&) = delete;
  Hmac& operator=(const Hmac&) = delete;
};

Seal::Seal(std::string_view key, Side side) : hmac_(std::make_unique<Hmac>(key)), side_(side) {}
Seal::~Seal() = default;
Seal::Seal(Seal&&) noexcept = default;
Seal& Seal::operator=(Seal&&) noexcept = default;

std::string Seal::mac(std::string_view direction, std::uint64_t seq, std::string_view line) {
  if (!hmac_ || !hmac_->ok || EVP_MAC_init(hmac_->ctx, nullptr, 0, nullptr) != 1) return "";
  const std::string head = "slurm-ddp rdzv v2 seal " + std::string(direction) + " seq=" + std::to_string(seq) + " ";
  unsigned char out[EVP_MAX_MD_SIZE];
  std::size_t len = 0;
  if (EVP_MAC_update(hmac_->ctx, reinterpret_cast<const unsigned char*>(head.data()), head.size()) != 1 ||
      EVP_MAC_update(hmac_->ctx, reinterpret_cast<const unsigned char*>(line.data()), line.size()) != 1 ||
      EVP_MAC_final(hmac_->ctx, out, &len, sizeof out) != 1)
    return "";
  return to_hex(out, len);
}

namespace {
std::string_view sent_direction(Seal::Side side) { return side == Seal::Side::Agent ? "to-node-0" : "from-node-0"; }
std::string_view opened_direction(Seal::Side side) { return side == Seal::Side::Agent ? "from-node-0" : "to-node-0"; }
}  // namespace

std::string Seal::close(std::string_view line) {
  const auto seq = sent_++;
  return std::string(line) + " seq=" + std::to_string(seq) + " mac=" + mac(sent_direction(side_), seq, line);
}

Result<std::string> Seal::open(std::string_view line) {
  const auto quoted = [&] { return "'" + printable(line.substr(0, line.rfind(" seq=")), 60) + "'"; };
  const auto mac_at = line.rfind(" mac=");
  const auto seq_at = line.rfind(" seq=", mac_at);
  if (mac_at == std::string_view::npos || seq_at == std::string_view::npos || seq_at == 0)
    return fail("a message without its seal: " + quoted());
  const auto seq_text = line.substr(seq_at + 5, mac_at - seq_at - 5);
  std::uint64_t seq = 0;
  const auto [end, ec] = std::from_chars(seq_text.data(), seq_text.data() + seq_text.size(), seq);
  if (ec != std::errc{} || end != seq_text.data() + seq_text.size() || seq_text.empty())
    return fail("a message with a malformed seal: " + quoted());
  const auto message = line.substr(0, seq_at);
  if (!mac_equal(line.substr(mac_at + 5), mac(opened_direction(side_), seq, message)))
    return fail("a message whose seal does not verify (forged or altered on the way): " + quoted());
  if (seq != opened_)
    return fail("message " + std::to_string(seq) + " where " + std::to_string(opened_) +
                " was due (replayed or reordered): " + quoted());
  ++opened_;
  return std::string(message);
}

}  // namespace ddp::rdzv
