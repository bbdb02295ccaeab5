# CUDA is optional. When the toolkit with NCCL is present (our build machines and
# CI have it at /usr/local/cuda) the CUDA parts are compiled and linked even where
# no GPU exists to run them. DDP_CUDA=ON makes a missing toolkit an error.
set(DDP_HAVE_CUDA OFF)
if(NOT DDP_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  include(${CMAKE_CURRENT_LIST_DIR}/find_nccl.cmake)
  ddp_find_nccl()
  if(CMAKE_CUDA_COMPILER AND NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
    # CMake 3.25 knows no C++20 dialect flag for nvcc; the .cu files keep to C++17.
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    # No GPU here to ask; build for the data-centre GPUs sites run today
    # (A100 = 80, H100/H200 = 90). Set before enable_language(CUDA), which
    # otherwise picks the toolkit's default (75 for CUDA 13).
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES "80;90" CACHE STRING "GPU architectures to build kernels for")
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(DDP_HAVE_CUDA ON)
    add_library(ddp_nccl INTERFACE)
    target_include_directories(ddp_nccl INTERFACE ${NCCL_INCLUDE_DIR})
    target_link_libraries(ddp_nccl INTERFACE ${NCCL_LIBRARY})
  elseif(DDP_CUDA STREQUAL "ON")
    message(FATAL_ERROR "DDP_CUDA=ON but no nvcc/NCCL found (nvcc: '${CMAKE_CUDA_COMPILER}', nccl.h: "
                        "'${NCCL_INCLUDE_DIR}', NCCL library: '${NCCL_LIBRARY}'); looked in /usr/local/cuda and "
                        "Python wheels (site-packages/nvidia/nccl): set -DDDP_NCCL_ROOT=DIR where DIR has "
                        "include/nccl.h and lib/libnccl.so.2")
  endif()
endif()
message(STATUS "slurm-ddp: CUDA parts: ${DDP_HAVE_CUDA}")
