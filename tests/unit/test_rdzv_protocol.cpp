#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "ddp/wire/rdzv_messages.hpp"
#include "ddp/wire/rdzv_protocol.hpp"
#include "suites.hpp"

using namespace ddp;
using namespace ddp::rdzv;
using namespace std::string_literals;

namespace {

// The line encode() wrote, without its '\n', decoded again.
Result<Message> redecode(const Message& m) {
  const auto line = encode(m);
  ck_assert_msg(!line.empty() && line.back() == '\n', "encode() refused a valid message");
  return decode(std::string_view(line).substr(0, line.size() - 1));
}

// decode() must refuse `line` with an error containing `needle`.
void expect_refused(std::string_view line, const std::string& needle) {
  const auto r = decode(line);
  ck_assert_msg(!r.ok(), "decode accepted '%s'", std::string(line).c_str());
  CK_CONTAINS(r.error(), needle);
}

const std::string kSecret = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
const std::string kServerNonce(64, 'a');
const std::string kClientNonce(64, 'c');

}  // namespace

// ---------------------------------------------------------------------------
// encode / decode

START_TEST(encodes_the_documented_line_and_decodes_it_back) {
  Message m{"HELLO", {}};
  m.set("node", std::uint64_t{3}).set("run", "4242.0").set("addr", "10.0.0.1:29500");
  CK_STR_EQ(encode(m), "HELLO node=3 run=4242.0 addr=10.0.0.1:29500\n");
  const auto back = redecode(m);
  ck_assert(back.ok());
  ck_assert(*back == m);
  CK_STR_EQ(back->verb, "HELLO");
  ck_assert_uint_eq(back->fields.size(), 3);
  CK_STR_EQ(back->fields[2].first, "addr");  // order kept
}
END_TEST

START_TEST(verb_only_and_empty_values) {
  CK_STR_EQ(encode(Message{"PING", {}}), "PING\n");
  const auto ping = decode("PING");
  ck_assert(ping.ok());
  CK_STR_EQ(ping->verb, "PING");
  ck_assert_uint_eq(ping->fields.size(), 0);

  const auto empty = decode("REFUSED reason= x=");
  ck_assert(empty.ok());
  CK_STR_EQ(*empty->get("reason"), "");
  CK_STR_EQ(*empty->get("x"), "");
  CK_STR_EQ(encode(*empty), "REFUSED reason= x=\n");
}
END_TEST

START_TEST(values_with_any_bytes_round_trip) {
  Message m{"FAILED", {}};
  m.set("spaces", "a b  c").set("eq", "k=v==").set("pct", "100%25 %").set("nl", "line 1\nline 2\r\n");
  m.set("utf8", "d\xc3\xa9j\xc3\xa0 vu").set("nul", "a\0b\0"s).set("empty", "").set("high", "\xff\x80\x01");
  const auto line = encode(m);
  // The escapes are upper-case hex, and only the bytes outside the alphabet are escaped.
  CK_CONTAINS(line, " spaces=a%20b%20%20c ");
  CK_CONTAINS(line, " eq=k%3Dv%3D%3D ");
  CK_CONTAINS(line, " pct=100%2525%20%25 ");
  CK_CONTAINS(line, " nl=line%201%0Aline%202%0D%0A ");
  CK_CONTAINS(line, " utf8=d%C3%A9j%C3%A0%20vu ");
  CK_CONTAINS(line, " nul=a%00b%00 ");
  CK_CONTAINS(line, " empty= ");
  CK_CONTAINS(line, " high=%FF%80%01\n");
  ck_assert_uint_eq(line.find('\n'), line.size() - 1);  // one line, whatever the values hold
  const auto back = redecode(m);
  ck_assert(back.ok());
  ck_assert(*back == m);
  ck_assert(*back->get("nul") == "a\0b\0"s);
  ck_assert_uint_eq(back->get("nul")->size(), 4);
}
END_TEST

START_TEST(every_byte_round_trips_and_the_alphabet_stays_raw) {
  std::string all;
  for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
  const auto decoded = percent_decode(percent_encode(all));
  ck_assert(decoded.ok());
  ck_assert(*decoded == all);
  const std::string alphabet = "ABCXYZabcxyz0189._:/,+@-";
  CK_STR_EQ(percent_encode(alphabet), alphabet);
  CK_STR_EQ(percent_encode("~ !*'()"), "%7E%20%21%2A%27%28%29");
}
END_TEST

START_TEST(set_replaces_in_place_and_get_finds) {
  Message m{"X", {}};
  m.set("a", "1").set("b", "2").set("a", std::uint64_t{18446744073709551615u});
  ck_assert_uint_eq(m.fields.size(), 2);
  CK_STR_EQ(m.fields[0].first, "a");
  CK_STR_EQ(m.fields[0].second, "18446744073709551615");
  CK_STR_EQ(*m.get("b"), "2");
  ck_assert(!m.get("c").has_value());
  ck_assert(!m.get("").has_value());
}
END_TEST

START_TEST(get_uint_checks_presence_form_and_range) {
  const auto m =
      *decode("RESPONSE node=7 big=18446744073709551616 neg=-1 plus=+1 hex=0x1 empty= long=" + std::string(1000, '9'));
  ck_assert_uint_eq(*m.get_uint("node", 0, 7), 7);
  ck_assert_uint_eq(*m.get_uint("node", 7, 7), 7);

  const auto missing = m.get_uint("rank", 0, 10);
  ck_assert(!missing.ok());
  CK_CONTAINS(missing.error(), "RESPONSE");
  CK_CONTAINS(missing.error(), "'rank' is missing");

  const auto over = m.get_uint("node", 0, 6);
  ck_assert(!over.ok());
  CK_CONTAINS(over.error(), "RESPONSE node='7' is out of range");
  CK_CONTAINS(over.error(), "between 0 and 6");
  CK_CONTAINS(m.get_uint("node", 8, 9).error(), "out of range");
  CK_CONTAINS(m.get_uint("big", 0, UINT64_MAX).error(), "out of range");
  for (const char* bad : {"neg", "plus", "hex", "empty"}) {
    const auto r = m.get_uint(bad, 0, 100);
    ck_assert(!r.ok());
    CK_CONTAINS(r.error(), "RESPONSE " + std::string(bad) + "=");
    CK_CONTAINS(r.error(), "not a whole number between 0 and 100");
  }
  // A peer's 1000-digit value is shortened in the message.
  const auto longer = m.get_uint("long", 0, 100);
  ck_assert(!longer.ok());
  ck_assert_uint_lt(longer.error().size(), 120);
  CK_CONTAINS(longer.error(), "'...");
}
END_TEST

START_TEST(encode_refuses_invalid_messages) {
  const auto with = [](std::string verb, std::string key) {
    Message m{std::move(verb), {}};
    m.set(std::move(key), "v");
    return encode(m);
  };
  ck_assert(!with("OK", "k").empty());
  CK_STR_EQ(with(std::string(32, 'V'), std::string(32, 'k')),
            std::string(32, 'V') + " " + std::string(32, 'k') + "=v\n");
  for (const char* verb : {"", "hello", "HEL-LO", "HELLO1", "A B", "\xc3\x89"}) CK_STR_EQ(with(verb, "k"), "");
  CK_STR_EQ(with(std::string(33, 'V'), "k"), "");
  for (const char* key : {"", "Key", "k-1", "k=1", "a b", "k%"}) CK_STR_EQ(with("OK", key), "");
  CK_STR_EQ(with("OK", std::string(33, 'k')), "");

  Message dup{"DUP", {{"a", "1"}, {"b", "2"}, {"a", "3"}}};  // built by hand: set() would replace
  CK_STR_EQ(encode(dup), "");

  Message many{"MANY", {}};
  for (std::size_t i = 0; i < kMaxFields; ++i) many.set("k" + std::to_string(i), "v");
  ck_assert(!encode(many).empty());
  many.set("one_too_many", "v");
  CK_STR_EQ(encode(many), "");
}
END_TEST

START_TEST(encode_and_decode_agree_on_the_line_bound) {
  // "V k=" + value: exactly kMaxLineBytes bytes before the '\n' is fine, one more is not.
  Message m{"V", {{"k", std::string(kMaxLineBytes - 4, 'x')}}};
  const auto line = encode(m);
  ck_assert_uint_eq(line.size(), kMaxLineBytes + 1);
  ck_assert(decode(std::string_view(line).substr(0, kMaxLineBytes)).ok());
  m.fields[0].second += 'x';
  CK_STR_EQ(encode(m), "");
  expect_refused(std::string(kMaxLineBytes + 1, 'V'), "limit is 16384");
  // Escapes count as their three bytes.
  m.fields[0].second = std::string(kMaxLineBytes / 3, ' ');
  CK_STR_EQ(encode(m), "");
}
END_TEST

START_TEST(decode_rejects_bad_verbs) {
  expect_refused("", "empty line");
  expect_refused("hello a=1", "bad verb 'hello'");
  expect_refused("HEL-LO", "bad verb");
  expect_refused("HELLO1 a=1", "bad verb 'HELLO1'");
  expect_refused(" HELLO a=1", "bad verb ''");
  expect_refused("a=1", "bad verb 'a=1'");
  expect_refused(std::string(33, 'V'), "1-32 characters A-Z or _");
  ck_assert(decode(std::string(32, 'V')).ok());
  ck_assert(decode("_").ok());
}
END_TEST

START_TEST(decode_rejects_stray_spaces) {
  expect_refused("HELLO ", "HELLO: a stray or doubled space at byte 6");
  expect_refused("HELLO  a=1", "stray or doubled space at byte 7");
  expect_refused("HELLO a=1 ", "stray or doubled space at byte 10");
  expect_refused("HELLO a=1  b=2", "stray or doubled space at byte 11");
  expect_refused("HELLO a=1\tb=2", "must be %-escaped");
}
END_TEST

START_TEST(decode_rejects_bad_fields) {
  expect_refused("HELLO node", "HELLO: the field 'node' has no '='");
  expect_refused("HELLO a=1 node", "has no '='");
  expect_refused("HELLO Node=1", "HELLO: bad key 'Node'");
  expect_refused("HELLO =1", "bad key ''");
  expect_refused("HELLO no-de=1", "bad key 'no-de'");
  expect_refused("HELLO " + std::string(33, 'k') + "=1", "1-32 characters a-z, 0-9 or _");
  ck_assert(decode("HELLO " + std::string(32, 'k') + "=1").ok());
  expect_refused("HELLO a=1 b=2 a=3", "HELLO: the key 'a' appears twice");
  expect_refused("HELLO a=1 a=1", "appears twice");
  expect_refused("HELLO a=b=c", "HELLO a: byte 2 ('=') must be %-escaped");
}
END_TEST

START_TEST(decode_rejects_bad_escapes_and_raw_bytes) {
  expect_refused("X v=%", "bad %-escape at byte 1");
  expect_refused("X v=ab%4", "bad %-escape at byte 3");
  expect_refused("X v=%4G", "two upper-case hex digits");
  expect_refused("X v=%zz", "two upper-case hex digits");
  expect_refused("X v=%c3%a9", "two upper-case hex digits");  // lower-case hex is not canonical
  expect_refused("X v=%41", "needless %-escape at byte 1: 'A' is written as itself");
  expect_refused("X v=%2D", "needless");  // '-'
  ck_assert(decode("X v=%3D%C3%A9%00").ok());
  expect_refused("X v=\xc3\xa9", "byte 1 ('\\xc3') must be %-escaped");
  expect_refused("X v=a\0b"s, "byte 2 ('\\x00')");
  expect_refused("X v=a~b", "byte 2 ('~')");
  expect_refused("X v=line\nnext", "('\\x0a')");
}
END_TEST

START_TEST(decode_rejects_crlf_and_counts_fields) {
  expect_refused("HELLO a=1\r", "carriage return (CRLF)");
  expect_refused("HELLO\r", "CRLF");
  expect_refused("HELLO a=1\rb", "must be %-escaped");

  std::string line = "MANY";
  for (std::size_t i = 0; i < kMaxFields; ++i) line += " k" + std::to_string(i) + "=v";
  const auto ok = decode(line);
  ck_assert(ok.ok());
  ck_assert_uint_eq(ok->fields.size(), kMaxFields);
  expect_refused(line + " more=v", "MANY: more than 64 fields");
}
END_TEST

START_TEST(errors_quote_little_of_the_input) {
  const std::string secretish(5000, 'q');
  for (const auto& line : {secretish + " a=1", "HELLO " + secretish + "=1", "HELLO " + secretish,
                           "HELLO k=" + secretish + "%", "HELLO k=" + secretish + "~"}) {
    const auto r = decode(line);
    ck_assert(!r.ok());
    ck_assert_msg(r.error().size() < 160, "error of %zu bytes: %s", r.error().size(), r.error().c_str());
    ck_assert(r.error().find(std::string(41, 'q')) == std::string::npos);
  }
  // Unprintable bytes never reach a log raw.
  const auto r = decode("HELLO k\n\x1b[31m=1");
  ck_assert(!r.ok());
  ck_assert(r.error().find('\n') == std::string::npos && r.error().find('\x1b') == std::string::npos);
  CK_CONTAINS(r.error(), "'k\\x0a\\x1b[31m'");
}
END_TEST

// ---------------------------------------------------------------------------
// LineReader

START_TEST(reader_joins_lines_split_across_feeds) {
  LineReader r;
  ck_assert(r.feed("HEL").ok());
  ck_assert(!r.next().has_value());
  ck_assert_uint_eq(r.buffered(), 3);
  ck_assert(r.feed("LO a=1").ok());
  ck_assert(!r.next().has_value());
  ck_assert(r.feed("\nPI").ok());
  ck_assert_uint_eq(r.buffered(), 12);
  CK_STR_EQ(*r.next(), "HELLO a=1");
  ck_assert_uint_eq(r.buffered(), 2);
  ck_assert(!r.next().has_value());
  ck_assert(r.feed("NG\n").ok());
  CK_STR_EQ(*r.next(), "PING");
  ck_assert(!r.next().has_value());
  ck_assert_uint_eq(r.buffered(), 0);
  ck_assert(r.feed("").ok());
  ck_assert(!r.next().has_value());
}
END_TEST

START_TEST(reader_splits_several_lines_in_one_feed) {
  LineReader r;
  ck_assert(r.feed("A\nB x=1\n\nC\r\nD").ok());
  CK_STR_EQ(*r.next(), "A");
  CK_STR_EQ(*r.next(), "B x=1");
  CK_STR_EQ(*r.next(), "");          // an empty line is a line; decode() refuses it
  CK_STR_EQ(*r.next(), "C\r");       // likewise a CRLF line
  ck_assert(!r.next().has_value());  // "D" waits for its '\n'
  ck_assert_uint_eq(r.buffered(), 1);
  ck_assert(r.feed("\n").ok());
  CK_STR_EQ(*r.next(), "D");
}
END_TEST

START_TEST(reader_bound_is_exact_and_poisons) {
  LineReader r;
  const std::string full(kMaxLineBytes, 'x');
  ck_assert(r.feed(full.substr(0, 100)).ok());
  ck_assert(r.feed(full.substr(100)).ok());  // exactly kMaxLineBytes, no '\n' yet: fine
  ck_assert_uint_eq(r.buffered(), kMaxLineBytes);
  ck_assert(r.feed("\nA\n").ok());
  ck_assert(*r.next() == full);
  CK_STR_EQ(*r.next(), "A");

  ck_assert(r.feed(full).ok());
  const auto over = r.feed("y");  // one more byte without '\n'
  ck_assert(!over.ok());
  CK_CONTAINS(over.error(), "longer than 16384 bytes");
  ck_assert_uint_eq(r.buffered(), 0);
  // Poisoned: nothing more is accepted or returned, even a complete line.
  ck_assert(!r.feed("\nB\n").ok());
  CK_CONTAINS(r.feed("C\n").error(), "after a line longer than 16384 bytes");
  ck_assert(!r.next().has_value());
}
END_TEST

START_TEST(reader_refuses_a_long_line_even_with_its_newline) {
  LineReader r;
  const auto res = r.feed("OK\n" + std::string(kMaxLineBytes + 1, 'x') + "\nLATER\n");
  ck_assert(!res.ok());
  ck_assert(!r.next().has_value());  // "OK" came before, but the peer is done for
  ck_assert(!r.feed("X\n").ok());

  LineReader fresh;  // a long line completed by a later feed
  ck_assert(fresh.feed(std::string(kMaxLineBytes, 'x')).ok());
  ck_assert(!fresh.feed("x\n").ok());
}
END_TEST

// ---------------------------------------------------------------------------
// Authentication

START_TEST(macs_match_an_independent_hmac) {
  // Expected values computed with Python's hmac module over the documented strings:
  // python3 -c 'import hmac,hashlib;k=b"0123456789abcdef"*4;sn="5a"*32;cn="c3"*32
  // for role in ("client-mac","server-mac"):
  //   m=f"slurm-ddp rdzv v1 {role} run=4242.0 node=3 snonce={sn} cnonce={cn}".encode()
  //   print(role,hmac.new(k,m,hashlib.sha256).hexdigest())
  // m=b"slurm-ddp rdzv v1 client-mac run=job%204242%3D0 node=4294967295 snonce=s cnonce=c"
  // print(hmac.new(k,m,hashlib.sha256).hexdigest())'
  std::string sn, cn;
  for (int i = 0; i < 32; ++i) sn += "5a", cn += "c3";
  CK_STR_EQ(client_mac(kSecret, "4242.0", 3, sn, cn),
            "b1459edfc5b14ba583bfca65c7f0e10df29bbd5752336cbaa3f98e51ba783158");
  CK_STR_EQ(server_mac(kSecret, "4242.0", 3, sn, cn),
            "c32a00a3fd27b5e751e26a8e0bd9e6239e6d92d9cae48c4f99c5a5dc95f47d34");
  // The run id is percent-encoded in the string, and the node is the full 32-bit decimal.
  CK_STR_EQ(client_mac(kSecret, "job 4242=0", 4294967295u, "s", "c"),
            "915d2d3dc90437fd77b9b0e2c54b8e418b62b7aaf4df08e1c712f40195191d22");
}
END_TEST

START_TEST(every_input_changes_the_mac) {
  const auto base = client_mac(kSecret, "4242.0", 3, kServerNonce, kClientNonce);
  ck_assert_uint_eq(base.size(), 64);
  CK_STR_EQ(client_mac(kSecret, "4242.0", 3, kServerNonce, kClientNonce), base);  // deterministic
  std::string other_secret = kSecret;
  other_secret[63] = 'e';
  ck_assert(client_mac(other_secret, "4242.0", 3, kServerNonce, kClientNonce) != base);
  ck_assert(client_mac(kSecret, "4243.0", 3, kServerNonce, kClientNonce) != base);
  ck_assert(client_mac(kSecret, "4242.0", 4, kServerNonce, kClientNonce) != base);
  ck_assert(client_mac(kSecret, "4242.0", 3, std::string(64, 'b'), kClientNonce) != base);
  ck_assert(client_mac(kSecret, "4242.0", 3, kServerNonce, std::string(64, 'd')) != base);
  // Client and server MACs differ for the same inputs, so a reflected MAC never verifies.
  const auto server = server_mac(kSecret, "4242.0", 3, kServerNonce, kClientNonce);
  ck_assert(server != base);
  ck_assert(!mac_equal(server, base));
  // No input can move bytes across a field boundary.
  ck_assert(client_mac(kSecret, "r", 1, "ab", "c") != client_mac(kSecret, "r", 1, "a", "bc"));
  ck_assert(client_mac(kSecret, "r snonce=x", 1, "", "") != client_mac(kSecret, "r", 1, "x", ""));
  ck_assert(client_mac(kSecret, "r", 12, "", "") != client_mac(kSecret, "r1", 2, "", ""));
}
END_TEST

START_TEST(empty_secret_gives_no_mac) {
  CK_STR_EQ(client_mac("", "4242.0", 3, kServerNonce, kClientNonce), "");
  CK_STR_EQ(server_mac("", "4242.0", 3, kServerNonce, kClientNonce), "");
  ck_assert(!mac_equal("", ""));
}
END_TEST

START_TEST(mac_equal_compares_whole_strings) {
  const auto mac = client_mac(kSecret, "1", 0, kServerNonce, kClientNonce);
  ck_assert(mac_equal(mac, std::string(mac)));
  std::string flipped = mac;
  flipped[40] = flipped[40] == '0' ? '1' : '0';
  ck_assert(!mac_equal(mac, flipped));
  ck_assert(!mac_equal(mac, mac.substr(0, 63)));
  ck_assert(!mac_equal(mac.substr(0, 63), mac));
  ck_assert(!mac_equal(mac, mac + "0"));
  ck_assert(!mac_equal(mac, ""));
  ck_assert(!mac_equal("", mac));
  ck_assert(mac_equal("a\0b"s, "a\0b"s));  // bytes, not C strings
  ck_assert(!mac_equal("a\0b"s, "a\0c"s));
}
END_TEST

START_TEST(check_secret_accepts_64_hex_and_never_echoes) {
  ck_assert(check_secret(kSecret).ok());
  ck_assert(check_secret("0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF").ok());
  for (const auto& bad : {kSecret.substr(0, 63), kSecret + "0", std::string(), std::string(128, 'a'),
                          "ghijklmn" + kSecret.substr(8, 48) + "01234567"}) {
    const auto r = check_secret(bad);
    ck_assert(!r.ok());
    CK_CONTAINS(r.error(), "SLURM_DDP_SECRET");
    CK_CONTAINS(r.error(), "64 hex characters");
    for (std::size_t i = 0; i + 6 <= bad.size(); ++i)  // no 6-character piece of the value
      ck_assert_msg(r.error().find(bad.substr(i, 6)) == std::string::npos, "error echoes the secret: %s",
                    r.error().c_str());
  }
  CK_CONTAINS(check_secret(kSecret.substr(0, 63)).error(), "63 characters long");
  std::string bad = kSecret;
  bad[10] = 'g';
  CK_CONTAINS(check_secret(bad).error(), "not a hex digit at position 11");
  bad = kSecret;
  bad[0] = ' ';
  ck_assert(!check_secret(bad).ok());
  bad = kSecret;
  bad[63] = '\0';
  ck_assert(!check_secret(bad).ok());
}
END_TEST

START_TEST(check_nonce_wants_the_random_hex_form) {
  ck_assert(check_nonce(kServerNonce).ok());
  CK_CONTAINS(check_nonce("").error(), "the nonce is 0 characters long");
  CK_CONTAINS(check_nonce(std::string(63, 'a')).error(), "64 hex characters");
  CK_CONTAINS(check_nonce(std::string(63, 'a') + "z").error(), "position 64");
}
END_TEST

START_TEST(random_hex_is_hex_of_the_length_and_varies) {
  CK_STR_EQ(random_hex(0), "");
  const auto a = random_hex(kNonceBytes), b = random_hex(kNonceBytes);
  ck_assert_uint_eq(a.size(), 2 * kNonceBytes);
  ck_assert(a != b);
  ck_assert(check_nonce(a).ok());
  ck_assert(check_secret(random_hex(32)).ok());
  ck_assert(a.find_first_not_of("0123456789abcdef") == std::string::npos);
  const auto big = random_hex(1000);  // more than one getrandom() chunk guarantee (256 bytes)
  ck_assert_uint_eq(big.size(), 2000);
  ck_assert(big.find_first_not_of("0123456789abcdef") == std::string::npos);
  ck_assert(big.find(std::string(32, '0')) == std::string::npos);
}
END_TEST

// The documented exchange, through encode/decode/LineReader as the sockets will carry it.
START_TEST(handshake_verifies_both_ways_and_refuses_impostors) {
  const std::string run = "4242.0";
  const auto snonce = random_hex(kNonceBytes);
  LineReader agent_in, coord_in;

  Message challenge{"CHALLENGE", {}};
  challenge.set("version", std::uint64_t(kProtocolVersion)).set("run", run).set("nonce", snonce);
  ck_assert(agent_in.feed(encode(challenge)).ok());
  const auto got_challenge = decode(*agent_in.next());
  ck_assert(got_challenge.ok());
  ck_assert_uint_eq(*got_challenge->get_uint("version", 1, 9), std::uint64_t(kProtocolVersion));
  ck_assert(check_nonce(*got_challenge->get("nonce")).ok());

  const auto cnonce = random_hex(kNonceBytes);
  Message response{"RESPONSE", {}};
  response.set("node", std::uint64_t{5}).set("cnonce", cnonce);
  response.set("mac", client_mac(kSecret, *got_challenge->get("run"), 5, *got_challenge->get("nonce"), cnonce));
  ck_assert(coord_in.feed(encode(response)).ok());
  const auto got_response = decode(*coord_in.next());
  ck_assert(got_response.ok());
  const auto node = got_response->get_uint("node", 0, 7);
  ck_assert(node.ok());
  const auto expected = client_mac(kSecret, run, std::uint32_t(*node), snonce, *got_response->get("cnonce"));
  ck_assert(mac_equal(expected, *got_response->get("mac")));

  // Impostors: another job's secret, another run, a replay against a fresh challenge,
  // a response for another node, and the server's own MAC reflected.
  std::string other_secret = kSecret;
  other_secret[0] = 'f';
  ck_assert(!mac_equal(expected, client_mac(other_secret, run, 5, snonce, cnonce)));
  ck_assert(!mac_equal(expected, client_mac(kSecret, "4243.0", 5, snonce, cnonce)));
  ck_assert(!mac_equal(client_mac(kSecret, run, 5, random_hex(kNonceBytes), cnonce), *got_response->get("mac")));
  ck_assert(!mac_equal(client_mac(kSecret, run, 4, snonce, cnonce), *got_response->get("mac")));
  ck_assert(!mac_equal(expected, server_mac(kSecret, run, 5, snonce, cnonce)));

  Message welcome{"WELCOME", {}};
  welcome.set("mac", server_mac(kSecret, run, 5, snonce, cnonce));
  ck_assert(agent_in.feed(encode(welcome)).ok());
  const auto got_welcome = decode(*agent_in.next());
  ck_assert(got_welcome.ok());
  ck_assert(mac_equal(server_mac(kSecret, run, 5, snonce, cnonce), *got_welcome->get("mac")));
  // An agent must not accept its own MAC echoed back as the welcome.
  ck_assert(!mac_equal(server_mac(kSecret, run, 5, snonce, cnonce), *got_response->get("mac")));
}
END_TEST

// ---------------------------------------------------------------------------
// Fuzz-style properties with a fixed seed, so a failure reproduces.

START_TEST(random_lines_never_crash_and_decode_canonically) {
  // Lines assembled from near-valid pieces, then sometimes one byte changed, so both
  // the accepting paths and every refusal are reached.
  std::mt19937 rng(20240607);
  const std::string value_bytes = "az09.-~=% %\r\n\t\x00\xff\xc3"s + "0123456789ABCDEF%%";
  const std::vector<std::string> verbs = {"HELLO", "X", "A_B", "bad", "", "V1"},
                                 keys = {"a", "b", "k1", "a_b", "K", ""}, seps = {" ", " ", " ", "  ", ""},
                                 eqs = {"=", "=", "=", ""};
  const auto any = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
  std::size_t accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string line = verbs[any(verbs.size())];
    for (auto n = any(5); n > 0; --n) {
      line += seps[any(seps.size())] + keys[any(keys.size())] + eqs[any(eqs.size())];
      for (auto v = any(9); v > 0; --v) line += value_bytes[any(value_bytes.size())];
    }
    if (!line.empty() && any(4) == 0) line[any(line.size())] = static_cast<char>(any(256));
    const auto m = decode(line);
    if (!m.ok()) {
      ck_assert(!m.error().empty() && m.error().size() < 200);
      continue;
    }
    ++accepted;
    ck_assert_msg(encode(*m) == line + "\n", "not canonical: '%s'", line.c_str());
  }
  ck_assert_uint_gt(accepted, 100);  // the generator does reach the accepting paths
}
END_TEST

START_TEST(random_messages_round_trip_through_a_chunked_stream) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> byte(0, 255), nfields(0, 6), vlen(0, 30), chunk(1, 50);
  std::vector<Message> sent;
  std::string stream;
  for (int i = 0; i < 500; ++i) {
    Message m{i % 3 ? "DATA" : "X_Y", {}};
    const int n = nfields(rng);
    for (int f = 0; f < n; ++f) {
      std::string v;
      for (int k = vlen(rng); k > 0; --k) v += static_cast<char>(byte(rng));
      m.set("k" + std::to_string(f), v);
    }
    const auto line = encode(m);
    ck_assert(!line.empty());
    stream += line;
    sent.push_back(std::move(m));
  }
  LineReader r;
  std::size_t got = 0, pos = 0;
  while (pos < stream.size()) {
    const auto take = std::min<std::size_t>(std::size_t(chunk(rng)), stream.size() - pos);
    ck_assert(r.feed(std::string_view(stream).substr(pos, take)).ok());
    pos += take;
    while (auto line = r.next()) {
      const auto m = decode(*line);
      ck_assert_msg(m.ok(), "%s", m.ok() ? "" : m.error().c_str());
      ck_assert(got < sent.size() && *m == sent[got]);
      ++got;
    }
  }
  ck_assert_uint_eq(got, sent.size());
  ck_assert_uint_eq(r.buffered(), 0);
}
END_TEST

// START's node and worker lists: runs, so that a 100,000-node step fits one line.
START_TEST(number_lists_travel_in_runs) {
  const auto round_trip = [](const std::vector<std::uint32_t>& values) {
    Message m{"START", {}};
    m.set("groups", values);
    const auto back = decode(encode(m).substr(0, encode(m).size() - 1));
    ck_assert(back.ok());
    const auto list = back->get_uint_list("groups", 0, 1u << 20, 1u << 20);
    ck_assert_msg(list.ok(), "%s", list.ok() ? "" : list.error().c_str());
    ck_assert(*list == values);
    return *m.get("groups");
  };
  CK_STR_EQ(round_trip({0, 1, 2, 3}), "0-3");
  CK_STR_EQ(round_trip({0, 1, 3}), "0,1,3");
  CK_STR_EQ(round_trip({4, 4, 4, 4, 2}), "4x4,2");
  CK_STR_EQ(round_trip({0, 1, 2, 9, 4, 5, 6}), "0-2,9,4-6");
  CK_STR_EQ(round_trip({7}), "7");
  std::vector<std::uint32_t> big(100000);
  for (std::uint32_t i = 0; i < big.size(); ++i) big[i] = i;
  std::swap(big[500], big[99999]);  // a spare in node 500's place
  CK_STR_EQ(round_trip(big), "0-499,99999,501-99998,500");
  Message bad{"START", {}};
  const auto error = [&](const char* text) {
    bad.set("groups", text);
    const auto r = bad.get_uint_list("groups", 0, 100, 50);
    ck_assert_msg(!r.ok(), "'%s' was accepted", text);
    return r.error();
  };
  CK_CONTAINS(error("5-3"), "is not a range A-B with A < B");
  CK_CONTAINS(error("3-3"), "is not a range");
  CK_CONTAINS(error("2x1"), "is not VALUExCOUNT");
  CK_CONTAINS(error("2x"), "is not VALUExCOUNT");
  CK_CONTAINS(error("0-60"), "has more than 50 numbers");
  CK_CONTAINS(error("1x51"), "is not VALUExCOUNT");
  CK_CONTAINS(error("1,,2"), "START groups");
  CK_CONTAINS(error("1,"), "START groups");
  CK_CONTAINS(error(""), "START groups");
  CK_CONTAINS(error("101"), "out of range");
  const Message empty{"START", {}};
  CK_CONTAINS(empty.get_uint_list("groups", 0, 1, 1).error(), "missing");
}
END_TEST

Suite* rdzv_protocol_suite() {
  return make_suite("rdzv_protocol", {encodes_the_documented_line_and_decodes_it_back, number_lists_travel_in_runs,
                                      verb_only_and_empty_values,
                                      values_with_any_bytes_round_trip,
                                      every_byte_round_trips_and_the_alphabet_stays_raw,
                                      set_replaces_in_place_and_get_finds,
                                      get_uint_checks_presence_form_and_range,
                                      encode_refuses_invalid_messages,
                                      encode_and_decode_agree_on_the_line_bound,
                                      decode_rejects_bad_verbs,
                                      decode_rejects_stray_spaces,
                                      decode_rejects_bad_fields,
                                      decode_rejects_bad_escapes_and_raw_bytes,
                                      decode_rejects_crlf_and_counts_fields,
                                      errors_quote_little_of_the_input,
                                      reader_joins_lines_split_across_feeds,
                                      reader_splits_several_lines_in_one_feed,
                                      reader_bound_is_exact_and_poisons,
                                      reader_refuses_a_long_line_even_with_its_newline,
                                      macs_match_an_independent_hmac,
                                      every_input_changes_the_mac,
                                      empty_secret_gives_no_mac,
                                      mac_equal_compares_whole_strings,
                                      check_secret_accepts_64_hex_and_never_echoes,
                                      check_nonce_wants_the_random_hex_form,
                                      random_hex_is_hex_of_the_length_and_varies,
                                      handshake_verifies_both_ways_and_refuses_impostors,
                                      random_lines_never_crash_and_decode_canonically,
                                      random_messages_round_trip_through_a_chunked_stream});
}
