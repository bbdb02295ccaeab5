#include "ddp/base/parse.hpp"
#include "suites.hpp"

using namespace ddp;

START_TEST(uint_accepts_range_bounds) {
  ck_assert_uint_eq(*parse_uint("1", 1, 8, "--x"), 1);
  ck_assert_uint_eq(*parse_uint("8", 1, 8, "--x"), 8);
}
END_TEST

START_TEST(uint_rejects_garbage_with_the_range) {
  for (const char* bad : {"", "x", "2x", "-1", " 3", "1.5"}) {
    const auto r = parse_uint(bad, 1, 8, "--ddp-procs");
    ck_assert(!r.ok());
    CK_CONTAINS(r.error(), "--ddp-procs");
    CK_CONTAINS(r.error(), "between 1 and 8");
  }
}
END_TEST

START_TEST(uint_rejects_out_of_range_and_overflow) {
  ck_assert(!parse_uint("0", 1, 8, "--x").ok());
  ck_assert(!parse_uint("9", 1, 8, "--x").ok());
  const auto huge = parse_uint("99999999999999999999999", 1, 8, "--x");
  ck_assert(!huge.ok());
  CK_CONTAINS(huge.error(), "out of range");
}
END_TEST

START_TEST(port_range_parses_and_checks_order) {
  const auto r = parse_port_range("20000-29999", "port_range");
  ck_assert(r.ok());
  ck_assert_uint_eq(r->first, 20000);
  ck_assert_uint_eq(r->last, 29999);
  ck_assert_uint_eq(r->size(), 10000);
  ck_assert(parse_port_range(" 3000 - 3000 ", "p").ok());
  CK_CONTAINS(parse_port_range("3000-2000", "p").error(), "low port is above");
  CK_CONTAINS(parse_port_range("3000", "p").error(), "LOW-HIGH");
  ck_assert(!parse_port_range("80-90", "p").ok());  // privileged ports
  ck_assert(!parse_port_range("1024-70000", "p").ok());
}
END_TEST

START_TEST(trim_removes_blanks_only_at_the_ends) {
  CK_STR_EQ(trim("  a b \t\r\n"), "a b");
  CK_STR_EQ(trim(" \t "), "");
}
END_TEST

START_TEST(printable_keeps_one_bounded_line) {
  CK_STR_EQ(printable("SDDP_PORT=1 is out of range"), "SDDP_PORT=1 is out of range");
  // A value with a newline cannot start a forged line in slurmd's log.
  CK_STR_EQ(printable("1\n[2024-01-01T00:00:00] error: forged\r\t\x1b[31m\x7f"),
            "1\\n[2024-01-01T00:00:00] error: forged\\r\\t\\x1b[31m\\x7f");
  CK_STR_EQ(printable("a\\n"), "a\\\\n");              // a typed backslash stays distinguishable
  CK_STR_EQ(printable("caf\xc3\xa9"), "caf\xc3\xa9");  // UTF-8 untouched
  CK_STR_EQ(printable(std::string(10, 'x'), 4), "xxxx...");
  CK_STR_EQ(printable("ab\ncd", 3), "ab...");  // an escape is never cut in half
  ck_assert_uint_eq(printable(std::string(100000, 'y')).size(), 4096 + 3);
}
END_TEST

START_TEST(split_list_keeps_every_piece) {
  using V = std::vector<std::string_view>;
  ck_assert(split_list("a,b , c") == (V{"a", "b ", " c"}));
  ck_assert(split_list("a,,b") == (V{"a", "", "b"}));
  ck_assert(split_list("") == (V{""}));
  ck_assert(split_list(",") == (V{"", ""}));
  ck_assert(split_list("x|y;z|w", ';') == (V{"x|y", "z|w"}));
}
END_TEST

Suite* parse_suite() {
  return make_suite("parse", {uint_accepts_range_bounds, uint_rejects_garbage_with_the_range,
                              uint_rejects_out_of_range_and_overflow, port_range_parses_and_checks_order,
                              trim_removes_blanks_only_at_the_ends, printable_keeps_one_bounded_line,
                              split_list_keeps_every_piece});
}
