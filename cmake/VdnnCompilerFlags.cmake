# One place for compiler flags shared by every vdnn target.
function(vdnn_target_defaults target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion>
    $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr -Xcompiler=-Wall,-Wextra>)
endfunction()

# Eigen's CPU kernels are ~3x faster with AVX2+FMA. Use them when this host can run them; the
# flag must reach every C++ target alike (Eigen's alignment and one-definition rules).
option(VDNN_CPU_X86_64_V3 "Build C++ for x86-64-v3 (AVX2, FMA) when the host supports it" ON)
if(VDNN_CPU_X86_64_V3)
  include(CheckCXXSourceRuns)
  set(CMAKE_REQUIRED_FLAGS -march=x86-64-v3)
  check_cxx_source_runs([=[
    #include <immintrin.h>
    int main() {
      __m256 a = _mm256_set1_ps(1.0f);
      __m256 b = _mm256_fmadd_ps(a, a, a);
      return _mm256_cvtss_f32(b) == 2.0f ? 0 : 1;
    }]=] VDNN_HOST_RUNS_X86_64_V3)
  unset(CMAKE_REQUIRED_FLAGS)
  if(VDNN_HOST_RUNS_X86_64_V3)
    add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-march=x86-64-v3>)
  endif()
endif()
