// tilecraft::gemm: arguments -> a plan kept per exact problem for the process -> launch.
#include <map>
#include <mutex>

#include "tilecraft/tune/gemm_plan.hpp"
#include "tune/text.hpp"

namespace tilecraft {
namespace {

void describe_tensor(tune::Text& key, const TensorView& t) {
  key << '|';
  if (!t.data) return;
  key << static_cast<int>(t.dtype) << ':' << static_cast<int>(t.device) << t.device_id << ':';
  for (int d = 0; d < t.rank; ++d) key << t.shape[d] << '/' << t.strides[d] << ',';
}

// Everything a plan depends on except the data pointers (their alignment is in the arguments'
// alignments).
std::string plan_key(const api::GemmArguments& args, const tune::TuningOptions& options) {
  tune::Text key(17);
  const api::EpilogueArguments& e = args.epilogue();
  for (const TensorView* t : {&args.A(), &args.B(), &args.out(), &e.C, &e.bias}) {
    describe_tensor(key, *t);
  }
  key << '|' << args.alignment_a() << ',' << args.alignment_b() << ',' << args.alignment_out()
      << ',' << args.alignment_c() << '|' << static_cast<int>(args.accumulator_type()) << '|'
      << e.alpha << ',' << e.beta << ',' << static_cast<int>(e.activation) << ',' << e.bias_per_row;
  for (double a : e.activation_args) key << ',' << a;
  for (const ScaleArgument* s : {&e.scale_a, &e.scale_b}) {
    key << '|' << s->given << ',' << s->value << ',' << s->tensor.data;
  }
  key << '|' << static_cast<int>(options.mode) << ',' << options.max_candidates << ','
      << options.max_seconds << ',' << options.repeats << ',' << options.allow_tf32;
  return key.str();
}

// The plans made in this process, by plan_key.
struct Plans {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<GemmPlan>> by_key;
};

Plans& plans() {
  static Plans all;
  return all;
}

Result<api::GemmArguments> arguments_of(const TensorView& A, const TensorView& B,
                                        const TensorView& out, const GemmOptions& o) {
  api::EpilogueArguments e;
  e.alpha = o.alpha;
  e.beta = o.beta;
  e.C = o.C;
  e.activation = o.activation;
  e.activation_args = o.activation_args;
  e.bias = o.bias;
  e.bias_per_row = o.bias_per_row;
  e.scale_a = o.scale_a;
  e.scale_b = o.scale_b;
  return api::GemmArguments::make(
      A, B, out, o.accumulator_type.value_or(default_accumulator(A.dtype)), e, o.use_fast_accum);
}

}  // namespace

DataType default_accumulator(DataType type) {
  switch (type) {
    case DataType::f64:
      return DataType::f64;
    case DataType::s8:
    case DataType::u8:
    case DataType::s32:
      return DataType::s32;
    default:
      return DataType::f32;
  }
}

Result<std::shared_ptr<GemmPlan>> plan_gemm(const TensorView& A, const TensorView& B,
                                            const TensorView& out, const GemmOptions& options) {
  auto args = arguments_of(A, B, out, options);
  if (!args) return args.status();
  tune::TuningOptions tuning;
  if (options.tuning) {
    tuning = *options.tuning;
  } else {
    auto from_environment = tune::tuning_options_from_environment();
    if (!from_environment) return from_environment.status();
    tuning = *from_environment;
  }
  const std::string key = plan_key(*args, tuning);
  Plans& all = plans();
  {
    std::lock_guard lock(all.mutex);
    if (auto it = all.by_key.find(key); it != all.by_key.end()) return it->second;
  }
  auto plan = GemmPlan::make(*args, tuning);
  if (!plan) return plan.status();
  std::lock_guard lock(all.mutex);
  return all.by_key.emplace(key, *plan).first->second;
}

Status gemm(const TensorView& A, const TensorView& B, const TensorView& out,
            const GemmOptions& options) {
  auto plan = plan_gemm(A, B, out, options);
  if (!plan) return plan.status();
  const void* C = options.C.data;
  return (*plan)->launch(A.data, B.data, C, out.data, options.bias.data, options.stream);
}

}  // namespace tilecraft
