// The convolution trial: operands of the tuner's own shaped like the caller's (channels-last
// strides kept), and a float64 direct convolution at sampled output elements as the reference.
#include <array>
#include <cmath>

#include "tune/scratch_buffers.hpp"
#include "tune/text.hpp"
#include "tune/trial.hpp"

namespace tilecraft::tune {
namespace {

constexpr int kRandomSamples = 251;

// A logical index (n, channel, depth, row, column) of an activation or filter; rank-4 views have
// no depth.
using Index = std::array<int64_t, 5>;

int64_t offset(const TensorView& t, const Index& i) {
  if (t.rank == 4) {
    return i[0] * t.strides[0] + i[1] * t.strides[1] + i[3] * t.strides[2] + i[4] * t.strides[3];
  }
  int64_t at = 0;
  for (int d = 0; d < 5; ++d) at += i[d] * t.strides[d];
  return at;
}

// The five extents of a view, depth 1 for rank 4.
Index extents(const TensorView& t) {
  if (t.rank == 4) return {t.shape[0], t.shape[1], 1, t.shape[2], t.shape[3]};
  return {t.shape[0], t.shape[1], t.shape[2], t.shape[3], t.shape[4]};
}

std::string index_text(const Index& i, int rank) {
  Text text;
  text << "(" << i[0] << ", " << i[1];
  if (rank == 5) text << ", " << i[2];
  text << ", " << i[3] << ", " << i[4] << ")";
  return text.str();
}

api::Conv2dGeometry geometry_of(const Conv2dProblemSize& p) {
  api::Conv2dGeometry g;
  g.stride = {p.stride_h, p.stride_w};
  g.padding = {p.pad_top, p.pad_bottom, p.pad_left, p.pad_right};
  g.dilation = {p.dilation_h, p.dilation_w};
  g.groups = p.groups;
  g.mode = p.mode;
  g.stride_d = p.stride_d;
  g.padding_d = {p.pad_front, p.pad_back};
  g.dilation_d = p.dilation_d;
  return g;
}

class ConvTrial : public Trial {
 public:
  static Result<std::unique_ptr<Trial>> make(const api::Conv2dArguments& like, uint64_t seed) {
    std::unique_ptr<ConvTrial> t(new ConvTrial());
    t->a_ = like.A();
    t->b_ = like.B();
    t->out_ = like.out();
    api::EpilogueArguments e = like.epilogue();
    auto a = t->buffers_.allocate(&t->a_, true, seed * 4 + 1);
    if (!a) return a.status();
    t->a_host_ = *a;
    auto b = t->buffers_.allocate(&t->b_, true, seed * 4 + 2);
    if (!b) return b.status();
    t->b_host_ = *b;
    auto out = t->buffers_.allocate(&t->out_, false, 0);
    if (!out) return out.status();
    if (e.C.data) {
      t->c_ = e.C;
      auto c = t->buffers_.allocate(&t->c_, true, seed * 4 + 3);
      if (!c) return c.status();
      t->c_host_ = *c;
      e.C = t->c_;
    }
    if (e.bias.data) {
      t->bias_ = e.bias;
      auto bias = t->buffers_.allocate(&t->bias_, true, seed * 4 + 4);
      if (!bias) return bias.status();
      t->bias_host_ = *bias;
      e.bias = t->bias_;
    }
    auto args =
        api::Conv2dArguments::make(like.kind(), t->a_, t->b_, t->out_, like.accumulator_type(),
                                   geometry_of(like.problem_size()), e);
    if (!args) return args.status();
    t->args_ = std::move(*args);
    return std::unique_ptr<Trial>(std::move(t));
  }

  const api::KernelArguments& arguments() const override { return *args_; }
  Status poison_output(void* stream) const override { return poison(out_, stream); }

  Status check_output(const api::KernelMetadata& kernel) const override {
    auto host = download(out_);
    if (!host) return host.status();
    const Index shape = extents(out_);
    Index i{};
    for (i[0] = 0; i[0] < shape[0]; ++i[0]) {
      for (i[1] = 0; i[1] < shape[1]; ++i[1]) {
        for (i[2] = 0; i[2] < shape[2]; ++i[2]) {
          for (i[3] = 0; i[3] < shape[3]; ++i[3]) {
            for (i[4] = 0; i[4] < shape[4]; ++i[4]) {
              if (is_poisoned(*host, out_.dtype, offset(out_, i))) {
                return Status::invalid("output element " + index_text(i, out_.rank) +
                                       " was never written");
              }
            }
          }
        }
      }
    }
    const api::EpilogueArguments& e = args_->epilogue();
    const RoundingBound bound(kernel, out_.dtype);
    std::vector<Index> samples = {
        Index{}, Index{shape[0] - 1, shape[1] - 1, shape[2] - 1, shape[3] - 1, shape[4] - 1}};
    uint64_t state = 0x5eed;
    for (int s = 0; s < kRandomSamples; ++s) {
      Index at;
      for (int d = 0; d < 5; ++d) at[d] = static_cast<int64_t>(splitmix(state) % shape[d]);
      samples.push_back(at);
    }
    for (const Index& at : samples) {
      double magnitude = 0;
      int64_t terms = 0;
      double x = e.alpha * reference(at, &magnitude, &terms);
      double addend = 0;
      if (c_host_) {
        const double c = e.beta * c_host_->at(offset(c_, at));
        x += c;
        addend = std::fabs(c);
      }
      if (bias_host_) x += bias_host_->at(at[1] * bias_.strides[bias_.rank - 1]);
      const double expected = activate(e.activation, x, e.activation_args);
      const double tolerance = bound(std::fabs(e.alpha) * magnitude, terms, addend, expected);
      const double got = value_in(*host, out_.dtype, offset(out_, at));
      if (!(std::fabs(got - expected) <= tolerance)) {
        Text message;
        message << "output element " << index_text(at, out_.rank) << " is " << got << ", expected "
                << expected << " (tolerance " << tolerance << ")";
        return Status::invalid(message.str());
      }
    }
    return Status::ok();
  }

 private:
  ConvTrial() = default;

  // The filter tap of output coordinate `o` and tap `f` of extent `taps` along one dimension:
  // the input coordinate it reads, by stride, padding and dilation (flipped for convolution).
  int64_t input_coordinate(int64_t o, int64_t f, int64_t taps, int stride, int pad,
                           int dilation) const {
    const int64_t tap = args_->problem_size().mode == ConvMode::Convolution ? taps - 1 - f : f;
    return o * stride - pad + tap * dilation;
  }

  // The float64 convolution at output index `at`; *magnitude: the sum of the products' absolute
  // values; *terms: how many products.
  double reference(const Index& at, double* magnitude, int64_t* terms) const {
    const Conv2dProblemSize& p = args_->problem_size();
    const int64_t cg = p.c / p.groups, kg = p.k / p.groups;
    const std::array<int64_t, 3> taps{p.t, p.r, p.s}, in{p.d, p.h, p.w}, outx{p.z, p.p, p.q};
    const std::array<int, 3> stride{p.stride_d, p.stride_h, p.stride_w};
    const std::array<int, 3> pad{p.pad_front, p.pad_top, p.pad_left};
    const std::array<int, 3> dilation{p.dilation_d, p.dilation_h, p.dilation_w};
    double sum = 0, abs_sum = 0;
    int64_t count = 0;
    auto add = [&](double x, double y) {
      sum += x * y;
      abs_sum += std::fabs(x * y);
      ++count;
    };
    // The input coordinates tap f reads from output coordinates o, or false when in padding.
    auto input_of = [&](const std::array<int64_t, 3>& o, const std::array<int64_t, 3>& f,
                        std::array<int64_t, 3>* i) {
      for (int d = 0; d < 3; ++d) {
        (*i)[d] = input_coordinate(o[d], f[d], taps[d], stride[d], pad[d], dilation[d]);
        if ((*i)[d] < 0 || (*i)[d] >= in[d]) return false;
      }
      return true;
    };
    std::array<int64_t, 3> f{}, o{}, i{};
    switch (args_->kind()) {
      case ConvKind::Fprop: {  // y[n, k, o] = sum x[n, c, i(o, f)] w[k, c', f]
        const int64_t n = at[0], k = at[1], group = k / kg;
        o = {at[2], at[3], at[4]};
        for (int64_t c = 0; c < cg; ++c) {
          for (f[0] = 0; f[0] < taps[0]; ++f[0]) {
            for (f[1] = 0; f[1] < taps[1]; ++f[1]) {
              for (f[2] = 0; f[2] < taps[2]; ++f[2]) {
                if (!input_of(o, f, &i)) continue;
                add(a_host_->at(offset(a_, {n, group * cg + c, i[0], i[1], i[2]})),
                    b_host_->at(offset(b_, {k, c, f[0], f[1], f[2]})));
              }
            }
          }
        }
        break;
      }
      case ConvKind::Dgrad: {  // dx[n, c, i] = sum over (k, f, o) with i(o, f) = i of dy w
        const int64_t n = at[0], c = at[1], group = c / cg;
        const std::array<int64_t, 3> x{at[2], at[3], at[4]};
        for (int64_t k = group * kg; k < (group + 1) * kg; ++k) {
          for (f[0] = 0; f[0] < taps[0]; ++f[0]) {
            for (f[1] = 0; f[1] < taps[1]; ++f[1]) {
              for (f[2] = 0; f[2] < taps[2]; ++f[2]) {
                bool reads = true;
                for (int d = 0; d < 3 && reads; ++d) {
                  const int64_t tap = p.mode == ConvMode::Convolution ? taps[d] - 1 - f[d] : f[d];
                  const int64_t scaled = x[d] + pad[d] - tap * dilation[d];
                  reads = scaled >= 0 && scaled % stride[d] == 0 && scaled / stride[d] < outx[d];
                  o[d] = reads ? scaled / stride[d] : 0;
                }
                if (!reads) continue;
                add(a_host_->at(offset(a_, {n, k, o[0], o[1], o[2]})),
                    b_host_->at(offset(b_, {k, c % cg, f[0], f[1], f[2]})));
              }
            }
          }
        }
        break;
      }
      case ConvKind::Wgrad: {  // dw[k, c', f] = sum over (n, o) of dy[n, k, o] x[n, c, i(o, f)]
        const int64_t k = at[0], c = at[1], group = k / kg;
        f = {at[2], at[3], at[4]};
        for (int64_t n = 0; n < p.n; ++n) {
          for (o[0] = 0; o[0] < outx[0]; ++o[0]) {
            for (o[1] = 0; o[1] < outx[1]; ++o[1]) {
              for (o[2] = 0; o[2] < outx[2]; ++o[2]) {
                if (!input_of(o, f, &i)) continue;
                add(a_host_->at(offset(a_, {n, k, o[0], o[1], o[2]})),
                    b_host_->at(offset(b_, {n, group * cg + c, i[0], i[1], i[2]})));
              }
            }
          }
        }
        break;
      }
    }
    *magnitude = abs_sum;
    *terms = std::max<int64_t>(count, 1);
    return sum;
  }

  ScratchBuffers buffers_;
  TensorView a_, b_, c_, out_, bias_;
  const ScratchBuffer* a_host_ = nullptr;
  const ScratchBuffer* b_host_ = nullptr;
  const ScratchBuffer* c_host_ = nullptr;
  const ScratchBuffer* bias_host_ = nullptr;
  std::optional<api::Conv2dArguments> args_;
};

}  // namespace

Result<std::unique_ptr<Trial>> make_trial(const api::Conv2dArguments& like, uint64_t seed) {
  return ConvTrial::make(like, seed);
}

}  // namespace tilecraft::tune
