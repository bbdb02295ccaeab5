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
  find_path(NCCL_INCLUDE_DIR nccl.h HINTS /usr/local/cuda/include)
  find_library(NCCL_LIBRARY nccl HINTS /usr/local/cuda/lib64)
  if(CMAKE_CUDA_COMPILER AND NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
    # CMake 3.25 knows no C++20 dialect flag for nvcc; the .cu files keep to C++17.
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    # No GPU here to ask; build for the data-centre GPUs sites run today
    # (A100 = 80, H100/H200 = 90). Set before enable_language(CUDA), which
    # otherwise picks the toolkit's default (75 for CUDA 13).
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 80 90)
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(DDP_HAVE_CUDA ON)
    add_library(ddp_nccl INTERFACE)
    target_include_directories(ddp_nccl INTERFACE ${NCCL_INCLUDE_DIR})
    target_link_libraries(ddp_nccl INTERFACE ${NCCL_LIBRARY})
  elseif(DDP_CUDA STREQUAL "ON")
    message(FATAL_ERROR "DDP_CUDA=ON but no nvcc/NCCL found (looked in /usr/local/cuda)")
  endif()
endif()
message(STATUS "slurm-ddp: CUDA parts: ${DDP_HAVE_CUDA}")
