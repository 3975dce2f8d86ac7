// The operation-first surface (the seed's): GemmOperation with its constructors and launches,
// GemmArguments, and the module functions of compilation, memory, device and caches.
#include "common.hpp"
#include "tensor_adapter.hpp"
#include "tilecraft/core/settings.hpp"
#include "tilecraft/runtime/device.hpp"
#include "tilecraft/runtime/memory_pool.hpp"

namespace tilecraft::python {
namespace {

// operation.run(arguments, stream), the same for each family's arguments.
template <typename Arguments>
void def_run(nb::class_<GemmOperation>& operation, const char* name) {
  def_method(
      operation, name, "run",
      [](const GemmOperation& op, Ref<Arguments> args, uint64_t stream) {
        check(op.run(*args, as_pointer(stream)));
      },
      required<Ref<Arguments>>("arguments"), stream_parameter());
}

}  // namespace

void bind_runtime(nb::module_& m) {
  auto operation = nb::class_<GemmOperation>(m, "GemmOperation");
  def_checked(
      operation, "make", "GemmOperationUniversal",
      [](int arch, Ref<TileDescription> tile, Ref<TensorDescription> A, Ref<TensorDescription> B,
         Ref<TensorDescription> C, Ref<EpilogueFunctor> epilogue, Swizzle swizzle, bool visitor) {
        if (visitor) {
          throw Error(Status::unsupported(
              "visitor: pass visitor=False; SM90 operations build their fused epilogues (bias, "
              "activation, aux output, fp8 scales) on CUTLASS's epilogue visitor trees from "
              "the epilogue functor's bias=/aux=/scales= options"));
        }
        return unwrap(GemmOperation::make(arch, *tile, *A, *B, *C, *epilogue, swizzle));
      },
      required<int>("arch", "an int (80 or 90)"),
      required<Ref<TileDescription>>("tile_description"), required<Ref<TensorDescription>>("A"),
      required<Ref<TensorDescription>>("B"), required<Ref<TensorDescription>>("C"),
      required<Ref<EpilogueFunctor>>("epilogue_functor"),
      optional<Swizzle>("swizzling_functor", Swizzle::IdentitySwizzle1, "IdentitySwizzle1"),
      optional<bool>("visitor", false, "False"));
  def_checked(
      operation, "make_visitor", "GemmOperationUniversal",
      [](int arch, Ref<TileDescription> tile, Ref<TensorDescription> A, Ref<TensorDescription> B,
         Ref<TensorDescription> C, Ref<EpilogueGraph> graph, Swizzle swizzle) {
        return unwrap(
            GemmOperation::make_with_epilogue_graph(arch, *tile, *A, *B, *C, *graph, swizzle));
      },
      required<int>("arch", "an int (80 or 90)"),
      required<Ref<TileDescription>>("tile_description"), required<Ref<TensorDescription>>("A"),
      required<Ref<TensorDescription>>("B"), required<Ref<TensorDescription>>("C"),
      required<Ref<EpilogueGraph>>("epilogue_functor"),
      optional<Swizzle>("swizzling_functor", Swizzle::IdentitySwizzle1, "IdentitySwizzle1"));
  operation.def_prop_ro("description", &GemmOperation::description);
  def_method(operation, "procedural_name", "procedural_name", &GemmOperation::procedural_name);
  def_method(operation, "is_compiled", "is_compiled", &GemmOperation::is_compiled);
  def_method(
      operation, "epilogue_type", "epilogue_type",
      [](const GemmOperation& op, double alpha, double beta, std::vector<double> args) {
        return unwrap(op.epilogue_type(alpha, beta, std::move(args)));
      },
      optional<double>("alpha", 1.0, "1.0"), optional<double>("beta", 0.0, "0.0"),
      optional<std::vector<double>>("activation_args", {}, "[]", "floats"));
  def_run<GemmArguments>(operation, "run");
  def_run<GroupedGemmArguments>(operation, "run_grouped");
  def_run<Conv2dArguments>(operation, "run_conv");

  bind_grouped(m, operation);
  bind_conv(m, operation);

  auto arguments = nb::class_<GemmArguments>(m, "GemmArguments");
  def_checked(
      arguments, "make", "GemmArguments",
      [](Ref<GemmOperation> op, Ref<GemmCoord> problem_size, nb::ndarray<> A, nb::ndarray<> B,
         std::optional<nb::ndarray<>> C, nb::ndarray<> D,
         std::optional<Ref<EpilogueParams>> output_op, GemmMode mode, int split_k_slices, int batch,
         std::optional<nb::ndarray<>> bias, std::optional<nb::ndarray<>> aux, ScaleArgument scale_a,
         ScaleArgument scale_b, ScaleArgument scale_c, ScaleArgument scale_d, bool deterministic,
         bool launch_with_pdl, nb::object epilogue) {
        GemmProblem problem;
        problem.epilogue = epilogue_operands_from("epilogue", epilogue);
        problem.problem_size = *problem_size;
        problem.A = to_tensor_view("A", A);
        problem.B = to_tensor_view("B", B);
        if (C) problem.C = to_tensor_view("C", *C);
        problem.D = to_tensor_view("D", D);
        if (output_op || !op->description().has_epilogue_graph()) {
          problem.output_op = output_op_or_default(*op, output_op);
        }
        problem.mode = mode;
        problem.split_k_slices = split_k_slices;
        problem.batch = batch;
        if (bias) problem.bias = to_tensor_view("bias", *bias);
        if (aux) problem.aux = to_tensor_view("aux", *aux);
        problem.scale_a = scale_a;
        problem.scale_b = scale_b;
        problem.scale_c = scale_c;
        problem.scale_d = scale_d;
        problem.deterministic = deterministic;
        problem.launch_with_pdl = launch_with_pdl;
        // Compiles the operation's kernel on first use (the mode's companion kernel too).
        return unwrap(interruptible([&] { return GemmArguments::make(*op, problem); }));
      },
      required<Ref<GemmOperation>>("operation"),
      required<Ref<GemmCoord>>("problem_size", "cutlass.gemm.GemmCoord(M, N, K)"),
      required<nb::ndarray<>>("A"), required<nb::ndarray<>>("B"),
      optional<std::optional<nb::ndarray<>>>("C", std::nullopt, "None"),
      required<nb::ndarray<>>("D"),
      optional<std::optional<Ref<EpilogueParams>>>("output_op", std::nullopt, "None"),
      optional<GemmMode>("gemm_mode", GemmMode::Gemm, "Mode.Gemm"),
      optional<int>("split_k_slices", 1, "1"), optional<int>("batch", 1, "1"),
      optional<std::optional<nb::ndarray<>>>("bias", std::nullopt, "None"),
      optional<std::optional<nb::ndarray<>>>("aux", std::nullopt, "None"),
      optional<ScaleArgument>("scale_a", {}, "None"),
      optional<ScaleArgument>("scale_b", {}, "None"),
      optional<ScaleArgument>("scale_c", {}, "None"),
      optional<ScaleArgument>("scale_d", {}, "None"), optional<bool>("deterministic", true, "True"),
      optional<bool>("launch_with_pdl", true, "True"),
      optional<nb::object>("epilogue", nb::none(), "None"));
  def_method(arguments, "sync", "sync", [](GemmArguments& args) { check(args.sync()); });
  arguments.def_prop_ro("workspace_bytes", &GemmArguments::workspace_bytes)
      .def_prop_ro("mode", &GemmArguments::mode);

  def_checked(
      m, "compile_operations", "add_module",
      [](std::vector<std::shared_ptr<GemmOperation>> operations) {
        check(interruptible([&] { return compile_operations(operations); }));
      },
      required<std::vector<std::shared_ptr<GemmOperation>>>("operations",
                                                            "a list of GemmOperationUniversal"));
  def_checked(
      m, "compile_split_k_parallel", "add_module",
      [](std::vector<std::shared_ptr<GemmOperation>> operations) {
        check(interruptible([&] { return compile_split_k_parallel(operations); }));
      },
      required<std::vector<std::shared_ptr<GemmOperation>>>(
          "operations", "a list of GemmOperationUniversal or Conv2dOperation"));
  def_checked(
      m, "get_memory_pool", "get_memory_pool",
      [](uint64_t init, uint64_t max) { check(get_memory_pool(init, max)); },
      required<uint64_t>("init_pool_size", "a byte count (an int >= 0)"),
      optional<uint64_t>("max_pool_size", 0, "0", "a byte count (an int >= 0; 0: no cap)"));
  def_checked(m, "get_allocated_size", "get_allocated_size", &get_allocated_size);
  def_checked(m, "cuda_device_available", "cuda_device_available",
              []() { return error_of(cuda_device_available()); });
  def_checked(m, "device_compute_capability", "device_compute_capability",
              []() { return unwrap(current_device_info()).compute_capability; });
  def_checked(m, "device_name", "device_name", []() { return unwrap(current_device_info()).name; });
  def_checked(m, "cache_dir", "cache_dir", []() { return settings().cache_dir; });
  def_checked(m, "cutlass_dir", "cutlass_dir", []() { return settings().cutlass_dir; });
  auto transfer = [](const compile::CacheTransfer& t) {
    nb::dict d;
    d["entries"] = t.entries;
    d["already_present"] = t.already_present;
    d["skipped"] = t.skipped;
    d["notes"] = t.notes;
    return d;
  };
  def_checked(
      m, "export_cache", "export_cache",
      [transfer](Path path, std::optional<Path> key_file) {
        return transfer(unwrap(compile::export_cache(path.text, key_file ? key_file->text : "")));
      },
      required<Path>("path"), optional<std::optional<Path>>("key_file", std::nullopt, "None"));
  def_checked(
      m, "import_cache", "import_cache",
      [transfer](Path path, std::optional<std::vector<Path>> trusted_keys) {
        std::vector<std::string> keys;
        for (const Path& key : trusted_keys.value_or(std::vector<Path>{})) keys.push_back(key.text);
        return transfer(unwrap(compile::import_cache(path.text, keys)));
      },
      required<Path>("path"),
      optional<std::optional<std::vector<Path>>>("trusted_keys", std::nullopt, "None",
                                                 "a list of public keys or key files"));
  def_checked(
      m, "make_archive_key", "make_archive_key",
      [](std::optional<Path> path) {
        return unwrap(compile::make_archive_key(path ? path->text : ""));
      },
      optional<std::optional<Path>>("path", std::nullopt, "None"));
  def_checked(
      m, "archive_public_key", "archive_public_key",
      [](std::optional<Path> path) {
        return unwrap(compile::archive_public_key(path ? path->text : ""));
      },
      optional<std::optional<Path>>("path", std::nullopt, "None"));
  def_checked(m, "reload_settings", "reload_settings",
              []() { set_settings(settings_from_environment()); });
}

}  // namespace tilecraft::python
