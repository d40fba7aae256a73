# cuda_gate.cmake - the oldest CUDA toolkit `cvc profile` can be built with.
#
# The decoder casts CUPTI's records to the structs of CUDA 13.0's headers:
# CUpti_ActivityKernel10 (CUDA 12.x has Kernel9), CUpti_ActivityMemcpy6
# (12.8 and later; Memcpy5 before), and reads 13.0's xxyyzz CUPTI version
# numbering (cupti_version.h).  With an older toolkit everything but the
# profiler is built and `cvc profile` says which version it needs and which
# it found.  Included by cuda.cmake; its test runs it alone:
#   cmake -DCVC_GATE_VERSION=12.8 -P cuda_gate.cmake   (prints the reason, or nothing)
set(CVC_CUDA_MIN_VERSION 13.0)

# Sets ${out} to why a toolkit of `version` cannot build the profiler, "" when it can.
function(cvc_cuda_gate version out)
  if(version VERSION_LESS CVC_CUDA_MIN_VERSION)
    set(${out} "this cvc was built against CUDA ${version}: 'cvc profile' needs CUDA ${CVC_CUDA_MIN_VERSION} or newer (the CUPTI record structs it reads, CUpti_ActivityKernel10, come with 13.0)" PARENT_SCOPE)
  else()
    set(${out} "" PARENT_SCOPE)
  endif()
endfunction()

if(CMAKE_SCRIPT_MODE_FILE AND DEFINED CVC_GATE_VERSION)
  cvc_cuda_gate(${CVC_GATE_VERSION} why)
  message("${why}")
endif()
