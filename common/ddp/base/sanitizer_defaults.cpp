// Built only with -DDDP_SANITIZE=ON. The sanitized ddp-agent and ddp-train run
// in jobs whose environment is the user's, so they must not depend on
// ASAN_OPTIONS being passed down: a job with its own LD_PRELOAD puts that
// library ahead of the shared ASan runtime, which by default then refuses to
// start ("ASan runtime does not come first"). Loading a library that does not
// replace malloc first is harmless, so these binaries accept it. Options from
// the environment (tests/sanitize.sh) are applied on top of these.
extern "C" const char* __asan_default_options() { return "verify_asan_link_order=0"; }
