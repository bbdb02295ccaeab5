#include <map>

#include "ddp/plan/request.hpp"
#include "suites.hpp"

using namespace ddp;

START_TEST(ddp_flag_enables_auto_mode) {
  DdpRequest r;
  ck_assert(!r.active());
  ck_assert(apply_option(r, "ddp", nullptr).ok());
  ck_assert(r.active());
  ck_assert(r.mode == Mode::Auto);
}
END_TEST

START_TEST(sbatch_exported_flag_arrives_as_null_string) {
  // sbatch --ddp exports the flag to every srun as the literal "(null)".
  DdpRequest r;
  ck_assert(apply_option(r, "ddp", "(null)").ok());
  ck_assert(r.active());
  ck_assert(r.mode == Mode::Auto);
  ck_assert(apply_option(r, "ddp-verbose", "(null)").ok());
  ck_assert(r.verbose);
  ck_assert(apply_option(r, "no-ddp", "(null)").ok());
  ck_assert(!r.active());
}
END_TEST

START_TEST(modes_parse_and_bad_mode_names_the_choices) {
  DdpRequest r;
  ck_assert(apply_option(r, "ddp", "cpu").ok());
  ck_assert(r.mode == Mode::Cpu);
  ck_assert(apply_option(r, "ddp", "gpu").ok());
  ck_assert(r.mode == Mode::Gpu);
  const auto bad = apply_option(r, "ddp", "tpu");
  ck_assert(!bad.ok());
  CK_CONTAINS(bad.error(), "--ddp=tpu");
  CK_CONTAINS(bad.error(), "--ddp=cpu");
}
END_TEST

START_TEST(counts_imply_ddp_and_are_range_checked) {
  DdpRequest r;
  ck_assert(apply_option(r, "ddp-procs", "4").ok());
  ck_assert(r.active());
  ck_assert_uint_eq(*r.procs, 4);
  ck_assert(!apply_option(r, "ddp-gpus", "0").ok());
  ck_assert(!apply_option(r, "ddp-gpus", "(null)").ok());  // a count needs a value
  ck_assert(!apply_option(r, "ddp-port", "80").ok());
  ck_assert(apply_option(r, "ddp-port", "29500").ok());
  ck_assert_uint_eq(*r.port, 29500);
  ck_assert(apply_option(r, "ddp-restarts", "0").ok());
  ck_assert(!apply_option(r, "ddp-restarts", "100000").ok());
  // Bounded before parsed (slurmstepd runs this as root).
  const std::string huge(5000, '1');
  const auto over = apply_option(r, "ddp-port", huge.c_str());
  ck_assert(!over.ok());
  ck_assert_msg(over.error() == "--ddp-port: the value is 5000 bytes long, more than the 4096 a --ddp option takes",
                "%s", over.error().c_str());
}
END_TEST

START_TEST(callbacks_are_idempotent) {
  // Remote option callbacks run twice with the same value.
  DdpRequest once, twice;
  for (auto* r : {&once, &twice}) {
    ck_assert(apply_option(*r, "ddp", "cpu").ok());
    ck_assert(apply_option(*r, "ddp-procs", "3").ok());
  }
  ck_assert(apply_option(twice, "ddp", "cpu").ok());
  ck_assert(apply_option(twice, "ddp-procs", "3").ok());
  ck_assert(once == twice);
}
END_TEST

START_TEST(no_ddp_wins_over_inherited_ddp) {
  DdpRequest r;
  ck_assert(apply_option(r, "no-ddp", nullptr).ok());
  ck_assert(apply_option(r, "ddp", "(null)").ok());  // inherited from sbatch, read later
  ck_assert(!r.active());
}
END_TEST

START_TEST(validate_catches_contradictions) {
  DdpRequest r;
  ck_assert(apply_option(r, "ddp", "cpu").ok());
  ck_assert(validate(r).ok());
  ck_assert(apply_option(r, "ddp-gpus", "2").ok());
  CK_CONTAINS(validate(r).error(), "--ddp-gpus");
  DdpRequest g;
  ck_assert(apply_option(g, "ddp", "gpu").ok());
  ck_assert(apply_option(g, "ddp-procs", "2").ok());
  CK_CONTAINS(validate(g).error(), "--ddp-procs");
  DdpRequest off;  // nothing to check when DDP is off
  ck_assert(apply_option(off, "ddp-gpus", "2").ok());
  ck_assert(apply_option(off, "ddp-procs", "2").ok());
  ck_assert(apply_option(off, "no-ddp", nullptr).ok());
  ck_assert(validate(off).ok());
  // --ddp-stragglers: a word, checked.
  DdpRequest s;
  ck_assert(apply_option(s, "ddp-stragglers", "swap").ok());
  ck_assert(s.stragglers == ddp::StragglerAction::Swap);
  const auto bad = apply_option(s, "ddp-stragglers", "kill");
  ck_assert(!bad.ok());
  CK_CONTAINS(bad.error(), "--ddp-stragglers='kill': use report");
  // --ddp-preflight: unset (the site decides) until given.
  DdpRequest p;
  ck_assert(!p.preflight.has_value());
  ck_assert(apply_option(p, "ddp-preflight", "swap").ok());
  ck_assert(p.preflight == ddp::PreflightAction::Swap);
  CK_CONTAINS(apply_option(p, "ddp-preflight", "(null)").error(), "--ddp-preflight='': use check");
  CK_CONTAINS(apply_option(p, "ddp-preflight", "full").error(), "--ddp-preflight='full': use check");
}
END_TEST

START_TEST(option_table_usage_starts_with_plugin_tag) {
  for (const auto& spec : kOptions) {
    CK_CONTAINS(std::string(spec.usage).substr(0, 5), "[ddp]");
    DdpRequest r;  // every registered option is understood by apply_option
    const std::string name = spec.name;
    const char* value = !spec.arginfo           ? nullptr
                        : name == "ddp"            ? "cpu"
                        : name == "ddp-port"       ? "29500"
                        : name == "ddp-stragglers" ? "swap"
                        : name == "ddp-preflight"  ? "check"
                                                   : "2";
    ck_assert_msg(apply_option(r, spec.name, value).ok(), "option --%s rejected", spec.name);
  }
}
END_TEST

namespace {
std::function<std::optional<std::string>(const char*)> env_of(std::map<std::string, std::string> vars) {
  return [vars](const char* name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}
}  // namespace

START_TEST(environment_equivalents_fill_in_what_options_left) {
  DdpRequest r;
  ck_assert(apply_option(r, "ddp", nullptr).ok());
  ck_assert(apply_environment(r, env_of({{"SDDP_MODE", "cpu"},
                                         {"SDDP_PROCS", "3"},
                                         {"SDDP_VERBOSE", "1"},
                                         {"SDDP_PORT", "23456"},
                                         {"SDDP_RESTARTS", "2"},
                                         {"SDDP_STRAGGLERS", "swap"},
                                         {"SDDP_PREFLIGHT", "check"}}))
                .ok());
  ck_assert(r.active());
  ck_assert(r.mode == Mode::Cpu);
  ck_assert_uint_eq(*r.procs, 3);
  ck_assert(r.verbose);
  ck_assert_uint_eq(*r.port, 23456);
  ck_assert_uint_eq(r.restarts, 2);
  ck_assert(*r.stragglers == StragglerAction::Swap);
  ck_assert(*r.preflight == PreflightAction::Check);
  ck_assert_uint_eq(r.given, 0);  // a bare --ddp names no mode: SDDP_MODE did
}
END_TEST

// Without --ddp the environment is not read at all: no variable, old name or
// new, well-formed or not, turns DDP on, changes the request or fails.
START_TEST(environment_without_ddp_is_never_read) {
  std::map<std::string, std::string> vars;
  for (const auto& eq : kEnvEquivalents) {
    vars[eq.variable] = "abc";
    if (eq.retired) vars[eq.retired] = "abc";
  }
  for (const auto& [name, value] : std::map<std::string, std::string>{
           {"SDDP_MODE", "cpu"}, {"SDDP_PROCS", "2"}, {"SDDP_GPUS", "4"}, {"DDP_PROCS", "2"}, {"DDP_MODE", "fsdp"},
           {"DDP_PORT", "abc"}, {"DDP_VERBOSE", "true"}, {"DDP_HANG_TIMEOUT", "-1"}}) {
    for (const auto& lookup : {env_of({{name, value}}), env_of(vars)}) {
      std::vector<std::string> asked;
      const auto recording = [&](const char* n) {
        asked.emplace_back(n);
        return lookup(n);
      };
      DdpRequest plain;
      ck_assert_msg(apply_environment(plain, recording).ok(), "%s=%s failed a job without --ddp", name.c_str(),
                    value.c_str());
      ck_assert_msg(plain == DdpRequest{}, "%s=%s changed a job without --ddp", name.c_str(), value.c_str());
      DdpRequest opted_out;  // --no-ddp, also under an inherited --ddp
      ck_assert(apply_option(opted_out, "ddp", "(null)").ok());
      ck_assert(apply_option(opted_out, "no-ddp", nullptr).ok());
      const auto before = opted_out;
      ck_assert(apply_environment(opted_out, recording).ok());
      ck_assert(opted_out == before);
      ck_assert_msg(asked.empty(), "%s was read without --ddp", asked.empty() ? "" : asked.front().c_str());
    }
  }
}
END_TEST

START_TEST(command_line_wins_over_environment) {
  DdpRequest r;
  ck_assert(apply_option(r, "ddp-procs", "4").ok());
  ck_assert(apply_option(r, "ddp", "cpu").ok());
  ck_assert(apply_environment(r, env_of({{"SDDP_PROCS", "8"}, {"SDDP_MODE", "gpu"}, {"SDDP_GPUS", "2"}})).ok());
  ck_assert_uint_eq(*r.procs, 4);
  ck_assert(r.mode == Mode::Cpu);
  ck_assert_uint_eq(*r.gpus, 2);  // not given on the command line: taken (validate() then objects)
  ck_assert(!validate(r).ok());
  DdpRequest explicit_mode;  // --ddp=MODE given: SDDP_MODE=off does not undo it
  ck_assert(apply_option(explicit_mode, "ddp", "gpu").ok());
  ck_assert(apply_environment(explicit_mode, env_of({{"SDDP_MODE", "off"}})).ok());
  ck_assert(explicit_mode.active() && explicit_mode.mode == Mode::Gpu);
  DdpRequest inherited;  // a bare --ddp from sbatch: SDDP_MODE=off opts this step out
  ck_assert(apply_option(inherited, "ddp", "(null)").ok());
  ck_assert(apply_environment(inherited, env_of({{"SDDP_MODE", "off"}})).ok());
  ck_assert(!inherited.active());
}
END_TEST

START_TEST(environment_off_and_bad_values) {
  DdpRequest r;
  ck_assert(apply_option(r, "ddp-procs", "2").ok());
  // SDDP_MODE=off opts out (as --no-ddp), and then nothing else is read.
  ck_assert(apply_environment(r, env_of({{"SDDP_MODE", "off"}, {"SDDP_GPUS", "abc"}})).ok());
  ck_assert(!r.active());
  const auto refused = [](std::map<std::string, std::string> vars) {
    DdpRequest on;
    ck_assert(apply_option(on, "ddp", nullptr).ok());
    const auto e = apply_environment(on, env_of(std::move(vars)));
    ck_assert(!e.ok());
    return e.error();
  };
  // Each names the variable, its value and the fix; none speaks of an option.
  const auto gpus = refused({{"SDDP_GPUS", "abc"}});
  CK_CONTAINS(gpus, "SDDP_GPUS='abc' is not a whole number; use a number between 1 and");
  CK_CONTAINS(gpus, ", or unset SDDP_GPUS");
  ck_assert(gpus.find("--ddp") == std::string::npos);
  CK_CONTAINS(refused({{"SDDP_GPUS", ""}}), "SDDP_GPUS needs a value, e.g. SDDP_GPUS=2");
  CK_CONTAINS(refused({{"SDDP_VERBOSE", "yes"}}), "SDDP_VERBOSE=yes: use SDDP_VERBOSE=1 or 0, or unset it");
  CK_CONTAINS(refused({{"SDDP_MODE", "fsdp"}}), "SDDP_MODE=fsdp is not a mode; use auto, gpu, cpu or off, or unset SDDP_MODE");
  CK_CONTAINS(refused({{"SDDP_HANG_TIMEOUT", "-1"}}), "SDDP_HANG_TIMEOUT='-1' is not a whole number");
  CK_CONTAINS(refused({{"SDDP_PORT", "80"}}), "SDDP_PORT=80 is out of range; use a number between 1024 and 65535");
  CK_CONTAINS(refused({{"SDDP_STRAGGLERS", "x"}}), "SDDP_STRAGGLERS='x': use report");
  CK_CONTAINS(refused({{"SDDP_RESTARTS", std::string(5000, '1')}}),
              "SDDP_RESTARTS: the value is 5000 bytes long, more than the 4096");
  DdpRequest none;  // --ddp and no variables: nothing changes
  ck_assert(apply_option(none, "ddp", nullptr).ok());
  const auto before = none;
  ck_assert(apply_environment(none, env_of({})).ok());
  ck_assert(none == before);
  // The old names are not read, not even under --ddp.
  DdpRequest old;
  ck_assert(apply_option(old, "ddp", nullptr).ok());
  ck_assert(apply_environment(old, env_of({{"DDP_PROCS", "2"}, {"DDP_PORT", "abc"}, {"DDP_MODE", "off"}})).ok());
  ck_assert(old == before);
}
END_TEST

START_TEST(retired_names_are_named_in_one_warning) {
  ck_assert(!retired_variables_warning(env_of({})));
  ck_assert(!retired_variables_warning(env_of({{"SDDP_PROCS", "2"}, {"DDP_PROGRESS_FILE", "/tmp/p"}})));
  // DDP_REQUEUE is what the agent tells the workers: a worker that submits a job has it.
  ck_assert(!retired_variables_warning(env_of({{"DDP_REQUEUE", "0"}})));
  CK_STR_EQ(*retired_variables_warning(env_of({{"DDP_RESTARTS", "1"}})),
            "DDP_RESTARTS is not read any more: set SDDP_RESTARTS");
  CK_STR_EQ(*retired_variables_warning(env_of({{"DDP_RESTARTS", "1"}, {"DDP_PROCS", ""}, {"DDP_REQUEUE", "1"}})),
            "DDP_PROCS, DDP_RESTARTS are not read any more: set SDDP_PROCS, SDDP_RESTARTS");
  // Every retired name is the new one without its S.
  for (const auto& eq : kEnvEquivalents)
    if (eq.retired) CK_STR_EQ(std::string("S") + eq.retired, eq.variable);
}
END_TEST

START_TEST(launchers_inside_agent_mode_are_refused) {
  ck_assert(check_not_a_launcher({"python", "train.py"}, false).ok());
  for (const auto& argv : std::vector<std::vector<std::string>>{{"torchrun", "--nproc_per_node=4", "t.py"},
                                                                {"/usr/bin/mpirun", "-np", "4", "a.out"},
                                                                {"python3", "-m", "torch.distributed.run", "t.py"},
                                                                {"srun", "python", "t.py"}}) {
    const auto r = check_not_a_launcher(argv, false);
    ck_assert_msg(!r.ok(), "accepted %s", argv[0].c_str());
    CK_CONTAINS(r.error(), "--no-ddp");
  }
  const auto set = check_not_a_launcher({"python", "t.py"}, true);
  ck_assert(!set.ok());
  CK_CONTAINS(set.error(), "LOCAL_RANK is already set");
}
END_TEST

START_TEST(requeue_flag_and_its_variable) {
  DdpRequest r;
  ck_assert(!r.requeue);  // unset: the site's Requeue= decides
  ck_assert(apply_option(r, "ddp-requeue", nullptr).ok());
  ck_assert(*r.requeue);
  DdpRequest from_sbatch;
  ck_assert(apply_option(from_sbatch, "ddp-requeue", "(null)").ok());  // exported by sbatch
  ck_assert(*from_sbatch.requeue);
  const auto env = [](const char* value) {
    return [value](const char* name) -> std::optional<std::string> {
      if (std::string(name) == "SDDP_REQUEUE") return std::string(value);
      return std::nullopt;
    };
  };
  DdpRequest off;
  off.enabled = true;
  ck_assert(apply_environment(off, env("0")).ok());
  ck_assert(off.requeue && !*off.requeue);  // said no: the site's default does not apply
  DdpRequest on;
  on.enabled = true;
  ck_assert(apply_environment(on, env("1")).ok());
  ck_assert(*on.requeue);
  DdpRequest bad;
  bad.enabled = true;
  CK_CONTAINS(apply_environment(bad, env("yes")).error(), "SDDP_REQUEUE=yes: use SDDP_REQUEUE=1 or 0");
}
END_TEST

START_TEST(hang_timeout_option_and_its_variable) {
  DdpRequest r;
  ck_assert(!r.hang_timeout_s);  // unset: the site's HangTimeout= decides
  ck_assert(apply_option(r, "ddp-hang-timeout", "300").ok());
  ck_assert_int_eq(*r.hang_timeout_s, 300);
  ck_assert(apply_option(r, "ddp-hang-timeout", "0").ok());  // 0: off, whatever the site says
  ck_assert(r.hang_timeout_s && *r.hang_timeout_s == 0);
  CK_CONTAINS(apply_option(r, "ddp-hang-timeout", "soon").error(), "ddp-hang-timeout");
  CK_CONTAINS(apply_option(r, "ddp-hang-timeout", "3601").error(), "3600");
  DdpRequest from_env;
  from_env.enabled = true;
  ck_assert(apply_environment(from_env, [](const char* name) -> std::optional<std::string> {
              if (std::string(name) == "SDDP_HANG_TIMEOUT") return std::string("120");
              return std::nullopt;
            }).ok());
  ck_assert_int_eq(*from_env.hang_timeout_s, 120);
}
END_TEST

START_TEST(container_plugin_refused_in_the_agent_shape_only) {
  ck_assert(check_no_container_plugin("", false).ok());
  ck_assert(check_no_container_plugin("--container-image=ubuntu:24.04", true).ok());  // task shape: Slurm starts each worker
  const auto r = check_no_container_plugin("--container-image=ubuntu:24.04", false);
  ck_assert(!r.ok());
  CK_CONTAINS(r.error(), "--container-image=ubuntu:24.04: ");
  CK_CONTAINS(r.error(), "srun --ntasks-per-node=<workers per node> --ddp --container-image=ubuntu:24.04");
}
END_TEST

START_TEST(spares_and_min_nodes_options_and_no_kill) {
  DdpRequest r;
  r.enabled = true;
  ck_assert(apply_option(r, "ddp-spares", "2").ok());
  ck_assert_int_eq(r.spares, 2);
  ck_assert(apply_option(r, "ddp-min-nodes", "1").ok());
  ck_assert_int_eq(*r.min_nodes, 1);
  CK_CONTAINS(apply_option(r, "ddp-min-nodes", "0").error(), "--ddp-min-nodes");
  CK_CONTAINS(apply_option(r, "ddp-spares", "two").error(), "--ddp-spares");
  DdpRequest from_env;
  from_env.enabled = true;
  ck_assert(apply_environment(from_env, [](const char* name) -> std::optional<std::string> {
              if (std::string(name) == "SDDP_SPARES") return std::string("1");
              if (std::string(name) == "SDDP_MIN_NODES") return std::string("3");
              return std::nullopt;
            }).ok());
  ck_assert_int_eq(from_env.spares, 1);
  ck_assert_int_eq(*from_env.min_nodes, 3);
  // srun's own --no-kill, in the forms Slurm takes.
  using W = std::vector<std::string>;
  ck_assert(asks_no_kill(W{"srun", "-N3", "-k", "python", "t.py"}));
  ck_assert(asks_no_kill(W{"srun", "--no-kill", "t"}));
  ck_assert(asks_no_kill(W{"srun", "--no-kill=on", "t"}));
  ck_assert(asks_no_kill(W{"srun", "-lk", "t"}));
  ck_assert(!asks_no_kill(W{"srun", "-N3", "--ddp-spares=1", "python", "t.py"}));
  ck_assert(!asks_no_kill(W{"srun", "-pk80", "t"}));  // -p takes an argument: partition "k80"
  ck_assert(!asks_no_kill(W{"srun", "--kill-on-bad-exit", "t"}));
  ck_assert(check_no_kill(r, true).ok());
  CK_CONTAINS(check_no_kill(r, false).error(), "--ddp-spares needs a step that outlives a lost node: add --no-kill");
  DdpRequest plain;
  plain.enabled = true;
  ck_assert(check_no_kill(plain, false).ok());
}
END_TEST

// sbatch --ddp-requeue against the job's --signal, in the forms sbatch takes.
START_TEST(requeue_needs_a_usr_warning_signal_to_the_steps) {
  using W = std::vector<std::string>;
  CK_STR_EQ(*signal_option(W{"sbatch", "--signal=USR1@120", "job.sh"}), "USR1@120");
  CK_STR_EQ(*signal_option(W{"sbatch", "--signal", "B:USR2@60", "--signal=R:10@30", "job.sh"}), "R:10@30");
  ck_assert(!signal_option(W{"sbatch", "-N2", "job.sh"}));
  DdpRequest r;
  r.enabled = true;
  r.requeue = true;
  for (const char* fits : {"USR1@120", "SIGUSR2@60", "R:USR1@30", "12", "10@90"})
    ck_assert_msg(check_requeue_signal(r, std::string(fits)).ok(), "%s", fits);
  CK_CONTAINS(check_requeue_signal(r, std::nullopt).error(), "the job has no --signal");
  CK_CONTAINS(check_requeue_signal(r, std::nullopt).error(), "sbatch --signal=USR1@SECONDS");
  CK_CONTAINS(check_requeue_signal(r, std::string("TERM@60")).error(), "warns with another signal");
  CK_CONTAINS(check_requeue_signal(r, std::string("B:USR1@60")).error(), "reaches the batch shell only");
  r.requeue = false;  // not asked: nothing to say
  ck_assert(check_requeue_signal(r, std::nullopt).ok());
}
END_TEST

Suite* request_suite() {
  return make_suite("request", {ddp_flag_enables_auto_mode, sbatch_exported_flag_arrives_as_null_string,
                                modes_parse_and_bad_mode_names_the_choices, counts_imply_ddp_and_are_range_checked,
                                callbacks_are_idempotent, no_ddp_wins_over_inherited_ddp,
                                validate_catches_contradictions, option_table_usage_starts_with_plugin_tag,
                                environment_equivalents_fill_in_what_options_left, command_line_wins_over_environment,
                                environment_without_ddp_is_never_read, environment_off_and_bad_values,
                                retired_names_are_named_in_one_warning, launchers_inside_agent_mode_are_refused,
                                container_plugin_refused_in_the_agent_shape_only, requeue_flag_and_its_variable,
                                hang_timeout_option_and_its_variable, spares_and_min_nodes_options_and_no_kill,
                                requeue_needs_a_usr_warning_signal_to_the_steps});
}
