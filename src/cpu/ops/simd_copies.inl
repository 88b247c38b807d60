// Compiles the definitions in the file named by TESSERA_SIMD_WALKS twice, here in the includer's
// namespace: as namespace `base` (the build's baseline x86-64, SSE2) and as namespace `avx2` under
// `#pragma GCC target("avx2,fma")`, the instruction sets simd_level() checks for level 1. The
// includer calls the copies through TESSERA_SIMD_CALL (simd.hpp). Why a pragma over a namespace
// and not a translation unit built with -mavx2: simd.hpp. Only the functions defined in the walks
// file (and the OpenMP regions outlined from them) become AVX2 code; standard-library templates
// they instantiate stay baseline. The walks file holds definitions only, no includes.
#ifndef TESSERA_SIMD_WALKS
#error "define TESSERA_SIMD_WALKS as the walks file to compile in SSE2 and AVX2 copies"
#endif
namespace base {
#include TESSERA_SIMD_WALKS
}  // namespace base
#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {
#include TESSERA_SIMD_WALKS
}  // namespace avx2
#pragma GCC pop_options
#undef TESSERA_SIMD_WALKS
