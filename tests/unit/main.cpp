#include <cstdlib>

#include "suites.hpp"

int main() {
  SRunner* runner = srunner_create(parse_suite());
  for (Suite* s : {request_suite(), plan_suite(), ports_suite(), descriptors_suite(), step_plan_suite(), worker_env_suite(), site_config_suite(), config_check_suite(), login_host_suite(), failure_class_suite(), job_fields_suite(), straggler_suite(), preflight_suite(),
                   environment_suite(), netif_suite(), agent_suite(), lifecycle_suite(), job_suite(), binding_suite(),
                   rdzv_protocol_suite(), rdzv_auth_suite(), rdzv_messages_suite(), output_suite(), roster_suite(), trainer_data_suite(), token_data_suite(), gpt_layers_suite(),
                   trainer_math_suite(), trainer_model_suite(), trainer_cnn_suite(), trainer_dist_suite(), trainer_resume_suite(),
                   progress_file_suite(), bad_node_report_suite(), bad_node_hook_suite(), nccl_profiler_suite()})
    srunner_add_suite(runner, s);
  srunner_run_all(runner, CK_NORMAL);
  const int failed = srunner_ntests_failed(runner);
  srunner_free(runner);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
