// rdzv_auth.hpp: the handshake's proofs bind node 0's endpoint; the seal
// lets through each line once, in order, in its own direction only.
#include <string>

#include "ddp/wire/rdzv_auth.hpp"
#include "ddp/wire/rdzv_protocol.hpp"
#include "suites.hpp"

using namespace ddp;
using namespace ddp::rdzv;

namespace {

const std::string kAuthSecret = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
const std::string kAuthServerNonce(64, 'a');
const std::string kAuthClientNonce(64, 'c');

HandshakeFacts auth_facts(std::string_view addr = "10.0.0.1", std::uint16_t port = 29400) {
  return {kAuthSecret, "4242.0", 3, kAuthServerNonce, kAuthClientNonce, {std::string(addr), port}};
}

}  // namespace

START_TEST(each_proof_binds_node_0s_address_and_port) {
  const auto base = auth_facts();
  const auto client = client_proof(base);
  ck_assert_uint_eq(client.size(), 64);
  CK_STR_EQ(client_proof(auth_facts()), client);  // deterministic
  ck_assert(client != client_proof(auth_facts("10.0.0.1", 29401)));
  ck_assert(client != client_proof(auth_facts("10.0.0.2", 29400)));
  ck_assert(client != client_proof(auth_facts("127.0.0.1", 29400)));
  auto other = base;
  other.node = 4;
  ck_assert(client != client_proof(other));
  const std::string other_secret(64, 'f');  // (the facts hold views: the string outlives them)
  other = base;
  other.secret = other_secret;
  ck_assert(client != client_proof(other));
  // The roles never stand in for each other, nor the older proofs for these.
  const auto server = server_proof(base);
  ck_assert(server != client && server != session_key(base) && server != refusal_proof(base, ""));
  ck_assert(client != client_mac(kAuthSecret, "4242.0", 3, kAuthServerNonce, kAuthClientNonce));
  ck_assert(refusal_proof(base, "node 3 is in already") != refusal_proof(base, "node 3 was taken out"));
  // Separators cannot be forged through a value.
  ck_assert(client_proof(auth_facts("10.0.0.1 port=1", 2)) != client_proof(auth_facts("10.0.0.1", 12)));
  // No secret, no proof (and mac_equal never takes "").
  other = base;
  other.secret = "";
  CK_STR_EQ(client_proof(other), "");
  ck_assert(!mac_equal(client_proof(other), ""));
}
END_TEST

START_TEST(a_marked_nonce_is_a_nonce_and_is_told_apart) {
  const auto marked = marked_client_nonce();
  ck_assert(check_nonce(marked).ok());
  ck_assert(is_marked(marked));
  ck_assert(marked != marked_client_nonce());  // random after the mark
  for (int i = 0; i < 100; ++i) ck_assert(!is_marked(random_hex(kNonceBytes)));
}
END_TEST

START_TEST(sealed_lines_open_once_in_order_on_the_other_side) {
  const auto key = session_key(auth_facts());
  Seal agent(key, Seal::Side::Agent), node0(key, Seal::Side::Node0);
  const auto first = agent.close("JOIN nproc=2 host=n1");
  const auto second = agent.close("HB");
  CK_CONTAINS(first, "JOIN nproc=2 host=n1 seq=0 mac=");
  ck_assert_uint_le(first.size(), std::string("JOIN nproc=2 host=n1").size() + Seal::kOverhead);
  // In order: each opens once.
  CK_STR_EQ(*node0.open(first), "JOIN nproc=2 host=n1");
  auto replay = node0.open(first);
  ck_assert(!replay.ok());
  CK_CONTAINS(replay.error(), "message 0 where 1 was due (replayed or reordered): 'JOIN nproc=2 host=n1'");
  CK_STR_EQ(*node0.open(second), "HB");
  // Reordered: the third line before the second.
  Seal a2(key, Seal::Side::Agent), n2(key, Seal::Side::Node0);
  const auto l0 = a2.close("A"), l1 = a2.close("B");
  ck_assert(!n2.open(l1).ok());
  CK_STR_EQ(*n2.open(l0), "A");
  CK_STR_EQ(*n2.open(l1), "B");
  // Its own side's lines never open (a line reflected back).
  Seal a3(key, Seal::Side::Agent);
  ck_assert(!a3.open(Seal(key, Seal::Side::Agent).close("HB")).ok());
  // Node 0's lines open at the agent.
  Seal n4(key, Seal::Side::Node0), a4(key, Seal::Side::Agent);
  CK_STR_EQ(*a4.open(n4.close("STOP attempt=1")), "STOP attempt=1");
}
END_TEST

START_TEST(a_line_that_does_not_open_is_named_and_uses_no_number) {
  const auto key = session_key(auth_facts());
  Seal agent(key, Seal::Side::Agent), node0(key, Seal::Side::Node0);
  const auto real = agent.close("FINISHED attempt=0");
  auto r = node0.open("STOPPED attempt=0 unhealthy=x");
  CK_CONTAINS(r.error(), "a message without its seal: 'STOPPED attempt=0 unhealthy=x'");
  r = node0.open("STOPPED attempt=0 seq=0 mac=" + std::string(64, '0'));
  CK_CONTAINS(r.error(), "whose seal does not verify (forged or altered on the way): 'STOPPED attempt=0'");
  // Altered on the way: one byte of the message, or the number.
  auto altered = real;
  altered[9] = 'X';
  ck_assert(!node0.open(altered).ok());
  auto renumbered = real;
  renumbered.replace(renumbered.find("seq=0"), 5, "seq=1");
  ck_assert(!node0.open(renumbered).ok());
  ck_assert(!node0.open("x seq=zz mac=00").ok());
  ck_assert(!node0.open(" seq=0 mac=00").ok());
  Seal stranger(std::string(64, 'f'), Seal::Side::Agent);  // another session's key
  ck_assert(!node0.open(stranger.close("FINISHED attempt=0")).ok());
  CK_STR_EQ(*node0.open(real), "FINISHED attempt=0");  // none of them used up number 0
}
END_TEST

Suite* rdzv_auth_suite() {
  return make_suite("rdzv_auth", {each_proof_binds_node_0s_address_and_port, a_marked_nonce_is_a_nonce_and_is_told_apart,
                                  sealed_lines_open_once_in_order_on_the_other_side,
                                  a_line_that_does_not_open_is_named_and_uses_no_number});
}
