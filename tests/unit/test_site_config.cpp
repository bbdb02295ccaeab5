#include "ddp/site_config.hpp"
#include "suites.hpp"

using namespace ddp;

START_TEST(empty_config_gives_defaults) {
  const auto c = parse_site_config("", "ddp.conf");
  ck_assert(c.ok());
  ck_assert(*c == SiteConfig{});
  ck_assert_uint_eq(c->port_range.first, 20000);
}
END_TEST

START_TEST(keys_comments_and_blanks) {
  const auto c = parse_site_config(
      "# site config\n\n  agent = /opt/ddp/bin/ddp-agent  # trailing comment\nport_range=21000-21999\r\n", "x");
  ck_assert_msg(c.ok(), "%s", c.ok() ? "" : c.error().c_str());
  CK_STR_EQ(*c->agent, "/opt/ddp/bin/ddp-agent");
  ck_assert(c->port_range == (PortRange{21000, 21999}));
}
END_TEST

START_TEST(unknown_key_names_file_line_and_known_keys) {
  const auto c = parse_site_config("port_range = 21000-21999\nagnet = /x\n", "/etc/slurm/ddp.conf");
  ck_assert(!c.ok());
  CK_CONTAINS(c.error(), "/etc/slurm/ddp.conf:2");
  CK_CONTAINS(c.error(), "'agnet'");
  CK_CONTAINS(c.error(), "agent, port_range");
}
END_TEST

START_TEST(malformed_values_are_errors) {
  CK_CONTAINS(parse_site_config("agent = bin/ddp-agent\n", "f").error(), "absolute path");
  CK_CONTAINS(parse_site_config("port_range = 30000-20000\n", "f").error(), "f:1");
  CK_CONTAINS(parse_site_config("\njust words\n", "f").error(), "f:2: expected 'key = value'");
}
END_TEST

START_TEST(plugin_args_agent_and_config) {
  const auto a = parse_plugin_args({"agent=/usr/bin/ddp-agent", "config=/etc/slurm/ddp.conf"});
  ck_assert(a.ok());
  CK_STR_EQ(*a->agent, "/usr/bin/ddp-agent");
  CK_STR_EQ(*a->config, "/etc/slurm/ddp.conf");
  ck_assert(parse_plugin_args({}).ok());
  CK_CONTAINS(parse_plugin_args({"agnet=/x"}).error(), "agent=PATH and config=PATH");
  CK_CONTAINS(parse_plugin_args({"agent=relative"}).error(), "absolute path");
  ck_assert(!parse_plugin_args({"agent"}).ok());
}
END_TEST

Suite* site_config_suite() {
  return make_suite("site_config",
                    {empty_config_gives_defaults, keys_comments_and_blanks, unknown_key_names_file_line_and_known_keys,
                     malformed_values_are_errors, plugin_args_agent_and_config});
}
