// NcclCollectives: gradient all-reduce over NCCL on a communication stream of
// its own, so that reducing one bucket overlaps the backward pass computing
// the next (the compute stream belongs to CudaOps, see cuda_context.cuh).
//
// Failure handling is the point of most of this file. A blocking NCCL call
// cannot be interrupted: a blocking ncclCommInitRank waits forever for a peer
// that never arrives and cannot even be aborted from another thread (NVIDIA/nccl
// issue #289), and a collective whose peer died spins on the GPU forever, so
// cudaStreamSynchronize never returns. A Slurm job would then sit idle until
// its time limit. So:
//   * the communicator is created non-blocking (config.blocking = 0): every
//     NCCL call returns at once, possibly with ncclInProgress, and we poll
//     ncclCommGetAsyncError for the outcome with a deadline of our own;
//   * a watchdog thread checks the communicator's error state every 100 ms and
//     how long the newest collective has been pending; on an error or after
//     op_timeout it aborts the communicator, prints one line saying why and
//     ends the process, and the launcher then stops the other ranks.
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>

#include "cuda/cuda_context.cuh"

namespace ddp::train::cuda {
namespace {

using Clock = std::chrono::steady_clock;

std::string nccl_version() {
  int code = 0;
  ncclGetVersion(&code);
  return std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." + std::to_string(code % 100);
}

std::string seconds(std::chrono::milliseconds ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", ms.count() / 1000.0);
  return text;
}

// Runs one NCCL call through NcclCollectives::nccl_call, which names it in errors.
#define NCCL_CALL(call) nccl_call([&] { return (call); }, #call, __FILE__, __LINE__)

class NcclCollectives final : public Collectives {
 public:
  NcclCollectives(std::shared_ptr<CudaContext> context, ncclComm_t comm, const GpuBackendConfig& config)
      : ctx_(std::move(context)),
        comm_(comm),
        rank_(config.rank),
        size_(config.world_size),
        op_timeout_(config.op_timeout),
        finalize_timeout_(config.init_timeout) {}

  // The stream, the events and the watchdog; the communicator exists already.
  Status start() {
    CUDA_TRY(cudaSetDevice(ctx_->device));
    CUDA_TRY(cudaStreamCreateWithFlags(&comm_stream_, cudaStreamNonBlocking));
    // Timing off: these events only order streams, which is cheaper without it.
    CUDA_TRY(cudaEventCreateWithFlags(&compute_ready_, cudaEventDisableTiming));
    CUDA_TRY(cudaEventCreateWithFlags(&comm_done_, cudaEventDisableTiming));
    CUDA_TRY(cudaEventCreateWithFlags(&watch_event_, cudaEventDisableTiming));
    watchdog_ = std::thread([this] { watch(); });
    return Ok{};
  }

  ~NcclCollectives() override {
    // Let queued collectives finish while the watchdog still guards against a hang.
    if (comm_stream_ && error_.empty()) cudaStreamSynchronize(comm_stream_);
    if (watchdog_.joinable()) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        stop_ = true;
      }
      stop_cv_.notify_all();
      watchdog_.join();
    }
    if (comm_) {
      // ncclCommFinalize flushes the communicator's outstanding work; it too
      // may wait for peers, hence the deadline and the abort as a fallback.
      bool clean = error_.empty();
      if (clean) {
        ncclResult_t state = ncclCommFinalize(comm_);
        const auto deadline = Clock::now() + finalize_timeout_;
        while (state == ncclInProgress && Clock::now() < deadline) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
          if (ncclCommGetAsyncError(comm_, &state) != ncclSuccess) state = ncclInternalError;
        }
        clean = state == ncclSuccess;
      }
      if (clean)
        ncclCommDestroy(comm_);
      else
        ncclCommAbort(comm_);
    }
    if (watch_event_) cudaEventDestroy(watch_event_);
    if (comm_done_) cudaEventDestroy(comm_done_);
    if (compute_ready_) cudaEventDestroy(compute_ready_);
    if (comm_stream_) cudaStreamDestroy(comm_stream_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string name() const override {
    return "nccl " + nccl_version() + " (" + std::to_string(size_) + " rank" + (size_ == 1 ? "" : "s") +
           ", cuda:" + std::to_string(ctx_->device) + ")";
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

 private:
  // Runs one NCCL call under mu_ (the watchdog may abort the communicator,
  // which frees it: no call may be inside NCCL then) and waits until NCCL has
  // finished enqueueing it. The call returns Status: an error names the call.
  template <class Call>
  Status nccl_call(Call&& call, const char* text, const char* file, int line) {
    ncclResult_t result;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (aborted_) return fail("the NCCL communicator was aborted");
      result = call();
    }
    // nccl.h: with a non-blocking communicator a call may return
    // ncclInProgress; the operation is then still being enqueued, and no other
    // NCCL call may be made on the communicator (nor kernels queued on its
    // stream) until ncclCommGetAsyncError stops answering ncclInProgress.
    // The first collective can take seconds here (NCCL connects peers lazily).
    const auto started = Clock::now();
    while (result == ncclInProgress) {
      const auto waited = Clock::now() - started;
      if (waited > op_timeout_)
        return fail(std::string("NCCL call ") + text + " at " + file + ":" + std::to_string(line) +
                    " was still being enqueued after " + seconds(op_timeout_) +
                    " (op_timeout); a peer probably died or the network failed (NCCL_DEBUG=INFO shows more)");
      if (waited > std::chrono::milliseconds(5))
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      else
        std::this_thread::yield();  // usually done within microseconds
      std::lock_guard<std::mutex> lock(mu_);
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
    // read before ncclRedOpCreatePreMulSum returns (ncclScalarHostImmediate),
    // and nccl.h allows destroying the op "as soon as the last NCCL function
    // which is given that operator returns": nccl_call has waited out
    // ncclInProgress, so the all-reduce is fully enqueued by then.
    ncclRedOp_t op;
    if (Status s = NCCL_CALL(ncclRedOpCreatePreMulSum(&op, &prescale, ncclFloat, ncclScalarHostImmediate, comm_)); !s)
      return s;
    const Status reduced = NCCL_CALL(ncclAllReduce(data, data, count, ncclFloat, op, comm_, comm_stream_));
    const Status destroyed = NCCL_CALL(ncclRedOpDestroy(op, comm_));
    if (!reduced) return reduced;
    return destroyed;
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
  // comm stream, and when it was queued.
  Status arm_watchdog() {
    std::lock_guard<std::mutex> lock(mu_);
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
      std::lock_guard<std::mutex> lock(mu_);
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

  void watch() {
    // The current device is per thread: without this, the first CUDA call here
    // would create a context on GPU 0, costing every rank memory on GPU 0.
    cudaSetDevice(ctx_->device);
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      stop_cv_.wait_for(lock, std::chrono::milliseconds(100));
      if (stop_) break;

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
          die_locked("timeout", "a collective has not completed after " + seconds(pending) + " (op_timeout " +
                                    seconds(op_timeout_) + ")");
      } else {
        std::fprintf(stderr, "ddp-train: CUDA error (rank %d): %s (%s); the job stops\n", rank_,
                     cudaGetErrorString(done), cudaGetErrorName(done));
        std::fflush(stderr);
        std::_Exit(1);
      }
    }
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
    std::fflush(stderr);
    // _Exit: no atexit handlers or static destructors, which could wait on the
    // GPU or on the main thread, which may be blocked inside CUDA right now.
    std::_Exit(1);
  }

  std::shared_ptr<CudaContext> ctx_;  // the compute stream the collectives order after
  ncclComm_t comm_;
  const int rank_;
  const int size_;
  const std::chrono::milliseconds op_timeout_;
  const std::chrono::milliseconds finalize_timeout_;

  cudaStream_t comm_stream_ = nullptr;
  cudaEvent_t compute_ready_ = nullptr;  // recorded on the compute stream before each collective
  cudaEvent_t comm_done_ = nullptr;      // recorded on the comm stream by finish_buckets()
  std::string error_;                    // the first failure; main thread only

  // Shared with the watchdog thread.
  std::mutex mu_;  // held around every NCCL call and watch_* access
  std::condition_variable stop_cv_;
  bool stop_ = false;
  bool aborted_ = false;
  cudaEvent_t watch_event_ = nullptr;  // behind the newest collective on the comm stream
  Clock::time_point watch_since_;
  bool watch_armed_ = false;
  std::thread watchdog_;
};

#undef NCCL_CALL

}  // namespace

Result<std::unique_ptr<Collectives>> make_nccl_collectives(std::shared_ptr<CudaContext> context,
                                                           const GpuBackendConfig& config) {
  const auto deadline = Clock::now() + config.init_timeout;
  const int rank = config.rank;
  const int world = config.world_size;
  const std::string who = "rank " + std::to_string(rank) + " of " + std::to_string(world);
  if (world < 1 || rank < 0 || rank >= world) return fail("invalid NCCL rank: " + who);
  if (world > 1 && !config.store)
    return fail("NCCL with several ranks needs the rendezvous store (a bug in ddp-train)");
  CUDA_TRY(cudaSetDevice(context->device));  // NCCL binds the communicator to the current device

  // Rank 0 creates the unique id (it also starts NCCL's bootstrap listener on
  // rank 0's node) and publishes it; the others fetch it.
  ncclUniqueId id;
  std::memset(&id, 0, sizeof id);
  if (rank == 0) {
    const ncclResult_t r = ncclGetUniqueId(&id);
    if (r != ncclSuccess) return fail(nccl_error_text(r, nullptr, "ncclGetUniqueId(&id)", __FILE__, __LINE__));
    if (config.store) {
      const Status published =
          config.store->set(config.nccl_id_key, Bytes(id.internal, id.internal + sizeof id.internal));
      if (!published) return fail("could not publish the NCCL unique id in the rendezvous store: " + published.error());
    }
  } else {
    const Result<Bytes> bytes = config.store->get(config.nccl_id_key, config.init_timeout);
    if (!bytes)
      return fail(who + " got no NCCL unique id from rank 0 (store key " + config.nccl_id_key + "): " + bytes.error() +
                  "; rank 0 probably failed before creating it, see its output");
    if (bytes->size() != sizeof id.internal)
      return fail("the NCCL unique id in the store has " + std::to_string(bytes->size()) + " bytes, not " +
                  std::to_string(sizeof id.internal) + ": do all nodes run the same ddp-train and NCCL?");
    std::memcpy(id.internal, bytes->data(), sizeof id.internal);
  }

  // Non-blocking: ncclCommInitRankConfig returns at once and the connection
  // set-up runs in the background, so we can give up at our deadline with
  // ncclCommAbort instead of waiting forever (NVIDIA/nccl issue #289).
  ncclConfig_t nccl_config = NCCL_CONFIG_INITIALIZER;
  nccl_config.blocking = 0;
  ncclComm_t comm = nullptr;
  ncclResult_t state = ncclCommInitRankConfig(&comm, world, id, rank, &nccl_config);
  if (state != ncclSuccess && state != ncclInProgress) {
    const std::string text = nccl_error_text(state, comm, "ncclCommInitRankConfig", __FILE__, __LINE__);
    if (comm) ncclCommAbort(comm);
    return fail("could not create the NCCL communicator (" + who + "): " + text);
  }
  if (!comm) return fail("ncclCommInitRankConfig returned no communicator (" + who + ")");
  while (state == ncclInProgress) {
    if (Clock::now() > deadline) {
      ncclCommAbort(comm);
      return fail("the NCCL communicator (" + who + ") was not ready within the init timeout of " +
                  seconds(config.init_timeout) +
                  ": a peer never started or died before joining, or the nodes cannot reach each other (check "
                  "NCCL_SOCKET_IFNAME names an interface every node has, and firewalls; NCCL_DEBUG=INFO shows what "
                  "NCCL tried)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const ncclResult_t query = ncclCommGetAsyncError(comm, &state);
    if (query != ncclSuccess) state = query;
  }
  if (state != ncclSuccess) {
    const std::string text = nccl_error_text(state, comm, "ncclCommInitRankConfig", __FILE__, __LINE__);
    ncclCommAbort(comm);
    return fail("could not create the NCCL communicator (" + who + "): " + text);
  }

  auto collectives = std::make_unique<NcclCollectives>(std::move(context), comm, config);
  const Status started = collectives->start();  // on failure the destructor frees what exists
  if (!started) return fail(started.error());
  return std::unique_ptr<Collectives>(std::move(collectives));
}

}  // namespace ddp::train::cuda
