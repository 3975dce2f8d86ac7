// Measured picks: tilecraft::tune and GemmPlan, for python/tilecraft/tuning.py and ops.py.
#include <limits>

#include "common.hpp"
#include "tilecraft/runtime/device.hpp"
#include "tilecraft/tune/gemm_plan.hpp"
#include "tilecraft/tune/tuning.hpp"

namespace tilecraft::python {

namespace {

tune::TuningOptions options_from(const std::string& mode, std::optional<int> max_candidates,
                                 std::optional<double> max_seconds, int repeats,
                                 std::optional<bool> allow_tf32) {
  tune::TuningOptions options = unwrap(tune::tuning_options_from_environment());
  if (!mode.empty()) options.mode = unwrap(tune::parse_tuning_mode(mode, "tuning"));
  if (max_candidates) options.max_candidates = *max_candidates;
  if (max_seconds) options.max_seconds = *max_seconds;
  options.repeats = repeats;
  if (allow_tf32) options.allow_tf32 = *allow_tf32;
  check(tune::validate(options));
  return options;
}

// The GemmArguments behind `args` (python/tilecraft checks its type first; `name` names it).
api::GemmArguments& gemm_arguments(nb::handle args, const std::string& name = "args") {
  api::GemmArguments* a = instance_of<api::GemmArguments>(args);
  if (a == nullptr) {
    throw nb::type_error((name + ": expected a tilecraft.api.arguments.GemmArguments").c_str());
  }
  return *a;
}

// Calls fn with the C++ arguments of the family behind `args` (GemmArguments,
// GroupedGemmArguments, Conv2dArguments); a TypeError names `name` and what it got otherwise.
template <typename Fn>
auto dispatch(const api::KernelArguments& any, Fn fn, const std::string& name = "args") {
  return tune::visit_family(any, fn, [&]() -> decltype(fn(std::declval<api::GemmArguments&>())) {
    throw nb::type_error((name + ": expected " + Described<api::KernelArguments>::expected +
                          ", got another kind of arguments")
                             .c_str());
  });
}
template <typename Fn>
auto with_arguments(nb::handle args, Fn fn, const std::string& name = "args") {
  return dispatch(
      *Arg<Ref<api::KernelArguments>>::from(name, args, Described<api::KernelArguments>::expected),
      fn, name);
}

nb::dict candidate_dict(const tune::CandidateResult& c) {
  nb::dict d;
  d["kernel_name"] = c.kernel_name;
  d["outcome"] = std::string(tune::to_string(c.outcome));
  d["median_us"] = c.median_us;
  d["tflops"] = c.tflops;
  d["repeats"] = c.repeats;
  d["reason"] = c.reason;
  return d;
}

nb::list candidate_list(const std::vector<tune::CandidateResult>& results) {
  nb::list candidates;
  for (const auto& c : results) candidates.append(candidate_dict(c));
  return candidates;
}

nb::dict report_dict(const tune::TuningReport& r) {
  nb::dict d;
  d["device"] = r.signature.device_model;
  d["signature"] = r.signature.text();
  d["candidates"] = candidate_list(r.candidates);
  d["winner"] = r.winner ? nb::cast(r.candidates[*r.winner].kernel_name) : nb::none();
  d["clocks"] = r.clocks;
  d["seconds"] = r.seconds;
  d["stored"] = r.stored;
  return d;
}

nb::dict state_dict(const PlanState& s) {
  nb::dict d;
  d["kernel_name"] = s.kernel_name;
  d["reason"] = s.reason;
  d["tuned"] = s.tuned;
  d["tuning"] = s.tuning;
  d["tuning_error"] = s.tuning_error;
  d["calls"] = s.calls;
  d["rank_ms"] = s.rank_ms;
  d["ready_ms"] = s.ready_ms;
  return d;
}

// A cache size limit: an int from 0 to 2**63 - 1 bytes (8 EiB, more than any disk), named.
int64_t max_bytes_from(nb::handle value) {
  return int_from("max_bytes", value, "a size in bytes", 0, std::numeric_limits<int64_t>::max());
}

}  // namespace

void bind_tune(nb::module_& root) {
  nb::module_ m = root.def_submodule("tune", "Autotuning and the tuning cache (issue 12).");
  using api::GemmArguments;

  m.def("shape_bucket", &tune::shape_bucket);
  def_checked(
      m, "signature", "signature",
      [](Ref<api::KernelArguments> a, bool allow_tf32) {
        return dispatch(*a, [&](auto& args) {
          auto s = unwrap(tune::signature_of(args, allow_tf32));
          return nb::make_tuple(s.device_model, s.text(), s.key());
        });
      },
      required<Ref<api::KernelArguments>>("args"), optional<bool>("allow_tf32", true, "True"));
  // One tuner for every family: GEMM, grouped GEMM, convolution arguments.
  m.def("tune", [](nb::handle args, std::optional<int> max_candidates,
                   std::optional<double> max_seconds, int repeats, std::optional<bool> allow_tf32) {
    auto options = options_from("force", max_candidates, max_seconds, repeats, allow_tf32);
    return with_arguments(args, [&](auto& a) {
      using Args = std::decay_t<decltype(a)>;
      return report_dict(unwrap(interruptible([&]() -> Result<tune::TuningReport> {
        if constexpr (std::is_same_v<Args, api::GemmArguments>) {
          return tune::tune_gemm(a, options);
        } else if constexpr (std::is_same_v<Args, api::GroupedGemmArguments>) {
          return tune::tune_grouped_gemm(a, options);
        } else {
          return tune::tune_conv2d(a, options);
        }
      })));
    });
  });
  m.def("precompile",
        [](nb::list problems, std::optional<int> max_candidates, std::optional<bool> allow_tf32) {
          auto options = options_from("force", max_candidates, std::nullopt, 25, allow_tf32);
          std::vector<const api::KernelArguments*> args;
          for (size_t i = 0; i < problems.size(); ++i) {
            args.push_back(with_arguments(
                problems[i], [](auto& a) -> const api::KernelArguments* { return &a; },
                "problems[" + std::to_string(i) + "]"));
          }
          check(interruptible([&] { return tune::precompile_candidates(args, options); }));
        });
  // (cc, names): the kernels tuning would compile and time for `args` on compute capability
  // `cc` (default: that of the device of args' tensors), best first; none: no kernel can run them.
  m.def(
      "candidates",
      [](nb::handle args, std::optional<int> max_candidates, std::optional<bool> allow_tf32,
         std::optional<int> cc) {
        auto options = options_from("force", max_candidates, std::nullopt, 25, allow_tf32);
        return with_arguments(args, [&](auto& a) {
          const int capability = cc ? *cc : unwrap(device_info(a.device())).compute_capability;
          std::vector<std::string> names;
          for (const api::Kernel& kernel : tune::tuning_candidates(a, options, capability)) {
            names.push_back(kernel.metadata().kernel_name);
          }
          return nb::make_tuple(capability, names);
        });
      },
      nb::arg("args"), nb::arg("max_candidates").none(), nb::arg("allow_tf32").none(),
      nb::arg("cc").none());
  m.def("find_tuned", [](nb::handle args, bool allow_tf32) -> nb::object {
    auto s =
        with_arguments(args, [&](auto& a) { return unwrap(tune::signature_of(a, allow_tf32)); });
    auto found = tune::find_tuned(s);
    if (!found) return nb::none();
    nb::dict d;
    d["kernel_name"] = found->kernel_name;
    d["tflops"] = found->tflops;
    d["median_us"] = found->median_us;
    d["clocks"] = found->clocks;
    d["tuned_at"] = found->tuned_at;
    d["shape"] = nb::make_tuple(found->shape[0], found->shape[1], found->shape[2], found->shape[3]);
    d["candidates"] = candidate_list(found->candidates);
    return d;
  });
  m.def("cache_stats", [] {
    auto s = unwrap(tune::tuning_cache_stats());
    nb::dict d;
    d["folder"] = s.folder;
    d["entries"] = s.entries;
    d["bytes"] = s.bytes;
    d["invalid"] = s.invalid;
    return d;
  });
  m.def("list_cache", [] {
    nb::list out;
    for (const auto& e : unwrap(tune::list_tuning_cache())) {
      nb::dict d;
      d["path"] = e.path;
      d["device"] = e.device_model;
      d["signature"] = e.signature;
      d["kernel_name"] = e.kernel_name;
      d["tflops"] = e.tflops;
      d["bytes"] = e.bytes;
      d["tuned_at"] = e.tuned_at;
      out.append(d);
    }
    return out;
  });
  m.def("clear_cache", [] { return unwrap(tune::clear_tuning_cache()); });
  m.def(
      "prune_cache",
      [](nb::handle max_bytes) {
        return unwrap(tune::prune_tuning_cache(max_bytes_from(max_bytes)));
      },
      nb::arg("max_bytes").none());

  m.def("kernel_cache_stats", [] {
    auto s = unwrap(compile::kernel_cache_stats());
    nb::dict d;
    d["folder"] = s.folder;
    d["entries"] = s.entries;
    d["kernels"] = s.kernels;
    d["bytes"] = s.bytes;
    d["invalid"] = s.invalid;
    return d;
  });
  m.def("list_kernel_cache", [] {
    nb::list out;
    for (const auto& e : unwrap(compile::list_kernel_cache())) {
      nb::dict d;
      d["key"] = e.key;
      d["path"] = e.path;
      d["kernels"] = e.kernels;
      d["bytes"] = e.bytes;
      d["last_used"] = e.last_used;
      d["valid"] = e.valid;
      d["invalid_reason"] = e.invalid_reason;
      out.append(d);
    }
    return out;
  });
  m.def("clear_kernel_cache", [] { return unwrap(compile::clear_kernel_cache()); });
  m.def(
      "prune_kernel_cache",
      [](nb::handle max_bytes) {
        return unwrap(
            compile::prune_kernel_cache(static_cast<uint64_t>(max_bytes_from(max_bytes))));
      },
      nb::arg("max_bytes").none());

  auto plan = nb::class_<GemmPlan>(m, "GemmPlan");
  // python/tilecraft/ops.py checks the types of these values under their names first.
  m.def("make_plan", [](nb::handle args, const std::string& mode, std::optional<int> max_candidates,
                        std::optional<double> max_seconds, std::optional<bool> allow_tf32) {
    auto options = options_from(mode, max_candidates, max_seconds, 25, allow_tf32);
    GemmArguments& a = gemm_arguments(args);
    return unwrap(interruptible([&] { return GemmPlan::make(a, options); }));
  });
  // The hot path: pointers as ints (0: none), checked by the plan.
  plan.def("launch", [](GemmPlan& p, uint64_t A, uint64_t B, uint64_t C, uint64_t out,
                        uint64_t bias, uint64_t stream) {
    check(p.launch(as_pointer(A), as_pointer(B), as_pointer(C), as_pointer(out), as_pointer(bias),
                   as_pointer(stream)));
  });
  def_method(
      plan, "run", "GemmPlan.run",
      [](GemmPlan& p, Ref<GemmArguments> a, uint64_t stream) {
        check(p.run(*a, as_pointer(stream)));
      },
      required<Ref<GemmArguments>>("args"), stream_parameter());
  plan.def_prop_ro("state", [](const GemmPlan& p) { return state_dict(p.state()); });
  plan.def_prop_ro("kernel_name", [](const GemmPlan& p) { return p.state().kernel_name; });
  plan.def_prop_ro("signature", [](const GemmPlan& p) { return p.signature().text(); });
  plan.def("wait_for_tuning", [](const GemmPlan& p, double timeout_seconds) {
    nb::gil_scoped_release release;
    return p.wait_for_tuning(timeout_seconds);
  });
}

}  // namespace tilecraft::python
