#pragma once
// Run-time choice of the CPU kernels' vector width. The build targets baseline x86-64 (SSE2) so
// the library runs on any x86-64; kernels that gain from wider vectors get copies compiled for
// AVX2 (and, where written, AVX-512) through GCC's target attribute and pick the widest this CPU
// runs. TESSERA_CPU_SIMD=sse2|avx2 caps the choice (tests run the narrower copies; a user can rule
// out a suspect one).
//
// Why attributes (or `#pragma GCC target` around a namespace of its own) and not a translation unit
// built with -mavx2: inline functions and templates instantiated in such a unit are emitted as AVX2
// code under the same (COMDAT) symbol as the baseline copy, and the linker may keep the AVX2 one
// for everybody, which faults on older CPUs. With the attribute only the functions that carry it
// are AVX2 code. Users: segment_reduce.cpp (fold_f32_avx2, fold_f32_avx512, attributes), and the
// attention and SpMM walks (simd_copies.inl compiles a walks file in both copies).
#include <algorithm>
#include <cstdlib>
#include <string>

namespace tessera::ops::cpu {

// 0: SSE2, 1: AVX2 (with FMA), 2: AVX-512F. Checked once.
inline int simd_level() {
  static const int level = [] {
    __builtin_cpu_init();
    const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    int l = __builtin_cpu_supports("avx512f") ? 2 : avx2 ? 1 : 0;
    if (const char* e = std::getenv("TESSERA_CPU_SIMD")) {
      const std::string cap(e);
      if (cap == "sse2") l = 0;
      else if (cap == "avx2") l = std::min(l, 1);
    }
    return l;
  }();
  return level;
}

}  // namespace tessera::ops::cpu

// Calls the widest copy of a function that simd_copies.inl compiled: TESSERA_SIMD_CALL(f<T>(x, y))
// runs avx2::f<T>(x, y) where the CPU has AVX2 and FMA (and TESSERA_CPU_SIMD allows it), else
// base::f<T>(x, y).
#define TESSERA_SIMD_CALL(...) \
  (::tessera::ops::cpu::simd_level() >= 1 ? avx2::__VA_ARGS__ : base::__VA_ARGS__)

