// The arguments-first API (seed 003) in C++: state out = A @ B on device tensors, let
// get_kernels rank the kernels that can run it, compile the first pick into an artifact, run it
// and verify every element against a float64 reference. Without a GPU it lists the kernels and
// says there is nothing to run them on.
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "tilecraft/tilecraft.hpp"

namespace tc = tilecraft;
namespace api = tilecraft::api;

namespace {

// float -> IEEE half, exact for the small integers this example uses (no rounding needed).
uint16_t to_half(float value) {
  uint32_t f;
  std::memcpy(&f, &value, sizeof f);
  const auto sign = static_cast<uint16_t>((f >> 16) & 0x8000u);
  if ((f & 0x7fffffffu) == 0) return sign;
  const auto exponent = static_cast<uint16_t>(((f >> 23) & 0xffu) - 127 + 15);
  return static_cast<uint16_t>(sign | (exponent << 10) | ((f >> 13) & 0x3ffu));
}

}  // namespace

int main() {
  const auto listed = api::get_kernels(nullptr, {}, 90);
  std::printf("%zu kernels listed for compute capability 9.0\n", listed.size());
  if (tc::Status gpu = tc::cuda_device_available(); !gpu) {
    std::printf("no GPU here (%s): nothing to run the kernels on.\n", gpu.message().c_str());
    return 0;
  }

  const int64_t L = 2, M = 384, N = 256, K = 192;
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> values(-3, 3);
  std::vector<float> a(L * M * K), b(L * K * N);
  for (float& x : a) x = static_cast<float>(values(rng));
  for (float& x : b) x = static_cast<float>(values(rng));
  std::vector<uint16_t> ha(a.size()), hb(b.size());
  for (size_t i = 0; i < a.size(); ++i) ha[i] = to_half(a[i]);
  for (size_t i = 0; i < b.size(); ++i) hb[i] = to_half(b[i]);
  std::vector<float> out(L * M * N, std::nanf(""));

  void *dA, *dB, *dOut;
  tc::throw_if_error(tc::cuda_status(cudaMalloc(&dA, ha.size() * 2), "cudaMalloc A"));
  tc::throw_if_error(tc::cuda_status(cudaMalloc(&dB, hb.size() * 2), "cudaMalloc B"));
  tc::throw_if_error(tc::cuda_status(cudaMalloc(&dOut, out.size() * 4), "cudaMalloc out"));
  tc::throw_if_error(tc::cuda_status(
      cudaMemcpy(dA, ha.data(), ha.size() * 2, cudaMemcpyHostToDevice), "copying A"));
  tc::throw_if_error(tc::cuda_status(
      cudaMemcpy(dB, hb.data(), hb.size() * 2, cudaMemcpyHostToDevice), "copying B"));
  tc::throw_if_error(tc::cuda_status(
      cudaMemcpy(dOut, out.data(), out.size() * 4, cudaMemcpyHostToDevice), "poisoning out"));

  const auto args =
      api::GemmArguments::make(tc::TensorView::cuda_contiguous(dA, tc::DataType::f16, {L, M, K}),
                               tc::TensorView::cuda_contiguous(dB, tc::DataType::f16, {L, K, N}),
                               tc::TensorView::cuda_contiguous(dOut, tc::DataType::f32, {L, M, N}),
                               tc::DataType::f32)
          .value();
  const auto kernels = api::get_kernels(&args);
  if (kernels.empty()) {
    std::printf("no kernel supports these arguments\n");
    return 1;
  }
  const api::Kernel& kernel = kernels.front();
  std::printf("%zu kernels support (%lld, %lld, %lld) x %lld; first pick %s (%s)\n", kernels.size(),
              static_cast<long long>(M), static_cast<long long>(N), static_cast<long long>(K),
              static_cast<long long>(L), kernel.metadata().kernel_name.c_str(),
              kernel.metadata().score_explain.c_str());
  const tc::CompiledArtifact artifact = kernel.compile(args).value();
  tc::throw_if_error(kernel.run(args, &artifact));
  tc::throw_if_error(tc::cuda_status(
      cudaMemcpy(out.data(), dOut, out.size() * 4, cudaMemcpyDeviceToHost), "copying out"));

  size_t mismatches = 0;
  for (int64_t l = 0; l < L; ++l) {
    for (int64_t m = 0; m < M; ++m) {
      for (int64_t n = 0; n < N; ++n) {
        double reference = 0;
        for (int64_t k = 0; k < K; ++k) {
          reference += double(a[(l * M + m) * K + k]) * double(b[(l * K + k) * N + n]);
        }
        mismatches += out[(l * M + m) * N + n] != reference;
      }
    }
  }
  cudaFree(dA);
  cudaFree(dB);
  cudaFree(dOut);
  std::printf("ran on the GPU: %zu mismatches of %zu elements against the float64 reference\n",
              mismatches, out.size());
  return mismatches == 0 ? 0 : 1;
}
