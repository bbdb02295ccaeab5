#include "ddp/wire/failure_class.hpp"

#include <array>
#include <csignal>
#include <utility>

#include "ddp/wire/failure.hpp"

namespace ddp {

namespace {

constexpr std::array<std::pair<FailureClass, const char*>, 12> kClassNames = {{
    {FailureClass::Exception, "exception"},
    {FailureClass::Exit, "exit"},
    {FailureClass::HostOom, "host_oom"},
    {FailureClass::GpuOom, "gpu_oom"},
    {FailureClass::CudaNccl, "cuda_nccl"},
    {FailureClass::Crash, "crash"},
    {FailureClass::Killed, "killed"},
    {FailureClass::Hang, "hang"},
    {FailureClass::NodeLost, "node_lost"},
    {FailureClass::NodeUnhealthy, "node_unhealthy"},
    {FailureClass::SlurmStop, "slurm_stop"},
    {FailureClass::Setup, "setup"},
}};

// What PyTorch, the CUDA runtime, cuBLAS and ddp-train print when a GPU runs
// out of memory ("CUDA out of memory. Tried to allocate...",
// torch.OutOfMemoryError, cudaErrorMemoryAllocation's "out of memory").
constexpr std::array<std::string_view, 5> kGpuOom = {"CUDA out of memory", "OutOfMemoryError",
                                                     "cudaErrorMemoryAllocation", "CUBLAS_STATUS_ALLOC_FAILED",
                                                     "CUDA error: out of memory"};
// A CUDA, cuBLAS/cuDNN or NCCL failure: PyTorch's "CUDA error: ...",
// ProcessGroupNCCL's "NCCL error ...", NCCL's result names, the libraries'
// status names, ddp-train's "CUDA error at"/"NCCL error at".
constexpr std::array<std::string_view, 10> kCudaNccl = {
    "CUDA error",      "NCCL error",     "ncclUnhandledCudaError", "ncclSystemError", "ncclInternalError",
    "ncclRemoteError", "CUBLAS_STATUS_", "CUDNN_STATUS_",          "cudaError",       "uncorrectable ECC error"};
constexpr std::string_view kTraceback = "Traceback (most recent call last):";

template <std::size_t N>
bool says_any(const std::string& text, const std::array<std::string_view, N>& needles) {
  for (const auto needle : needles)
    if (text.find(needle) != std::string::npos) return true;
  return false;
}

bool is_crash_signal(int sig) {
  return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGABRT;
}

}  // namespace

const char* class_name(FailureClass cls) {
  for (const auto& [c, name] : kClassNames)
    if (c == cls) return name;
  return "?";
}

std::optional<FailureClass> class_from_name(std::string_view name) {
  for (const auto& [c, n] : kClassNames)
    if (name == n) return c;
  return std::nullopt;
}

FailureClass classify_worker(const Failure& f, bool oom_killed) {
  if (f.signal == SIGKILL && oom_killed) return FailureClass::HostOom;
  if (says_any(f.stderr_tail, kGpuOom)) return FailureClass::GpuOom;
  if (says_any(f.stderr_tail, kCudaNccl)) return FailureClass::CudaNccl;
  if (f.signal) return is_crash_signal(f.signal) ? FailureClass::Crash : FailureClass::Killed;
  if (f.stderr_tail.find(kTraceback) != std::string::npos) return FailureClass::Exception;
  return FailureClass::Exit;
}

FailureClass class_of(const Failure& f) { return f.cls.value_or(default_class(f)); }

FailureClass default_class(const Failure& f) {
  switch (f.kind) {
    case FailureKind::WorkerExited:
      return classify_worker(f, false);
    case FailureKind::StartFailed:
    case FailureKind::Setup:
      return FailureClass::Setup;
    case FailureKind::Hung:
    case FailureKind::HangUnreported:
      return FailureClass::Hang;
    case FailureKind::NodeLost:
      return FailureClass::NodeLost;
    case FailureKind::NodeUnhealthy:
      return FailureClass::NodeUnhealthy;
    case FailureKind::AgentSignalled:
      return FailureClass::SlurmStop;
  }
  return FailureClass::Exit;
}

}  // namespace ddp
