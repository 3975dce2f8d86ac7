#include "tune/scratch_problem.hpp"

#include <cmath>

#include "tune/text.hpp"

namespace tilecraft::tune {
namespace {

// Element (l, row, col) of a matrix operand, rank 2 (no batch) or 3.
int64_t offset(const TensorView& t, int64_t l, int64_t row, int64_t col) {
  if (t.rank == 3) return l * t.strides[0] + row * t.strides[1] + col * t.strides[2];
  return row * t.strides[0] + col * t.strides[1];
}

}  // namespace

Result<std::unique_ptr<Trial>> make_trial(const api::GemmArguments& like, uint64_t seed) {
  auto made = ScratchProblem::make(like, seed);
  if (!made) return made.status();
  return std::unique_ptr<Trial>(std::move(*made));
}

Result<std::unique_ptr<ScratchProblem>> ScratchProblem::make(const api::GemmArguments& like,
                                                             uint64_t seed, int samples) {
  std::unique_ptr<ScratchProblem> p(new ScratchProblem());
  p->samples_ = samples;
  p->a_ = like.A();
  p->b_ = like.B();
  p->out_ = like.out();
  const api::EpilogueArguments& e = like.epilogue();
  api::EpilogueArguments epilogue = e;
  auto a = p->buffers_.allocate(&p->a_, true, seed * 4 + 1);
  if (!a) return a.status();
  p->a_host_ = *a;
  auto b = p->buffers_.allocate(&p->b_, true, seed * 4 + 2);
  if (!b) return b.status();
  p->b_host_ = *b;
  auto out = p->buffers_.allocate(&p->out_, false, 0);
  if (!out) return out.status();
  if (e.C.data) {
    p->c_ = e.C;
    auto c = p->buffers_.allocate(&p->c_, true, seed * 4 + 3);
    if (!c) return c.status();
    p->c_host_ = *c;
    epilogue.C = p->c_;
  }
  if (e.bias.data) {
    p->bias_ = e.bias;
    auto bias = p->buffers_.allocate(&p->bias_, true, seed * 4 + 4);
    if (!bias) return bias.status();
    p->bias_host_ = *bias;
    epilogue.bias = p->bias_;
  }
  for (ScaleArgument* scale : {&epilogue.scale_a, &epilogue.scale_b}) {
    if (scale->given) *scale = ScaleArgument{true, 1.0, {}};
  }
  auto args = api::GemmArguments::make(p->a_, p->b_, p->out_, like.accumulator_type(), epilogue,
                                       like.use_fast_accum());
  if (!args) return args.status();
  p->args_ = std::move(*args);
  return p;
}

Status ScratchProblem::poison_output(void* stream) const { return poison(out_, stream); }

double ScratchProblem::reference(int64_t l, int64_t i, int64_t j, double* magnitude) const {
  const api::GemmArguments& g = *args_;
  double sum = 0, abs_sum = 0;
  for (int64_t k = 0; k < g.k(); ++k) {
    const double product = a_host_->at(offset(a_, l, i, k)) * b_host_->at(offset(b_, l, k, j));
    sum += product;
    abs_sum += std::fabs(product);
  }
  *magnitude = abs_sum;
  return sum;
}

Status ScratchProblem::check_output(const api::KernelMetadata& kernel) const {
  const api::GemmArguments& g = *args_;
  const api::EpilogueArguments& e = g.epilogue();
  auto host = download(out_);
  if (!host) return host.status();
  for (int64_t l = 0; l < g.batch(); ++l) {
    for (int64_t i = 0; i < g.m(); ++i) {
      for (int64_t j = 0; j < g.n(); ++j) {
        if (is_poisoned(*host, out_.dtype, offset(out_, l, i, j))) {
          return Status::invalid("output element (" + std::to_string(l) + ", " + std::to_string(i) +
                                 ", " + std::to_string(j) + ") was never written");
        }
      }
    }
  }
  const double scale = e.alpha * (e.scale_a.given ? e.scale_a.value : 1.0) *
                       (e.scale_b.given ? e.scale_b.value : 1.0);
  const RoundingBound bound(kernel, out_.dtype);
  uint64_t state = 0x5eed;
  std::vector<std::array<int64_t, 3>> samples;
  for (int64_t l : {int64_t{0}, g.batch() - 1}) {
    for (int64_t i : {int64_t{0}, g.m() - 1}) {
      for (int64_t j : {int64_t{0}, g.n() - 1}) samples.push_back({l, i, j});
    }
  }
  for (int s = 0; s < samples_; ++s) {
    samples.push_back({static_cast<int64_t>(splitmix(state) % g.batch()),
                       static_cast<int64_t>(splitmix(state) % g.m()),
                       static_cast<int64_t>(splitmix(state) % g.n())});
  }
  for (const auto& [l, i, j] : samples) {
    double magnitude = 0;
    double x = scale * reference(l, i, j, &magnitude);
    double addend = 0;
    if (c_host_) {
      const double c = e.beta * c_host_->at(offset(c_, l, i, j));
      x += c;
      addend = std::fabs(c);
    }
    if (bias_host_) {
      const int64_t index = e.bias_per_row ? i : j;
      const int64_t at = bias_.rank == 2 ? l * bias_.strides[0] + index * bias_.strides[1]
                                         : index * bias_.strides[0];
      x += bias_host_->at(at);
    }
    const double expected = activate(e.activation, x, e.activation_args);
    const double tolerance = bound(std::fabs(scale) * magnitude, g.k(), addend, expected);
    const double got = value_in(*host, out_.dtype, offset(out_, l, i, j));
    if (!(std::fabs(got - expected) <= tolerance)) {
      Text message;
      message << "output element (" << l << ", " << i << ", " << j << ") is " << got
              << ", expected " << expected << " (tolerance " << tolerance << ")";
      return Status::invalid(message.str());
    }
  }
  return Status::ok();
}

}  // namespace tilecraft::tune
