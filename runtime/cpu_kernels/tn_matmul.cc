// Tidal's CPU kernels for what XLA:CPU runs slowly, as XLA FFI handlers
// (runtime/cpu_kernels/__init__.py compiles this file on first use against the
// installed jaxlib's FFI headers and registers the handlers with JAX).
//
// tidal_tn_matmul: C[M, N] = A[K, M]^T B[K, N], float32, row-major. A weight
// gradient summed over rows (sdg-contract's `h^T @ g` over every step and row)
// contracts both operands over their leading axis. XLA:CPU runs that product
// on Eigen (about 140 us for K = 1024, M = N = 64 on one AVX-512 core) and its
// transposes are no faster, while the kernel below runs at the speed of XLA's
// plain products (about 85 us): for each block of 8 rows of C and 32 columns
// it streams the K rows of A and B once, broadcasting A's 8 values of a row
// against B's row in 16 register accumulators (outer products, no transpose
// and no packing: the row layout of A is already what a rank-1 update reads).
// Sums run over chunks of 256 rows in registers, then add into C, so that
// rounding grows with K / 256 + 256 terms rather than K. Without AVX-512 (at
// run time) a plain loop nest in the same order computes the same sums.
#include <immintrin.h>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

constexpr int64_t kChunk = 256;   // rows summed per register pass (partial sums added into C)

template <int R>
__attribute__((target("avx512f"))) void block512(const float* a, const float* b, float* c, int64_t K, int64_t M,
                                                  int64_t N, int64_t i0, int64_t j0, int64_t nj) {
  // C[i0:i0+R, j0:j0+nj] += sum_k A[k, i0:i0+R]^T B[k, j0:j0+nj], nj <= 32
  __mmask16 m0 = nj >= 16 ? 0xFFFF : (__mmask16)((1u << nj) - 1);
  __mmask16 m1 = nj >= 32 ? 0xFFFF : nj > 16 ? (__mmask16)((1u << (nj - 16)) - 1) : 0;
  for (int64_t k0 = 0; k0 < K; k0 += kChunk) {
    int64_t k1 = k0 + kChunk < K ? k0 + kChunk : K;
    __m512 acc0[R], acc1[R];
    for (int r = 0; r < R; ++r) { acc0[r] = _mm512_setzero_ps(); acc1[r] = _mm512_setzero_ps(); }
    for (int64_t k = k0; k < k1; ++k) {
      const float* bk = b + k * N + j0;
      __m512 b0 = _mm512_maskz_loadu_ps(m0, bk);
      __m512 b1 = _mm512_maskz_loadu_ps(m1, bk + 16);
      const float* ak = a + k * M + i0;
      for (int r = 0; r < R; ++r) {
        __m512 x = _mm512_set1_ps(ak[r]);
        acc0[r] = _mm512_fmadd_ps(x, b0, acc0[r]);
        acc1[r] = _mm512_fmadd_ps(x, b1, acc1[r]);
      }
    }
    for (int r = 0; r < R; ++r) {
      float* cr = c + (i0 + r) * N + j0;
      _mm512_mask_storeu_ps(cr, m0, _mm512_add_ps(_mm512_maskz_loadu_ps(m0, cr), acc0[r]));
      _mm512_mask_storeu_ps(cr + 16, m1, _mm512_add_ps(_mm512_maskz_loadu_ps(m1, cr + 16), acc1[r]));
    }
  }
}

__attribute__((target("avx512f"))) void tn512(const float* a, const float* b, float* c, int64_t K, int64_t M,
                                               int64_t N) {
  std::memset(c, 0, sizeof(float) * M * N);
  for (int64_t i0 = 0; i0 < M; i0 += 8) {
    int64_t r = M - i0 < 8 ? M - i0 : 8;
    for (int64_t j0 = 0; j0 < N; j0 += 32) {
      int64_t nj = N - j0 < 32 ? N - j0 : 32;
      switch (r) {
        case 8: block512<8>(a, b, c, K, M, N, i0, j0, nj); break;
        case 7: block512<7>(a, b, c, K, M, N, i0, j0, nj); break;
        case 6: block512<6>(a, b, c, K, M, N, i0, j0, nj); break;
        case 5: block512<5>(a, b, c, K, M, N, i0, j0, nj); break;
        case 4: block512<4>(a, b, c, K, M, N, i0, j0, nj); break;
        case 3: block512<3>(a, b, c, K, M, N, i0, j0, nj); break;
        case 2: block512<2>(a, b, c, K, M, N, i0, j0, nj); break;
        default: block512<1>(a, b, c, K, M, N, i0, j0, nj); break;
      }
    }
  }
}

void tn_generic(const float* a, const float* b, float* c, int64_t K, int64_t M, int64_t N) {
  std::memset(c, 0, sizeof(float) * M * N);
  for (int64_t k0 = 0; k0 < K; k0 += kChunk) {
    int64_t k1 = k0 + kChunk < K ? k0 + kChunk : K;
    for (int64_t i = 0; i < M; ++i) {
      float* ci = c + i * N;
      for (int64_t k = k0; k < k1; ++k) {
        float x = a[k * M + i];
        const float* bk = b + k * N;
        for (int64_t j = 0; j < N; ++j) ci[j] += x * bk[j];
      }
    }
  }
}

}  // namespace


static ffi::Error Run(const char* name, ffi::Buffer<ffi::F32>& a, ffi::Buffer<ffi::F32>& b, int64_t rows,
                      ffi::ResultBuffer<ffi::F32>& c) {
  auto ad = a.dimensions(), bd = b.dimensions();
  if (ad.size() != 2 || bd.size() != 2 || ad[0] != bd[0])
    return ffi::Error::InvalidArgument(std::string(name) + ": operands must be (K, M) and (K, N)");
  int64_t K = ad[0] < rows ? ad[0] : rows, M = ad[1], N = bd[1];
  if (K < 0) K = 0;
  // TIDAL_CPU_KERNELS_GENERIC (declared in tidal.config): any value but 0 selects the portable loops.
  static const bool fast = [] {
    const char* generic = std::getenv("TIDAL_CPU_KERNELS_GENERIC");
    return __builtin_cpu_supports("avx512f") && !(generic && *generic && std::strcmp(generic, "0") != 0);
  }();
  if (fast)
    tn512(a.typed_data(), b.typed_data(), c->typed_data(), K, M, N);
  else
    tn_generic(a.typed_data(), b.typed_data(), c->typed_data(), K, M, N);
  return ffi::Error::Success();
}

// C = A^T B over every row.
static ffi::Error TnImpl(ffi::Buffer<ffi::F32> a, ffi::Buffer<ffi::F32> b, ffi::ResultBuffer<ffi::F32> c) {
  return Run("tidal_tn_matmul", a, b, a.dimensions().size() ? a.dimensions()[0] : 0, c);
}

// C = A[:rows]^T B[:rows] (rows clamped to [0, K]): the rows past `rows` (a last
// tile's padding) are not read, as if both operands were zero there.
static ffi::Error TnRowsImpl(ffi::Buffer<ffi::F32> a, ffi::Buffer<ffi::F32> b, ffi::Buffer<ffi::S32> rows,
                             ffi::ResultBuffer<ffi::F32> c) {
  if (rows.element_count() != 1) return ffi::Error::InvalidArgument("tidal_tn_matmul_rows: rows must be a scalar");
  return Run("tidal_tn_matmul_rows", a, b, rows.typed_data()[0], c);
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(TidalTnMatmul, TnImpl,
                              ffi::Ffi::Bind().Arg<ffi::Buffer<ffi::F32>>().Arg<ffi::Buffer<ffi::F32>>().Ret<ffi::Buffer<ffi::F32>>());
XLA_FFI_DEFINE_HANDLER_SYMBOL(TidalTnMatmulRows, TnRowsImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::S32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());
