// Runs GEMMs on kernels exported by `tilecraft export --name tuned_gemms` and checks every element
// against a float64 reference computed here, on random inputs, with the outputs poisoned (NaN)
// before each launch. Also checks that bad arguments are refused with a status naming them.
//
//   exported_consumer DTYPE:MxNxK[:bias_gelu] ...   (DTYPE bf16 or f16; TN: A row-major M x K,
//                                                    B column-major K x N, D row-major M x N)
// Exit status: 0 when every result matched and every bad argument was refused; 1 otherwise.
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "half_float.hpp"
#include "tuned_gemms.hpp"

namespace {

struct Case {
  tuned_gemms::DataType type = tuned_gemms::DataType::bf16;
  int64_t m = 0, n = 0, k = 0;
  bool bias_gelu = false;
  std::string text;
};

bool parse(const std::string& text, Case* c) {
  const size_t colon = text.find(':');
  if (colon == std::string::npos) return false;
  const std::string type = text.substr(0, colon);
  if (type != "bf16" && type != "f16") return false;
  c->type = type == "bf16" ? tuned_gemms::DataType::bf16 : tuned_gemms::DataType::f16;
  long long m = 0, n = 0, k = 0;
  char tail[32] = {0};
  const int read = std::sscanf(text.c_str() + colon + 1, "%lldx%lldx%lld:%31s", &m, &n, &k, tail);
  if (read < 3 || m < 1 || n < 1 || k < 1) return false;
  c->m = m;
  c->n = n;
  c->k = k;
  c->bias_gelu = read == 4 && std::string(tail) == "bias_gelu";
  c->text = text;
  return read == 3 || c->bias_gelu;
}

bool cuda_ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
  return false;
}

double gelu_tanh(double x) {
  return 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

struct Device {
  void* p = nullptr;
  explicit Device(size_t bytes) { cuda_ok(cudaMalloc(&p, bytes), "cudaMalloc"); }
  ~Device() { cudaFree(p); }
};

// Random inputs in [-1, 1), rounded to the type; the rounded values, as doubles, for the reference.
std::vector<uint16_t> fill(size_t count, tuned_gemms::DataType type, std::mt19937* rng,
                           std::vector<double>* values) {
  std::uniform_real_distribution<float> draw(-1.0f, 1.0f);
  std::vector<uint16_t> bits(count);
  values->resize(count);
  for (size_t i = 0; i < count; ++i) {
    const float v = draw(*rng);
    bits[i] = type == tuned_gemms::DataType::bf16 ? to_bf16(v) : to_f16(v);
    (*values)[i] = type == tuned_gemms::DataType::bf16 ? from_bf16(bits[i]) : from_f16(bits[i]);
  }
  return bits;
}

// Runs the case (m + grow rows: a shape the library was not exported for when grow > 0) and
// compares; true when every element matches.
bool run_case(const Case& c, int64_t grow, cudaStream_t stream) {
  const int64_t m = c.m + grow, n = c.n, k = c.k;
  std::mt19937 rng(static_cast<unsigned>(m * 131 + n * 17 + k));
  std::vector<double> a, b, bias;
  const std::vector<uint16_t> a_bits = fill(size_t(m * k), c.type, &rng, &a);  // row-major M x K
  const std::vector<uint16_t> b_bits = fill(size_t(k * n), c.type, &rng, &b);  // column-major
  const std::vector<uint16_t> bias_bits = fill(size_t(n), c.type, &rng, &bias);
  Device dA(a_bits.size() * 2), dB(b_bits.size() * 2), dD(size_t(m * n) * 2), dBias(size_t(n) * 2);
  if (!cuda_ok(cudaMemcpy(dA.p, a_bits.data(), a_bits.size() * 2, cudaMemcpyHostToDevice), "A") ||
      !cuda_ok(cudaMemcpy(dB.p, b_bits.data(), b_bits.size() * 2, cudaMemcpyHostToDevice), "B") ||
      !cuda_ok(cudaMemcpy(dBias.p, bias_bits.data(), bias_bits.size() * 2, cudaMemcpyHostToDevice),
               "bias") ||
      !cuda_ok(cudaMemset(dD.p, 0xff, size_t(m * n) * 2), "poisoning D")) {
    return false;
  }
  tuned_gemms::Gemm g;
  g.m = m;
  g.n = n;
  g.k = k;
  g.a_type = g.b_type = g.d_type = c.type;
  g.A = dA.p;
  g.lda = k;
  g.B = dB.p;
  g.ldb = k;
  g.D = dD.p;
  g.ldd = n;
  if (c.bias_gelu) {
    g.bias = dBias.p;
    g.activation = tuned_gemms::Activation::gelu_tanh;
  }
  const tuned_gemms::Status status = tuned_gemms::gemm(g, stream);
  if (!status) {
    std::fprintf(stderr, "%s (m %lld): gemm refused: %s\n", c.text.c_str(), (long long)m,
                 status.message.c_str());
    return false;
  }
  std::vector<uint16_t> d_bits(size_t(m * n));
  if (!cuda_ok(cudaStreamSynchronize(stream), "the kernel") ||
      !cuda_ok(cudaMemcpy(d_bits.data(), dD.p, d_bits.size() * 2, cudaMemcpyDeviceToHost), "D")) {
    return false;
  }
  // Output rounding (8 or 11 significant bits) plus an allowance for f32 accumulation.
  const double relative = c.type == tuned_gemms::DataType::bf16 ? 1.0 / 64 : 1.0 / 512;
  const double absolute = 1e-3 * std::sqrt(double(k));
  int64_t bad = 0;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double want = 0;
      for (int64_t p = 0; p < k; ++p) want += a[size_t(i * k + p)] * b[size_t(j * k + p)];
      if (c.bias_gelu) want = gelu_tanh(want + bias[size_t(j)]);
      const uint16_t bits = d_bits[size_t(i * n + j)];
      const double got = c.type == tuned_gemms::DataType::bf16 ? from_bf16(bits) : from_f16(bits);
      if (!(std::fabs(got - want) <= absolute + relative * std::fabs(want))) {
        if (bad++ < 5) {
          std::fprintf(stderr, "%s (m %lld): D[%lld, %lld] = %g, expected %g\n", c.text.c_str(),
                       (long long)m, (long long)i, (long long)j, got, want);
        }
      }
    }
  }
  std::printf("%s (m %lld): %s%s%s\n", c.text.c_str(), (long long)m, bad ? "MISMATCH" : "ok",
              status.message.empty() ? "" : ": ", status.message.c_str());
  return bad == 0;
}

// Bad arguments: each must be refused, with the argument named in the message.
bool refusals(const Case& c) {
  Device buffer(1 << 20);
  tuned_gemms::Gemm g;
  g.m = c.m;
  g.n = c.n;
  g.k = c.k;
  g.a_type = g.b_type = g.d_type = c.type;
  g.A = g.B = buffer.p;
  g.D = buffer.p;
  g.lda = c.k;
  g.ldb = c.k;
  g.ldd = c.n;
  struct Bad {
    const char* argument;
    tuned_gemms::Gemm gemm;
  };
  std::vector<Bad> bad;
  bad.push_back({"lda", g});
  bad.back().gemm.lda = c.k - 1;
  bad.push_back({"A", g});
  bad.back().gemm.A = nullptr;
  bad.push_back({"m", g});
  bad.back().gemm.m = -4;
  bad.push_back({"problem", g});
  bad.back().gemm.a_type = tuned_gemms::DataType::f64;
  bool all = true;
  for (const Bad& b : bad) {
    const tuned_gemms::Status s = tuned_gemms::gemm(b.gemm, nullptr);
    const bool named = s.message.rfind(b.argument, 0) == 0;
    std::printf("bad %s: %s: %s\n", b.argument,
                s.ok    ? "ACCEPTED"
                : named ? "refused"
                        : "UNNAMED",
                s.message.c_str());
    all = all && !s.ok && named;
  }
  return all;
}

}  // namespace

int main(int argc, char** argv) {
  std::printf("tuned_gemms (API version %d):\n", tuned_gemms::api_version());
  for (const std::string& p : tuned_gemms::problems()) std::printf("  %s\n", p.c_str());
  std::vector<Case> cases;
  for (int i = 1; i < argc; ++i) {
    Case c;
    if (!parse(argv[i], &c)) {
      std::fprintf(stderr,
                   "argument %d: expected DTYPE:MxNxK[:bias_gelu] (bf16 or f16), got '%s'\n", i,
                   argv[i]);
      return 2;
    }
    cases.push_back(c);
  }
  if (cases.empty()) {
    std::fprintf(stderr, "expected at least one DTYPE:MxNxK[:bias_gelu] argument\n");
    return 2;
  }
  cudaStream_t stream = nullptr;
  if (!cuda_ok(cudaStreamCreate(&stream), "cudaStreamCreate")) return 1;
  bool ok = true;
  for (const Case& c : cases) {
    ok = run_case(c, 0, stream) && ok;
    // A shape it was not exported for: runs on an exported kernel of its kind if one takes it.
    tuned_gemms::Gemm probe;
    probe.m = c.m + 64;
    probe.n = c.n;
    probe.k = c.k;
    probe.a_type = probe.b_type = probe.d_type = c.type;
    probe.A = probe.B = probe.D = &probe;  // never launched: supports() only checks
    probe.lda = probe.ldb = c.k;
    probe.ldd = c.n;
    if (c.bias_gelu) {
      probe.bias = &probe;
      probe.activation = tuned_gemms::Activation::gelu_tanh;
    }
    if (tuned_gemms::supports(probe)) ok = run_case(c, 64, stream) && ok;
    ok = refusals(c) && ok;
  }
  cudaStreamDestroy(stream);
  std::printf("%s\n", ok ? "all matched" : "FAILED");
  return ok ? 0 : 1;
}
