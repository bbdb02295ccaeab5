// The Slurm 22.05.7/22.05.8 login-host check (spank/login_host.cpp), on values.
#include "login_host.hpp"

#include <optional>
#include <string>

#include "suites.hpp"

using namespace ddp::spank;

START_TEST(affected_releases_from_srun_version) {
  ck_assert(srun_release("slurm-wlm 22.05.8\n") == std::optional<std::string>("22.05.8"));
  ck_assert(srun_release("slurm 24.11.5") == std::optional<std::string>("24.11.5"));
  ck_assert(!srun_release("").has_value());
  ck_assert(!srun_release("slurm-wlm\n").has_value());
  ck_assert(loses_node_failures_off_node("22.05.7"));
  ck_assert(loses_node_failures_off_node("22.05.8"));
  ck_assert(!loses_node_failures_off_node("22.05.9"));
  ck_assert(!loses_node_failures_off_node("22.05.6"));
  ck_assert(!loses_node_failures_off_node("22.05.80"));
  ck_assert(!loses_node_failures_off_node("24.11.5"));
}
END_TEST

START_TEST(addresses_match_addresses_and_names_match_names) {
  const HostIdentity me{{"127.0.0.1", "198.18.7.200"}, {"login1", "login1.example.org"}};
  ck_assert(names_this_host("198.18.7.200", me));
  ck_assert(!names_this_host("198.18.7.1", me));
  ck_assert(names_this_host("login1", me));
  ck_assert(!names_this_host("ctl1", me));
  // Every network namespace of a machine shares its host name: an address
  // given as an address is never matched by name.
  const HostIdentity same_name{{"198.18.7.200"}, {"vm"}};
  ck_assert(!names_this_host("198.18.7.1", same_name));
  CK_CONTAINS(login_host_warning("22.05.8"), "this srun (Slurm 22.05.8) runs on a host that is neither a node");
}
END_TEST

Suite* login_host_suite() {
  return make_suite("login_host", {affected_releases_from_srun_version, addresses_match_addresses_and_names_match_names});
}
