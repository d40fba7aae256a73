# profiler/calibrate/calibrate.cmake - `cvc calibrate` (docs/CALIBRATE.md).
# Included OPTIONALLY by the top-level CMakeLists.txt after the `cvc`
# library and `cvc_tool` exist (and after profiler/inject/cuda.cmake).
#
# The planning code is the projector's (projector/calplan.c) and the plan
# file's format db/calshape.c: both join libcvc with their folders.
# With the CUDA toolkit (nvcc, cuBLASLt, NCCL): the benchmark runner
# cvc_calibrate_run, next to the cvc binary where `cvc calibrate` looks for
# it.  Without the toolkit nothing CUDA is built and `cvc calibrate` (not
# --plan) says so in one line.
# the GPU probe of `cvc calibrate` dlopens libcuda.so.1
target_link_libraries(cvc_tool PRIVATE ${CMAKE_DL_LIBS})

option(CVC_WITH_CALIBRATE_RUNNER "build the calibration runner when CUDA is found" ON)
if(NOT CVC_WITH_CALIBRATE_RUNNER)
  return()
endif()
if(NOT CUDAToolkit_ROOT AND EXISTS /usr/local/cuda)
  set(CUDAToolkit_ROOT /usr/local/cuda)
endif()
find_package(CUDAToolkit QUIET)
find_library(CVC_CAL_NCCL_LIB nccl HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_DIR}/../lib)
find_path(CVC_CAL_NCCL_INC nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
  set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
endif()
include(CheckLanguage)
check_language(CUDA)
if(NOT CUDAToolkit_FOUND OR NOT TARGET CUDA::cublasLt OR NOT CVC_CAL_NCCL_LIB
   OR NOT CVC_CAL_NCCL_INC OR NOT CMAKE_CUDA_COMPILER)
  message(STATUS "cvc: nvcc, cuBLASLt or NCCL not found: cvc_calibrate_run is not built")
  return()
endif()
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  # A100, H100/H200, B200: the GPUs of the hardware catalog with a tensor path
  set(CMAKE_CUDA_ARCHITECTURES 80 90 100)
endif()
enable_language(CUDA)
message(STATUS "cvc: building cvc_calibrate_run (cuBLASLt, NCCL, nvcc ${CMAKE_CUDA_COMPILER_VERSION})")

# Kernels (softmax, memory-bandwidth classes, fills): nvcc does not take
# the C warning set of add_compile_options(), so this target resets it and
# asks nvcc for its own warnings-as-errors.
add_library(cvc_cal_kernels STATIC ${CMAKE_SOURCE_DIR}/profiler/calibrate/cuda/kernels.cu)
set_property(TARGET cvc_cal_kernels PROPERTY COMPILE_OPTIONS
             $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings>)
target_include_directories(cvc_cal_kernels PRIVATE ${CMAKE_SOURCE_DIR}/profiler/calibrate/cuda)

add_executable(cvc_calibrate_run ${CMAKE_SOURCE_DIR}/profiler/calibrate/cuda/runner.c)
target_include_directories(cvc_calibrate_run PRIVATE ${CMAKE_SOURCE_DIR}/profiler/calibrate/cuda)
target_include_directories(cvc_calibrate_run SYSTEM PRIVATE ${CVC_CAL_NCCL_INC})
target_link_libraries(cvc_calibrate_run PRIVATE cvc_cal_kernels cvc CUDA::cudart CUDA::cublasLt
                      ${CVC_CAL_NCCL_LIB})
set_target_properties(cvc_calibrate_run PROPERTIES LINKER_LANGUAGE C)
add_dependencies(cvc_tool cvc_calibrate_run)
target_compile_definitions(cvc_tool PRIVATE CVC_HAVE_CAL_RUNNER=1)
