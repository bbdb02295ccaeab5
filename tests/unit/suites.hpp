// The Check suites of the unit tests; main.cpp runs them, CTest runs each one
// as its own test (CK_RUN_SUITE=<name>) so `ctest` lists them by name.
#pragma once

#include <check.h>
// Check's old `fail` macro would rewrite ddp::fail in every header included
// after this one (the unit tests are compiled as unity sources).
#undef fail

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

// One suite with one test case holding `tests`; `timeout_s` 0 keeps Check's default.
inline Suite* make_suite(const char* name, std::initializer_list<const TTest*> tests, double timeout_s = 0) {
  Suite* suite = suite_create(name);
  TCase* tc = tcase_create("core");
  if (timeout_s > 0) tcase_set_timeout(tc, timeout_s);
  for (const TTest* test : tests) tcase_add_test(tc, test);
  suite_add_tcase(suite, tc);
  return suite;
}

// The largest relative gap between `analytic` and the central differences
// (step h) of loss() in each element of `params`, which loss() reads
// (perturbed in place and restored): the trainer's gradient checks.
inline double worst_gradient_error(std::vector<float>& params, const std::vector<float>& analytic,
                                   const std::function<double()>& loss, float h = 1e-2f) {
  double worst = 0;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const float keep = params[i];
    params[i] = keep + h;
    const double up = loss();
    params[i] = keep - h;
    const double down = loss();
    params[i] = keep;
    const double numeric = (up - down) / (2.0 * double(h));
    const double gap = std::fabs(numeric - analytic[i]) / std::max(1e-2, std::fabs(numeric) + std::fabs(analytic[i]));
    worst = std::max(worst, gap);
  }
  return worst;
}

Suite* parse_suite();
Suite* request_suite();
Suite* plan_suite();
Suite* ports_suite();
Suite* descriptors_suite();
Suite* step_plan_suite();
Suite* worker_env_suite();
Suite* site_config_suite();
Suite* config_check_suite();
Suite* login_host_suite();
Suite* failure_class_suite();
Suite* job_fields_suite();
Suite* straggler_suite();
Suite* preflight_suite();
Suite* environment_suite();
Suite* netif_suite();
Suite* agent_suite();
Suite* lifecycle_suite();
Suite* job_suite();
Suite* binding_suite();
Suite* trainer_data_suite();
Suite* token_data_suite();
Suite* gpt_layers_suite();
Suite* trainer_math_suite();
Suite* trainer_model_suite();
Suite* trainer_cnn_suite();
Suite* trainer_dist_suite();
Suite* trainer_resume_suite();
Suite* rdzv_protocol_suite();
Suite* rdzv_auth_suite();
Suite* rdzv_messages_suite();
Suite* progress_file_suite();
Suite* bad_node_report_suite();
Suite* bad_node_hook_suite();
Suite* nccl_profiler_suite();
Suite* output_suite();
Suite* roster_suite();

// ck_assert_str_eq for std::string operands (Check's macros evaluate their
// arguments more than once, so temporaries must outlive the whole assertion).
#define CK_STR_EQ(a, b)                             \
  do {                                              \
    const std::string ck_a_(a), ck_b_(b);           \
    ck_assert_str_eq(ck_a_.c_str(), ck_b_.c_str()); \
  } while (0)
// Asserts that `haystack` contains `needle`, printing both when it does not.
#define CK_CONTAINS(haystack, needle)                                                                                  \
  do {                                                                                                                 \
    const std::string ck_h_(haystack), ck_n_(needle);                                                                  \
    ck_assert_msg(ck_h_.find(ck_n_) != std::string::npos, "'%s' does not contain '%s'", ck_h_.c_str(), ck_n_.c_str()); \
  } while (0)
