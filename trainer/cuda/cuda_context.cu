// The CUDA backend's shared pieces: device selection, the compute stream and
// cuBLAS handle, and error messages that tell a person what to do next.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cuda/cuda_context.cuh"

namespace ddp::train::cuda {
namespace {

std::string where(const char* call, const char* file, int line) {
  return std::string(file) + ":" + std::to_string(line) + ": " + call;
}

const char* cuda_hint(cudaError_t err) {
  switch (err) {
    case cudaErrorMemoryAllocation:
      return "the GPU is out of memory: lower --batch-size, or look for other processes on this GPU with nvidia-smi";
    case cudaErrorNoDevice:
      return "no GPU is visible: check CUDA_VISIBLE_DEVICES and that the job asked Slurm for GPUs (--gpus-per-node)";
    case cudaErrorInsufficientDriver:
      return "no NVIDIA driver is loaded (is there a GPU on this machine?), or it is older than this CUDA runtime: "
             "update the driver, or build with a toolkit the driver supports (nvidia-smi shows the newest CUDA "
             "version it supports)";
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorInvalidKernelImage:
    case cudaErrorUnsupportedPtxVersion:
      return "this ddp-train has no kernels for this GPU: rebuild with -DCMAKE_CUDA_ARCHITECTURES set to the GPU's "
             "compute capability (80 for A100, 90 for H100)";
    case cudaErrorDevicesUnavailable:
      return "the GPU is in use by another process (exclusive-process compute mode): check nvidia-smi";
    case cudaErrorECCUncorrectable:
      return "the GPU reported an uncorrectable ECC error, a hardware fault: drain the node and tell its admins";
    case cudaErrorIllegalAddress:
    case cudaErrorMisalignedAddress:
    case cudaErrorLaunchFailure:
      return "a kernel touched memory it does not own (a bug in ddp-train, or a label or index out of range): rerun "
             "with CUDA_LAUNCH_BLOCKING=1 or under compute-sanitizer to find the kernel";
    default:
      return "GPU work fails asynchronously, so the failing call may be an earlier one: rerun with "
             "CUDA_LAUNCH_BLOCKING=1 to find it";
  }
}

const char* cublas_hint(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return "cuBLAS could not start: usually the GPU is out of memory or the driver is broken (check nvidia-smi)";
    case CUBLAS_STATUS_ALLOC_FAILED:
      return "the GPU is out of memory: lower --batch-size, or look for other processes on this GPU with nvidia-smi";
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return "this GPU lacks a feature cuBLAS needs here: use a newer GPU";
    case CUBLAS_STATUS_INVALID_VALUE:
      return "a matrix shape or leading dimension is invalid: a bug in ddp-train, please report it";
    case CUBLAS_STATUS_EXECUTION_FAILED:
      return "the GPU failed to run a cuBLAS kernel: rerun with CUDA_LAUNCH_BLOCKING=1 to find the failing call";
    default:
      return "rerun with CUBLAS_LOGINFO_DBG=1 CUBLAS_LOGDEST_DBG=stderr for cuBLAS's own log";
  }
}

const char* nccl_hint(ncclResult_t result) {
  switch (result) {
    case ncclSystemError:
      return "a system call failed, usually on the network: check that NCCL_SOCKET_IFNAME names an interface every "
             "node has and that no firewall blocks the nodes from each other; NCCL_DEBUG=INFO shows what NCCL tried";
    case ncclRemoteError:
      return "a peer disconnected or reported an error: a peer probably died, so look at the other ranks' output first";
    case ncclUnhandledCudaError:
      return "a CUDA call inside NCCL failed: rerun with NCCL_DEBUG=WARN to see it";
    case ncclInternalError:
      return "NCCL failed internally: rerun with NCCL_DEBUG=INFO and report it";
    case ncclInvalidArgument:
    case ncclInvalidUsage:
      return "NCCL refused the call (two ranks on one GPU, or ranks that disagree on a count): rerun with "
             "NCCL_DEBUG=WARN for details";
    default:
      return "rerun with NCCL_DEBUG=INFO for NCCL's own log";
  }
}

}  // namespace

std::string cuda_error_text(cudaError_t err, const char* call, const char* file, int line) {
  return "CUDA error at " + where(call, file, line) + ": " + cudaGetErrorString(err) + " (" + cudaGetErrorName(err) +
         "); " + cuda_hint(err);
}

std::string cublas_error_text(cublasStatus_t status, const char* call, const char* file, int line) {
  return "cuBLAS error at " + where(call, file, line) + ": " + cublasGetStatusString(status) + " (" +
         cublasGetStatusName(status) + "); " + cublas_hint(status);
}

std::string nccl_error_text(ncclResult_t result, ncclComm_t comm, const char* call, const char* file, int line) {
  std::string text = "NCCL error at " + where(call, file, line) + ": " + ncclGetErrorString(result);
  // NCCL keeps the detail of its last error (which peer, which socket call) apart from the code.
  const char* last = ncclGetLastError(comm);
  if (last && *last) text += std::string(" (") + last + ")";
  return text + "; " + nccl_hint(result);
}

void die(const std::string& message) {
  std::fprintf(stderr, "ddp-train: %s\n", message.c_str());
  // _Exit, not exit: exit() would run static destructors and atexit handlers
  // (the CUDA runtime's teardown among them) while the NCCL watchdog and
  // NCCL's own threads still run, and the runtime's teardown can wait forever
  // on a stream whose kernel is stuck. Flush what stdio holds first, as the
  // watchdog does.
  std::fflush(nullptr);
  std::_Exit(EXIT_FAILURE);
}

CudaContext::~CudaContext() {
  // Best effort: at exit the driver may already be tearing down, and a
  // destructor has nobody to report to.
  cudaSetDevice(device);
  if (stream) cudaStreamSynchronize(stream);
  if (cublas) cublasDestroy(cublas);
  if (cublas_workspace) cudaFree(cublas_workspace);
  if (stream) cudaStreamDestroy(stream);
}

Result<std::shared_ptr<CudaContext>> make_cuda_context(int local_rank) {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::string visible_text =
      visible ? std::string("CUDA_VISIBLE_DEVICES=") + visible : std::string("CUDA_VISIBLE_DEVICES unset");
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0)
    return fail("no CUDA device visible to this rank (LOCAL_RANK=" + std::to_string(local_rank) + ", " + visible_text +
                ")" + (err != cudaSuccess ? std::string(": ") + cudaGetErrorString(err) + "; " + cuda_hint(err) : "") +
                "; run on a GPU node with GPUs allocated to the job (--gpus-per-node), or use --device cpu");
  // LOCAL_RANK picks the GPU among the visible ones. One visible GPU is the
  // exception: the launcher gave each worker its own (ddp-agent
  // --one-gpu-per-worker, srun --gpus-per-task=1), so it is device 0 for every
  // rank. Never local_rank % count: two ranks would share a GPU unnoticed
  // (if they do share one anyway, NCCL refuses with "Duplicate GPU detected").
  int device = local_rank;
  if (count == 1) device = 0;
  if (local_rank < 0 || device >= count)
    return fail("LOCAL_RANK=" + std::to_string(local_rank) + " but only " + std::to_string(count) +
                " CUDA devices are visible to this rank (" + visible_text +
                "): start at most one process per visible GPU on each node (ddp-agent --nproc), or make every GPU "
                "visible to every task of the node");

  // Current device is per host thread: everything below, and every later
  // call of the Ops on this thread, goes to this GPU.
  CUDA_TRY(cudaSetDevice(device));
  auto context = std::make_shared<CudaContext>();
  context->device = device;
  CUDA_TRY(cudaStreamCreateWithFlags(&context->stream, cudaStreamNonBlocking));
  CUBLAS_TRY(cublasCreate(&context->cublas));
  CUBLAS_TRY(cublasSetStream(context->cublas, context->stream));
  // 32 MiB, what NVIDIA's cuBLAS guide suggests for Hopper (4 MiB suffice before it).
  constexpr std::size_t kWorkspaceBytes = std::size_t(32) << 20;
  CUDA_TRY(cudaMalloc(&context->cublas_workspace, kWorkspaceBytes));
  CUBLAS_TRY(cublasSetWorkspace(context->cublas, context->cublas_workspace, kWorkspaceBytes));
  // Plain FP32 products, never TF32: TF32 keeps 10 mantissa bits, which would
  // break the 1e-4 agreement with the CPU backend (ddp-gpu-selftest).
  CUBLAS_TRY(cublasSetMathMode(context->cublas, CUBLAS_DEFAULT_MATH));
  return context;
}

}  // namespace ddp::train::cuda
