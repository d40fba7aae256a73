# tests/fuzz/fuzz.cmake - libFuzzer harnesses, one per parser (issue 8).
# Included (OPTIONAL) at the end of the top-level CMakeLists.txt.  Off by
# default; a fuzz build is its own build directory, compiled with clang:
#
#   cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DCVC_FUZZ=ON -DCVC_WITH_CUDA=OFF
#   cmake --build build-fuzz --target fuzzers -j2
#   cd build-fuzz && ctest -L fuzz -j2      # each harness CVC_FUZZ_SECONDS s, two at a time
#
# `make fuzz` does this with FUZZ_SECONDS (default 60); `make test` with 60.
# The library is rebuilt with libFuzzer coverage, ASan and UBSan; the
# harnesses link libFuzzer.  Without -DCVC_FUZZ=ON this file only adds the
# valgrind test to the normal build (tests/valgrind/run.sh).

# ---- valgrind run of the CLI on real traces (normal builds only) -------------
if(NOT CVC_FUZZ AND NOT CMAKE_BUILD_TYPE STREQUAL "asan")
  add_test(NAME valgrind.cli COMMAND ${CMAKE_SOURCE_DIR}/tests/valgrind/run.sh
           $<TARGET_FILE:cvc_tool> ${CVC_SHARED_DIR} ${CMAKE_BINARY_DIR}/testtmp/valgrind)
  set_tests_properties(valgrind.cli PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900)
endif()

option(CVC_FUZZ "build the libFuzzer harnesses (needs clang)" OFF)
if(NOT CVC_FUZZ)
  return()
endif()
if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "CVC_FUZZ needs clang: cmake -DCMAKE_C_COMPILER=clang -DCVC_FUZZ=ON")
endif()
if(TARGET cvc_inject)
  # The injection library links with -z defs, which the sanitizer runtime breaks.
  message(FATAL_ERROR "CVC_FUZZ: configure with -DCVC_WITH_CUDA=OFF (the CUPTI harness finds cupti.h itself)")
endif()
set(CVC_FUZZ_SECONDS 10 CACHE STRING "seconds each harness runs under ctest -L fuzz")
# ctest fails a harness that outlives its run by far (a hang in a harness or in run.sh).
math(EXPR CVC_FUZZ_TIMEOUT "${CVC_FUZZ_SECONDS} * 2 + 300")

set(CVC_FUZZ_SAN -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
# The library: coverage for libFuzzer plus the sanitizers.  Other owners'
# code meets clang's warning set here, which gcc's build already gates.
target_compile_options(cvc PRIVATE -fsanitize=fuzzer-no-link ${CVC_FUZZ_SAN} -g -Wno-error)
target_link_options(cvc INTERFACE -fsanitize=address,undefined)

add_custom_target(fuzzers)
set(CVC_FUZZ_TARGETS kineto nsys nccltests cvcdb csvtab catalog rules scenario spool stream sqlcraft
    validate analyze hfconfig)

add_executable(fuzz_seed_spool ${CMAKE_SOURCE_DIR}/tests/fuzz/seed_spool.c)
target_link_libraries(fuzz_seed_spool PRIVATE cvc)
add_dependencies(fuzzers fuzz_seed_spool cvc_tool)

foreach(t ${CVC_FUZZ_TARGETS})
  string(TOUPPER ${t} T)
  add_executable(fuzz_${t} ${CMAKE_SOURCE_DIR}/tests/fuzz/fuzz_one.c)
  target_compile_definitions(fuzz_${t} PRIVATE FZ_TARGET=FZ_${T})
  target_compile_options(fuzz_${t} PRIVATE -fsanitize=fuzzer ${CVC_FUZZ_SAN} -g)
  target_link_options(fuzz_${t} PRIVATE -fsanitize=fuzzer ${CVC_FUZZ_SAN})
  target_link_libraries(fuzz_${t} PRIVATE cvc)
  # fuzz_analyze reads the report's private trace tables (reports/rep_proj.h)
  target_include_directories(fuzz_${t} PRIVATE ${CMAKE_SOURCE_DIR})
  add_dependencies(fuzzers fuzz_${t})
  add_test(NAME fuzz.${t} COMMAND ${CMAKE_SOURCE_DIR}/tests/fuzz/run.sh
           $<TARGET_FILE:fuzz_${t}> ${t} ${CVC_FUZZ_SECONDS} ${CMAKE_BINARY_DIR}/fuzz
           ${CMAKE_SOURCE_DIR} ${CVC_SHARED_DIR} $<TARGET_FILE:fuzz_seed_spool>)
  set_tests_properties(fuzz.${t} PROPERTIES LABELS fuzz TIMEOUT ${CVC_FUZZ_TIMEOUT})
endforeach()

# The CUPTI record decoder, when the toolkit's headers are there.
if(NOT CUDAToolkit_FOUND)
  find_package(CUDAToolkit QUIET)
endif()
if(CUDAToolkit_FOUND AND EXISTS ${CUDAToolkit_INCLUDE_DIRS}/cupti.h)
  add_executable(fuzz_cupti ${CMAKE_SOURCE_DIR}/tests/fuzz/fuzz_cupti.c
                 ${CMAKE_SOURCE_DIR}/profiler/inject/decode.c)
  target_include_directories(fuzz_cupti PRIVATE ${CMAKE_SOURCE_DIR} ${CMAKE_SOURCE_DIR}/profiler/inject
                             ${CMAKE_SOURCE_DIR}/tests/fuzz ${CUDAToolkit_INCLUDE_DIRS})
  target_compile_options(fuzz_cupti PRIVATE -fsanitize=fuzzer ${CVC_FUZZ_SAN} -g -Wno-error)
  target_link_options(fuzz_cupti PRIVATE -fsanitize=fuzzer ${CVC_FUZZ_SAN})
  # the decoder walks buffers with libcupti (cuptiActivityGetNextRecord)
  target_link_libraries(fuzz_cupti PRIVATE cvc CUDA::cupti)
  add_dependencies(fuzzers fuzz_cupti)
  add_test(NAME fuzz.cupti COMMAND ${CMAKE_SOURCE_DIR}/tests/fuzz/run.sh
           $<TARGET_FILE:fuzz_cupti> cupti ${CVC_FUZZ_SECONDS} ${CMAKE_BINARY_DIR}/fuzz
           ${CMAKE_SOURCE_DIR} ${CVC_SHARED_DIR})
  set_tests_properties(fuzz.cupti PROPERTIES LABELS fuzz TIMEOUT ${CVC_FUZZ_TIMEOUT})
else()
  message(STATUS "cvc fuzz: no cupti.h: the CUPTI decoder harness is not built")
endif()
