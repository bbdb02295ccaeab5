#include <cstring>

#include "ddp/base/environment.hpp"
#include "ddp/node/netif.hpp"
#include "suites.hpp"

using namespace ddp;

START_TEST(from_envp_and_back) {
  const char* envp[] = {"A=1", "B=x=y", "EMPTY=", "=bogus", "NOEQUALS", "A=2", nullptr};
  const auto env = Environment::from_envp(envp);
  CK_STR_EQ(*env.get("A"), "2");  // the last one wins, as getenv() sees it
  CK_STR_EQ(*env.get("B"), "x=y");
  CK_STR_EQ(*env.get("EMPTY"), "");
  ck_assert_uint_eq(env.vars().size(), 3);
  Environment::Block block(env);
  char* const* out = block.envp();
  ck_assert_str_eq(out[0], "A=2");
  ck_assert_str_eq(out[1], "B=x=y");
  ck_assert_str_eq(out[2], "EMPTY=");
  ck_assert_ptr_null(out[3]);
}
END_TEST

START_TEST(set_default_and_unset_prefix) {
  Environment env;
  env.set("X", "1");
  env.set_default("X", "2");
  env.set_default("Y", "3");
  CK_STR_EQ(*env.get("X"), "1");
  CK_STR_EQ(*env.get("Y"), "3");
  env.set("DDP_PLAN_A", "a");
  env.set("DDP_PLAN_B", "b");
  env.set("DDP_PLANET", "keep");
  env.unset_prefix("DDP_PLAN_");
  ck_assert(!env.has("DDP_PLAN_A") && !env.has("DDP_PLAN_B"));
  ck_assert(env.has("DDP_PLANET"));
  env.unset("X");
  ck_assert(!env.has("X"));
}
END_TEST

Suite* environment_suite() { return make_suite("environment", {from_envp_and_back, set_default_and_unset_prefix}); }

START_TEST(route_to_loopback_is_lo) {
  const auto r = route_to("127.0.0.1");
  ck_assert_msg(r.ok(), "%s", r.ok() ? "" : r.error().c_str());
  CK_STR_EQ(r->interface, "lo");
  CK_STR_EQ(r->source_address, "127.0.0.1");
}
END_TEST

START_TEST(interface_address_of_lo) {
  CK_STR_EQ(*interface_address("lo"), "127.0.0.1");
  CK_CONTAINS(interface_address("nonexistent0").error(), "there is no interface nonexistent0");
}
END_TEST

START_TEST(route_to_rejects_non_addresses) {
  CK_CONTAINS(route_to("node0").error(), "not an IPv4 address");
  ck_assert(!route_to("").ok());
}
END_TEST

Suite* netif_suite() {
  return make_suite("netif", {route_to_loopback_is_lo, route_to_rejects_non_addresses, interface_address_of_lo});
}
