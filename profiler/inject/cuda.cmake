# profiler/inject/cuda.cmake - the CUDA parts of cvc, built only when the CUDA
# toolkit (CUPTI headers and library) is found.  Included OPTIONALLY by the
# top-level CMakeLists.txt after the `cvc` library and `cvc_tool` exist.
#
# Builds: libcvc_inject.so (CUPTI injection library, next to the cvc binary
# where `cvc profile` looks for it), the decoder test and benchmark, and the
# example program.  Without the toolkit, or with one older than CUDA 13.0
# (cuda_gate.cmake), nothing here is built and `cvc profile` says in one
# line why it is missing.
option(CVC_WITH_CUDA "build the CUPTI profiler when the CUDA toolkit is found" ON)

if(CVC_WITH_CUDA)
  if(NOT CUDAToolkit_ROOT AND EXISTS /usr/local/cuda)
    set(CUDAToolkit_ROOT /usr/local/cuda)
  endif()
  find_package(CUDAToolkit QUIET)
endif()

if(NOT CVC_WITH_CUDA OR NOT CUDAToolkit_FOUND OR NOT TARGET CUDA::cupti)
  message(STATUS "cvc: CUDA toolkit with CUPTI not found: 'cvc profile' is not built")
  target_compile_definitions(cvc_tool PRIVATE
    "CVC_NO_CUPTI_WHY=\"this cvc was built without the CUDA toolkit (no CUPTI at configure time)\"")
  return()
endif()
include(${CMAKE_SOURCE_DIR}/profiler/inject/cuda_gate.cmake)
cvc_cuda_gate("${CUDAToolkit_VERSION}" CVC_CUDA_WHY_NOT)
if(CVC_CUDA_WHY_NOT)
  message(STATUS "cvc: ${CVC_CUDA_WHY_NOT}: libcvc_inject.so is not built")
  target_compile_definitions(cvc_tool PRIVATE "CVC_NO_CUPTI_WHY=\"${CVC_CUDA_WHY_NOT}\"")
  return()
endif()
message(STATUS "cvc: CUDA ${CUDAToolkit_VERSION} at ${CUDAToolkit_LIBRARY_DIR}: building libcvc_inject.so")

# libcupti path for NVTX_INJECTION64_PATH (NVTX ranges become CUPTI markers).
get_target_property(CVC_CUPTI_LIB CUDA::cupti IMPORTED_LOCATION)
if(NOT CVC_CUPTI_LIB)
  find_library(CVC_CUPTI_LIB cupti HINTS ${CUDAToolkit_LIBRARY_DIR})
endif()
target_compile_definitions(cvc_tool PRIVATE CVC_HAVE_CUPTI=1 CVC_CUPTI_LIB="${CVC_CUPTI_LIB}")

# The decoder and the graph-node tracker (graph.c): shared by the injection
# library, its test and its benchmark.
add_library(cvc_cupti_decode STATIC ${CMAKE_SOURCE_DIR}/profiler/inject/decode.c
            ${CMAKE_SOURCE_DIR}/profiler/inject/graph.c)
target_include_directories(cvc_cupti_decode PUBLIC ${CMAKE_SOURCE_DIR}/profiler/inject)
target_link_libraries(cvc_cupti_decode PUBLIC cvc CUDA::cupti)
set_target_properties(cvc_cupti_decode PROPERTIES POSITION_INDEPENDENT_CODE ON)

# The injection library: hidden visibility, only the CVC_API entry points
# exported; the static libraries inside it stay private (--exclude-libs) so
# it does not leak cvc symbols into the profiled process.
add_library(cvc_inject SHARED ${CMAKE_SOURCE_DIR}/profiler/inject/inject.c
            ${CMAKE_SOURCE_DIR}/profiler/inject/nobuffers.c
            ${CMAKE_SOURCE_DIR}/profiler/inject/nccl_plugin.c)
target_link_libraries(cvc_inject PRIVATE cvc_cupti_decode cvc CUDA::cupti Threads::Threads)
target_link_options(cvc_inject PRIVATE -Wl,--exclude-libs,ALL -Wl,--as-needed -Wl,-z,defs)
set_target_properties(cvc_inject PROPERTIES OUTPUT_NAME cvc_inject C_VISIBILITY_PRESET hidden)
add_dependencies(cvc_tool cvc_inject)

# The example: cuBLAS GEMMs + NCCL all-reduce with NVTX ranges, plain C
# against the runtime API, so it builds and links without a GPU or driver.
find_library(CVC_NCCL_LIB nccl HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_DIR}/../lib)
find_path(CVC_NCCL_INC nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
if(TARGET CUDA::cublas AND CVC_NCCL_LIB AND CVC_NCCL_INC)
  add_executable(gemm_allreduce ${CMAKE_SOURCE_DIR}/examples/gemm_allreduce.c)
  target_include_directories(gemm_allreduce SYSTEM PRIVATE ${CVC_NCCL_INC})
  target_link_libraries(gemm_allreduce PRIVATE CUDA::cudart CUDA::cublas ${CVC_NCCL_LIB}
                        ${CMAKE_DL_LIBS})
else()
  message(STATUS "cvc: cuBLAS or NCCL not found: examples/gemm_allreduce is not built")
endif()

# A tiny CUDA runtime program for the profile test (exit status pass-through).
add_executable(cuda_exit7 ${CMAKE_SOURCE_DIR}/tests/unit/cuda/cuda_exit7.c)
target_link_libraries(cuda_exit7 PRIVATE CUDA::cudart)

# Loads libcvc_inject.so as the driver would: its lifecycle is tested without a GPU.
add_executable(inject_harness ${CMAKE_SOURCE_DIR}/tests/unit/cuda/inject_harness.c)
target_include_directories(inject_harness PRIVATE ${CMAKE_SOURCE_DIR}/profiler/inject)
# It links libcupti itself and exports its symbols: its own
# cuptiActivityRegisterCallbacks (the "feedkill" buffer feeder) comes first
# and forwards to libcupti's through RTLD_NEXT.
# (--no-as-needed: it calls no libcupti function by name, so the default
# --as-needed would drop libcupti and RTLD_NEXT would find nothing)
target_link_libraries(inject_harness PRIVATE -Wl,--no-as-needed CUDA::cupti ${CMAKE_DL_LIBS})
set_target_properties(inject_harness PROPERTIES ENABLE_EXPORTS ON)

# A driver that finds no device (cuInit = 100), for the no-device line.
add_library(fake_libcuda SHARED ${CMAKE_SOURCE_DIR}/tests/unit/cuda/fake_libcuda.c)
set_target_properties(fake_libcuda PROPERTIES OUTPUT_NAME cuda SOVERSION 1
                      LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/fakecuda)

# Decoder benchmark (bench/cuda/: the global bench/bench_*.c glob must not
# see it, it needs the CUPTI headers).
add_executable(bench_decode ${CMAKE_SOURCE_DIR}/bench/cuda/bench_decode.c)
target_include_directories(bench_decode PRIVATE ${CMAKE_SOURCE_DIR})
target_link_libraries(bench_decode PRIVATE cvc_cupti_decode cvc PkgConfig::SQLITE3)

# Unit test over real CUPTI record structs (tests/unit/cuda/: not globbed).
if(CRITERION_FOUND)
  get_filename_component(CVC_SHARED_DIR_CUDA ${CMAKE_SOURCE_DIR}/../shared ABSOLUTE)
  add_executable(test_cupti_decode ${CMAKE_SOURCE_DIR}/tests/unit/cuda/test_cupti_decode.c
                 ${CMAKE_SOURCE_DIR}/tests/unit/cuda/test_cupti_inject.c
                 ${CMAKE_SOURCE_DIR}/tests/unit/cuda/test_cupti_graph.c
                 ${CMAKE_SOURCE_DIR}/tests/unit/testutil.c)
  target_include_directories(test_cupti_decode PRIVATE ${CMAKE_SOURCE_DIR}
                             ${CMAKE_SOURCE_DIR}/tests/unit)
  target_compile_definitions(test_cupti_decode PRIVATE
    CVC_SHARED_DIR="${CVC_SHARED_DIR_CUDA}"
    CVC_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
    CVC_BINARY_DIR="${CMAKE_BINARY_DIR}"
    CVC_TOOL="$<TARGET_FILE:cvc_tool>"
    CVC_CUDA_EXIT7="$<TARGET_FILE:cuda_exit7>"
    CVC_INJECT_HARNESS="$<TARGET_FILE:inject_harness>"
    CVC_INJECT_LIB="$<TARGET_FILE:cvc_inject>"
    CVC_FAKE_LIBCUDA="$<TARGET_FILE:fake_libcuda>"
    CVC_CMAKE="${CMAKE_COMMAND}")
  target_link_libraries(test_cupti_decode PRIVATE cvc_cupti_decode cvc CUDA::cupti
                        PkgConfig::CRITERION PkgConfig::SQLITE3)
  add_dependencies(test_cupti_decode cvc_tool cvc_inject cuda_exit7 inject_harness
                   fake_libcuda)
  enable_testing()
  add_test(NAME unit.cupti_decode COMMAND test_cupti_decode --jobs=2)
  set_tests_properties(unit.cupti_decode PROPERTIES
    ENVIRONMENT "CVC_TEST_TMP=${CMAKE_BINARY_DIR}/testtmp" TIMEOUT ${CVC_TEST_TIMEOUT})
endif()
