// The grouped GEMM trial: one GEMM trial per non-empty problem (its own operands, its own check),
// launched together as one grouped problem of the same sizes, layouts and epilogue.
#include <algorithm>
#include <vector>

#include "tune/scratch_problem.hpp"
#include "tune/trial.hpp"

namespace tilecraft::tune {
namespace {

// Elements checked at random per problem: about 2,000 over all problems, at least 4 each.
int samples_per_problem(size_t problems) {
  return std::max<int>(4, static_cast<int>(2000 / std::max<size_t>(problems, 1)));
}

class GroupedTrial : public Trial {
 public:
  static Result<std::unique_ptr<Trial>> make(const api::GroupedGemmArguments& like, uint64_t seed) {
    std::unique_ptr<GroupedTrial> t(new GroupedTrial());
    const GroupedGemmProblem& p = like.problem();
    const api::GroupedEpilogueArguments& e = like.epilogue();
    const size_t count = p.problem_sizes.size();
    std::vector<TensorView> A(count), B(count), out(count), C, bias;
    if (!p.C.empty()) C.resize(count);
    if (!p.bias.empty()) bias.resize(count);
    const int samples = samples_per_problem(count);
    for (size_t g = 0; g < count; ++g) {
      A[g] = p.A[g];
      B[g] = p.B[g];
      out[g] = p.D[g];
      if (!C.empty()) C[g] = p.C[g];
      if (!bias.empty()) bias[g] = p.bias[g];
      const GemmCoord& s = p.problem_sizes[g];
      if (s.m == 0 || s.n == 0) {
        // Nothing of it is read or written: its views point at memory of the trial's own.
        for (TensorView* v : {&A[g], &B[g], &out[g]}) {
          auto made = t->empty_views_.allocate(v, false, 0);
          if (!made) return made.status();
        }
        if (!C.empty()) C[g].data = out[g].data, C[g].device = DeviceKind::kCuda;
        if (!bias.empty()) {
          auto made = t->empty_views_.allocate(&bias[g], false, 0);
          if (!made) return made.status();
        }
        continue;
      }
      api::EpilogueArguments ge;
      ge.alpha = e.alpha * e.scale_a * e.scale_b;
      ge.beta = e.beta;
      if (!C.empty()) ge.C = C[g];
      if (!bias.empty()) ge.bias = bias[g];
      ge.activation = e.activation;
      ge.activation_args = e.activation_args;
      auto gemm = api::GemmArguments::make(A[g], B[g], out[g], like.accumulator_type(), ge);
      if (!gemm) {
        return Status(gemm.status().code(),
                      "problem " + std::to_string(g) + " of the trial: " + gemm.status().message());
      }
      auto one = ScratchProblem::make(*gemm, seed * 1000003 + g, samples);
      if (!one) return one.status();
      const api::GemmArguments& made = (*one)->args();
      A[g] = made.A();
      B[g] = made.B();
      out[g] = made.out();
      if (!C.empty()) C[g] = made.epilogue().C;
      if (!bias.empty()) bias[g] = made.epilogue().bias;
      t->problems_.push_back(std::move(*one));
      t->index_.push_back(g);
    }
    api::GroupedEpilogueArguments epilogue = e;
    epilogue.bias = bias;
    auto args = api::GroupedGemmArguments::make(std::move(A), std::move(B), std::move(out),
                                                like.accumulator_type(), std::move(C), epilogue);
    if (!args) return args.status();
    t->args_ = std::move(*args);
    return std::unique_ptr<Trial>(std::move(t));
  }

  const api::KernelArguments& arguments() const override { return *args_; }

  Status poison_output(void* stream) const override {
    for (const auto& problem : problems_) TILECRAFT_RETURN_IF_ERROR(problem->poison_output(stream));
    return Status::ok();
  }

  Status check_output(const api::KernelMetadata& kernel) const override {
    for (size_t i = 0; i < problems_.size(); ++i) {
      const Status checked = problems_[i]->check_output(kernel);
      if (!checked) {
        return Status(checked.code(),
                      "problem " + std::to_string(index_[i]) + ": " + checked.message());
      }
    }
    return Status::ok();
  }

 private:
  GroupedTrial() = default;
  ScratchBuffers empty_views_;
  std::vector<std::unique_ptr<ScratchProblem>> problems_;
  std::vector<size_t> index_;  // the problem number of each trial
  std::optional<api::GroupedGemmArguments> args_;
};

}  // namespace

Result<std::unique_ptr<Trial>> make_trial(const api::GroupedGemmArguments& like, uint64_t seed) {
  return GroupedTrial::make(like, seed);
}

}  // namespace tilecraft::tune
