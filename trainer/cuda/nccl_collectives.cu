// NcclCollectives: gradient all-reduce over NCCL on a communication stream of
// its own (the highest priority the device offers), so that reducing one
// bucket overlaps the backward pass computing the next, and is not queued
// behind it (the compute stream belongs to CudaOps, see cuda_context.cuh).
//
// Failure handling is the point of most of this file. A collective whose peer
// died spins on the GPU forever, so cudaStreamSynchronize never returns, and a
// blocking NCCL call that must connect to a dead peer never returns either. A
// Slurm job would then sit idle until its time limit. So a watchdog thread
// looks every 100 ms at
//   * the main thread inside an NCCL call for longer than op_timeout: NCCL
//     forbids aborting a communicator while a call is inside it, so the
//     process ends (its sockets close, which the peers notice);
//   * the communicator's asynchronous error state, and how long the newest
//     collective has been pending on the GPU: after an error or op_timeout it
//     aborts the communicator (ncclCommAbort stops its kernels, so peers see
//     the connections close), prints one line saying why and ends the process.
// The launcher then stops the other ranks. Set-up is in nccl_init.cu.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

#include "cuda/nccl_init.cuh"

namespace ddp::train::cuda {
namespace {

using Clock = std::chrono::steady_clock;

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

// Runs one NCCL call through NcclCollectives::nccl_call, which names it in errors.
#define NCCL_CALL(call) nccl_call([&] { return (call); }, #call, __FILE__, __LINE__)

class NcclCollectives final : public Collectives {
 public:
  NcclCollectives(std::shared_ptr<CudaContext> context, NcclComms comms, const GpuBackendConfig& config)
      : ctx_(std::move(context)),
        comms_(comms),
        comm_(comms.ops),
        rank_(config.rank),
        size_(config.world_size),
        op_timeout_(config.op_timeout),
        finalize_timeout_(config.init_timeout) {}

  // The stream, the events and the watchdog; the communicators exist already.
  Status start() {
    CUDA_TRY(cudaSetDevice(ctx_->device));
    // Lower numbers are higher priorities: the greatest priority lets a
    // bucket's reduction kernels start while the backward kernels queue.
    int least = 0, greatest = 0;
    CUDA_TRY(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    CUDA_TRY(cudaStreamCreateWithPriority(&comm_stream_, cudaStreamNonBlocking, greatest));
    // Timing off: these events only order streams, which is cheaper without it.
    CUDA_TRY(cudaEventCreateWithFlags(&compute_ready_, cudaEventDisableTiming));
    CUDA_TRY(cudaEventCreateWithFlags(&comm_done_, cudaEventDisableTiming));
    CUDA_TRY(cudaEventCreateWithFlags(&watch_event_, cudaEventDisableTiming));
    watchdog_ = std::thread([this] { watch(); });
    return Ok{};
  }

  ~NcclCollectives() override {
    // Let queued collectives finish and the communicator flush while the
    // watchdog still guards against a hang; then free what is left.
    bool clean = error_.empty() && !aborted_;
    if (clean && comm_stream_) clean = cudaStreamSynchronize(comm_stream_) == cudaSuccess;
    if (clean && premul_ready_) clean = NCCL_CALL(ncclRedOpDestroy(premul_op_, comm_)).ok();
    if (clean) clean = finalize(comm_);
    stop_watchdog();
    if (!aborted_) release(comm_, clean);
    if (comms_.init != comm_) release(comms_.init, clean && finalize(comms_.init));
    if (watch_event_) cudaEventDestroy(watch_event_);
    if (comm_done_) cudaEventDestroy(comm_done_);
    if (compute_ready_) cudaEventDestroy(compute_ready_);
    if (comm_stream_) cudaStreamDestroy(comm_stream_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string name() const override {
    return "nccl " + nccl_version_text() + " (" + std::to_string(size_) + " rank" + (size_ == 1 ? "" : "s") +
           ", cuda:" + std::to_string(ctx_->device) + (comms_.blocking_ops ? "" : ", non-blocking calls") + ")";
  }

  Status broadcast(float* data, std::size_t count, int root) override {
    if (count == 0) return Ok{};
    if (Status s = enqueue_after_compute(); !s) return remember(s);
    if (Status s = NCCL_CALL(ncclBroadcast(data, data, count, ncclFloat, root, comm_, comm_stream_)); !s)
      return remember(s);
    if (Status s = arm_watchdog(); !s) return remember(s);
    return wait_comm_stream();
  }

  Status allreduce_sum(float* data, std::size_t count) override {
    if (count == 0) return Ok{};
    Status enqueued = allreduce(data, count, 1.0f);
    if (!enqueued) return enqueued;
    return wait_comm_stream();
  }

  void start_bucket(float* data, std::size_t count, float prescale) override {
    if (count == 0) return;
    // An error is remembered in error_ and reported by finish_buckets().
    (void)allreduce(data, count, prescale);
  }

  Status finish_buckets() override {
    if (!error_.empty()) return fail(error_);
    // The compute stream waits on the GPU for every collective queued so far;
    // the host does not wait at all.
    CUDA_TRY(cudaEventRecord(comm_done_, comm_stream_));
    CUDA_TRY(cudaStreamWaitEvent(ctx_->stream, comm_done_, 0));
    return async_state();
  }

  // A captured step (CUDA graph): its collectives are recorded, not run, so
  // there is nothing on the comm stream to watch; watch_compute_stream()
  // after each replay watches the whole step instead.
  void set_capturing(bool capturing) override { capturing_ = capturing; }
  Status watch_compute_stream() override {
    std::lock_guard<std::timed_mutex> lock(mu_);
    CUDA_TRY(cudaEventRecord(watch_event_, ctx_->stream));
    watch_since_ = Clock::now();
    watch_armed_ = true;
    return Ok{};
  }

 private:
  // Runs one NCCL call under mu_ (the watchdog may abort the communicator,
  // which frees it: no call may be inside NCCL then), telling the watchdog
  // when it must have returned, and waits until NCCL has finished enqueueing
  // it. The call returns Status: an error names the call.
  template <class Call>
  Status nccl_call(Call&& call, const char* text, const char* file, int line) {
    ncclResult_t result;
    {
      std::lock_guard<std::timed_mutex> lock(mu_);
      if (aborted_) return fail("the NCCL communicator was aborted");
      begin_call(text, op_timeout_);
      result = call();
      call_deadline_ns_.store(kNoCall);
    }
    // nccl.h: with a non-blocking communicator a call may return
    // ncclInProgress (NCCL 2.28 then launches it from a thread of its own);
    // no other NCCL call may be made on the communicator, nor kernels queued
    // on its stream, until ncclCommGetAsyncError stops answering that. The
    // first collective can take seconds here (NCCL connects peers lazily).
    const auto started = Clock::now();
    while (result == ncclInProgress) {
      const auto waited = Clock::now() - started;
      if (waited > op_timeout_) {
        // NCCL's launch thread may still be working: abort the communicator
        // now (stopping that thread and its kernels), or the teardown that
        // follows this error could wait forever in cudaFree or a destroy.
        abort_communicator();
        return fail(std::string("NCCL call ") + text + " at " + file + ":" + std::to_string(line) +
                    " was still being enqueued after " + seconds_text(op_timeout_) +
                    " (op_timeout); a peer probably died or the network failed (NCCL_DEBUG=INFO shows more); "
                    "the communicator was aborted");
      }
      if (waited > std::chrono::milliseconds(5))
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      else
        std::this_thread::yield();  // usually done within microseconds
      std::lock_guard<std::timed_mutex> lock(mu_);
      if (aborted_) return fail("the NCCL communicator was aborted");
      ncclResult_t state = ncclSuccess;
      const ncclResult_t query = ncclCommGetAsyncError(comm_, &state);
      result = query != ncclSuccess ? query : state;
    }
    if (result != ncclSuccess) return fail(nccl_error_text(result, comm_, text, file, line));
    return Ok{};
  }

  // data = SUM over ranks of (prescale * data), in place, on the comm stream.
  Status allreduce(float* data, std::size_t count, float prescale) {
    if (Status s = enqueue_after_compute(); !s) return remember(s);
    if (Status s = reduce(data, count, prescale); !s) return remember(s);
    if (Status s = arm_watchdog(); !s) return remember(s);
    return Ok{};
  }

  Status reduce(float* data, std::size_t count, float prescale) {
    if (prescale == 1.0f) return NCCL_CALL(ncclAllReduce(data, data, count, ncclFloat, ncclSum, comm_, comm_stream_));
    // Pre-multiplied sum: NCCL scales each rank's input inside the reduction
    // kernel, so averaging costs no extra pass over the buffer. The scalar is
    // copied when the operator is created (ncclScalarHostImmediate), so one
    // operator serves every bucket of the run (the prescale is 1 / world
    // size); it is destroyed with the communicator.
    if (!premul_ready_ || premul_value_ != prescale) {
      if (premul_ready_) {
        premul_ready_ = false;
        if (Status s = NCCL_CALL(ncclRedOpDestroy(premul_op_, comm_)); !s) return s;
      }
      if (Status s = NCCL_CALL(ncclRedOpCreatePreMulSum(&premul_op_, &prescale, ncclFloat, ncclScalarHostImmediate,
                                                        comm_));
          !s)
        return s;
      premul_ready_ = true;
      premul_value_ = prescale;
    }
    return NCCL_CALL(ncclAllReduce(data, data, count, ncclFloat, premul_op_, comm_, comm_stream_));
  }

  // The comm stream waits (on the GPU) for everything queued on the compute
  // stream so far: the gradients of a bucket are written there.
  Status enqueue_after_compute() {
    if (!error_.empty()) return fail(error_);
    CUDA_TRY(cudaEventRecord(compute_ready_, ctx_->stream));
    CUDA_TRY(cudaStreamWaitEvent(comm_stream_, compute_ready_, 0));
    return Ok{};
  }

  // Marks the newest collective for the watchdog: an event behind it on the
  // comm stream, and when it was queued. Not while a step is being captured.
  Status arm_watchdog() {
    if (capturing_) return Ok{};
    std::lock_guard<std::timed_mutex> lock(mu_);
    CUDA_TRY(cudaEventRecord(watch_event_, comm_stream_));
    watch_since_ = Clock::now();
    watch_armed_ = true;
    return Ok{};
  }

  // Blocking collectives: the host waits for the comm stream. If a peer died
  // this never returns by itself; the watchdog then ends the process.
  Status wait_comm_stream() {
    CUDA_TRY(cudaStreamSynchronize(comm_stream_));
    return async_state();
  }

  // An asynchronous NCCL error seen so far, as a Status.
  Status async_state() {
    ncclResult_t state = ncclSuccess;
    {
      std::lock_guard<std::timed_mutex> lock(mu_);
      if (aborted_) return fail("the NCCL communicator was aborted");
      const ncclResult_t query = ncclCommGetAsyncError(comm_, &state);
      if (query != ncclSuccess) state = query;
    }
    if (state != ncclSuccess && state != ncclInProgress) {
      Status failed =
          fail(nccl_error_text(state, comm_, "ncclCommGetAsyncError (an earlier collective)", __FILE__, __LINE__));
      return remember(failed);
    }
    return Ok{};
  }

  // After an error the communicator is unusable: later calls report the first error.
  Status remember(const Status& failed) {
    if (error_.empty()) error_ = failed.error();
    return failed;
  }

  void abort_communicator() {
    std::lock_guard<std::timed_mutex> lock(mu_);
    if (aborted_) return;
    aborted_ = true;
    ncclCommAbort(comm_);
  }

  // ncclCommFinalize flushes the communicator's outstanding work and may wait
  // for peers: for a blocking communicator the watchdog bounds the call, for
  // a non-blocking one the deadline here. True if it finished cleanly.
  bool finalize(ncclComm_t comm) {
    std::lock_guard<std::timed_mutex> lock(mu_);
    if (aborted_) return false;
    begin_call("ncclCommFinalize", finalize_timeout_);
    ncclResult_t state = ncclCommFinalize(comm);
    call_deadline_ns_.store(kNoCall);
    if (state == ncclInProgress) state = wait_until_ready(comm, Clock::now() + finalize_timeout_);
    return state == ncclSuccess;
  }

  // Tells the watchdog that the main thread enters NCCL with `text`, which
  // must return within `limit` (call with mu_ held).
  void begin_call(const char* text, std::chrono::milliseconds limit) {
    call_text_.store(text);
    call_limit_ms_.store(limit.count());
    call_deadline_ns_.store(now_ns() + std::chrono::nanoseconds(limit).count());
  }

  // At teardown, with the watchdog gone: an abort that hangs (peers gone in
  // the middle of a finalize) must still not keep the process alive.
  void release(ncclComm_t comm, bool clean) {
    if (!comm) return;
    if (clean) {
      ncclCommDestroy(comm);
      return;
    }
    const int rank = rank_;
    std::thread([rank] {
      std::this_thread::sleep_for(std::chrono::seconds(10));
      std::fprintf(stderr, "ddp-train: NCCL (rank %d): ncclCommAbort did not return within 10 s at exit\n", rank);
      std::fflush(nullptr);
      std::_Exit(1);
    }).detach();
    ncclCommAbort(comm);
  }

  void stop_watchdog() {
    if (!watchdog_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(stop_mu_);
      stop_ = true;
    }
    stop_cv_.notify_all();
    watchdog_.join();
  }

  void watch() {
    // The current device is per thread: without this, the first CUDA call here
    // would create a context on GPU 0, costing every rank memory on GPU 0.
    cudaSetDevice(ctx_->device);
    for (;;) {
      {
        std::unique_lock<std::mutex> stop_lock(stop_mu_);
        if (stop_cv_.wait_for(stop_lock, std::chrono::milliseconds(100), [this] { return stop_; })) return;
      }
      // 1. The main thread stuck inside an NCCL call (it holds mu_).
      const std::int64_t deadline = call_deadline_ns_.load();
      if (deadline != kNoCall && now_ns() > deadline) exit_stuck_call();
      // 2. The communicator and the newest collective, with no call inside NCCL.
      std::unique_lock<std::timed_mutex> lock(mu_, std::defer_lock);
      if (!lock.try_lock_for(std::chrono::milliseconds(20))) continue;
      if (aborted_) return;
      ncclResult_t state = ncclSuccess;
      const ncclResult_t query = ncclCommGetAsyncError(comm_, &state);
      if (query != ncclSuccess) state = query;
      if (state != ncclSuccess && state != ncclInProgress) {
        const char* last = ncclGetLastError(comm_);
        die_locked("error",
                   std::string(ncclGetErrorString(state)) + (last && *last ? std::string(" (") + last + ")" : ""));
      }
      if (!watch_armed_) continue;
      const cudaError_t done = cudaEventQuery(watch_event_);
      if (done == cudaSuccess) {
        watch_armed_ = false;
      } else if (done == cudaErrorNotReady) {
        (void)cudaGetLastError();  // "not ready" is an answer, not an error: keep it out of this thread's error state
        const auto pending = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - watch_since_);
        if (pending > op_timeout_)
          die_locked("timeout", "a collective has not completed after " + seconds_text(pending) + " (op_timeout " +
                                    seconds_text(op_timeout_) + ")");
      } else {
        std::fprintf(stderr, "ddp-train: CUDA error (rank %d): %s (%s); the job stops\n", rank_,
                     cudaGetErrorString(done), cudaGetErrorName(done));
        std::fflush(stderr);
        std::_Exit(1);
      }
    }
  }

  // The main thread is inside NCCL: no abort is allowed, so end the process
  // (its sockets close, so the peers' NCCL sees the loss). Never returns.
  [[noreturn]] void exit_stuck_call() {
    std::fprintf(stderr,
                 "ddp-train: NCCL timeout (rank %d): %s has not returned after %s; a peer probably "
                 "died or the network failed; the job stops instead of hanging\n",
                 rank_, call_text_.load(), seconds_text(std::chrono::milliseconds(call_limit_ms_.load())).c_str());
    std::fflush(nullptr);
    std::_Exit(1);
  }

  // Called with mu_ held, so no other thread is inside NCCL. Never returns.
  [[noreturn]] void die_locked(const std::string& what, const std::string& detail) {
    aborted_ = true;
    char message[1024];
    std::snprintf(message, sizeof message,
                  "ddp-train: NCCL %s (rank %d): %s; a peer probably died or the network failed; the job stops "
                  "instead of hanging\n",
                  what.c_str(), rank_, detail.c_str());
    // ncclCommAbort stops the communicator's kernels and proxy threads, so
    // peers see the connection close. Should it hang itself, this thread
    // still ends the process.
    const std::string fallback = message;
    std::thread([fallback] {
      std::this_thread::sleep_for(std::chrono::seconds(10));
      std::fputs(fallback.c_str(), stderr);
      std::fputs("ddp-train: (ncclCommAbort did not return within 10 s)\n", stderr);
      std::fflush(stderr);
      std::_Exit(1);
    }).detach();
    ncclCommAbort(comm_);
    std::fputs(message, stderr);
    std::fflush(nullptr);
    // _Exit: no atexit handlers or static destructors, which could wait on the
    // GPU or on the main thread, which may be blocked inside CUDA right now.
    std::_Exit(1);
  }

  static constexpr std::int64_t kNoCall = 0;

  std::shared_ptr<CudaContext> ctx_;  // the compute stream the collectives order after
  const NcclComms comms_;
  const ncclComm_t comm_;  // comms_.ops
  const int rank_;
  const int size_;
  const std::chrono::milliseconds op_timeout_;
  const std::chrono::milliseconds finalize_timeout_;

  cudaStream_t comm_stream_ = nullptr;
  cudaEvent_t compute_ready_ = nullptr;  // recorded on the compute stream before each collective
  cudaEvent_t comm_done_ = nullptr;      // recorded on the comm stream by finish_buckets()
  std::string error_;                    // the first failure; main thread only
  bool capturing_ = false;               // main thread only
  ncclRedOp_t premul_op_{};              // main thread only
  float premul_value_ = 0.0f;
  bool premul_ready_ = false;

  // Shared with the watchdog thread.
  std::timed_mutex mu_;  // held around every NCCL call and watch_* access
  std::atomic<std::int64_t> call_deadline_ns_{kNoCall};  // the NCCL call in progress must return by then
  std::atomic<const char*> call_text_{""};
  std::atomic<std::int64_t> call_limit_ms_{0};
  bool aborted_ = false;
  cudaEvent_t watch_event_ = nullptr;  // behind the newest collective (or captured step)
  Clock::time_point watch_since_;
  bool watch_armed_ = false;
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  std::thread watchdog_;
};

#undef NCCL_CALL

}  // namespace

Result<std::unique_ptr<Collectives>> make_nccl_collectives(std::shared_ptr<CudaContext> context,
                                                           const GpuBackendConfig& config) {
  Result<NcclComms> comms = create_nccl_comms(*context, config);
  if (!comms) return fail(comms.error());
  auto collectives = std::make_unique<NcclCollectives>(std::move(context), *comms, config);
  const Status started = collectives->start();  // on failure the destructor frees what exists
  if (!started) return fail(started.error());
  return std::unique_ptr<Collectives>(std::move(collectives));
}

}  // namespace ddp::train::cuda
