# ddp_find_nccl(): NCCL_INCLUDE_DIR and NCCL_LIBRARY, wherever NCCL is installed:
#  - a CUDA toolkit or NVIDIA's packages: include/nccl.h, lib64/libnccl.so;
#  - a runtime-only install, which has libnccl.so.2 and no libnccl.so link;
#  - a Python wheel (nvidia-nccl-cu12/-cu13, what PyTorch installs):
#    site-packages/nvidia/nccl/{include/nccl.h,lib/libnccl.so.2}.
# DDP_NCCL_ROOT (or the environment's NCCL_ROOT / NCCL_HOME) names one of
# those roots and wins over the defaults. Kept apart from cuda.cmake so that a
# test (tests/cmake/) can check it without a CUDA compiler.
set(DDP_NCCL_ROOT "" CACHE PATH
    "NCCL's root: a CUDA toolkit, an NCCL install, or a wheel's site-packages/nvidia/nccl")

function(ddp_find_nccl)
  set(roots ${DDP_NCCL_ROOT} $ENV{NCCL_ROOT} $ENV{NCCL_HOME} /usr/local/cuda)
  # The wheels of Python environments in the usual places (a virtual
  # environment under /opt, the system's site directories).
  file(GLOB wheel_roots LIST_DIRECTORIES true
       /opt/*/.venv/lib/python3*/site-packages/nvidia/nccl
       /opt/*/lib/python3*/site-packages/nvidia/nccl
       /usr/local/lib/python3*/dist-packages/nvidia/nccl
       /usr/lib/python3/dist-packages/nvidia/nccl)
  list(APPEND roots ${wheel_roots})
  find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${roots} PATH_SUFFIXES include
            DOC "Directory of nccl.h")
  # "libnccl.so.2" by its full name: CMake tries a name with a suffix as a
  # file name first, so a runtime-only install and a wheel are found too.
  # NAMES_PER_DIR: the first root that has either name wins (without it,
  # libnccl.so in /usr/local/cuda beats libnccl.so.2 in DDP_NCCL_ROOT).
  find_library(NCCL_LIBRARY NAMES nccl libnccl.so.2 NAMES_PER_DIR HINTS ${roots} PATH_SUFFIXES lib64 lib
               DOC "NCCL's shared library")
  if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
    message(STATUS "slurm-ddp: NCCL: ${NCCL_LIBRARY} (headers in ${NCCL_INCLUDE_DIR})")
  endif()
endfunction()
