#include "tilecraft/runtime/gemm_operation.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>

#include "tilecraft/compile/kernel_facts.hpp"
#include "tilecraft/compile/signed_record.hpp"
#include "tilecraft/core/settings.hpp"
#include "tilecraft/describe/conv2d_rules.hpp"
#include "tilecraft/emit/gemm_emitter.hpp"
#include "tilecraft/runtime/compiled_artifact.hpp"
#include "tilecraft/runtime/device.hpp"
#include "tilecraft/runtime/gemm_arguments.hpp"
#include "tilecraft/runtime/module.hpp"
#include "tilecraft/runtime/prepared_launch.hpp"

namespace tilecraft {
namespace {

emit::GemmEntry entry_for(const GemmDescription& description, bool split_k_parallel) {
  return {description, split_k_parallel ? emit::GemmEntryKind::kSplitKParallel
                                        : emit::GemmEntryKind::kUniversal};
}

compile::CompileRequest request_for(const std::vector<emit::GemmEntry>& entries) {
  compile::CompileRequest request;
  request.name = emit::entry_name(entries.front());
  if (entries.size() > 1) request.name += "+" + std::to_string(entries.size() - 1) + "_more";
  request.source = emit::emit_gemm_module(entries);
  request.arch_flags = emit::gemm_module_arch_flags(entries.front().description.arch);
  return request;
}

using Work = std::vector<std::pair<std::shared_ptr<GemmOperation>, bool>>;

// More kernels than parallel compile jobs: share translation units. Parsing CUTLASS dominates
// a lone kernel's compile (an SM90 unit of seven kernels took 2.4x one kernel's time), so
// `jobs` units of several kernels finish much sooner than waves of single ones. Grouping is by
// name, so the same set of kernels forms the same units (and cache keys) next time. Kernels
// share a unit only with kernels of their emit::module_class; the jobs are shared among those
// classes by size.
std::vector<std::vector<size_t>> group_misses(const Work& work, std::vector<size_t> misses) {
  constexpr size_t kMaxKernelsPerUnit = 8;
  const size_t jobs = static_cast<size_t>(compile::module_builds_at_once(settings().compile_jobs));
  std::vector<std::vector<size_t>> groups;
  if (misses.size() <= jobs) {
    for (size_t i : misses) groups.push_back({i});
    return groups;
  }
  std::sort(misses.begin(), misses.end(), [&](size_t a, size_t b) {
    return work[a].first->procedural_name() < work[b].first->procedural_name();
  });
  std::map<std::string, std::vector<size_t>> classes;  // by emit::module_class
  size_t shared = 0;
  for (size_t i : misses) {
    const bool alone = work[i].second;  // split-K-parallel companions keep their own unit
    if (alone) {
      groups.push_back({i});
      continue;
    }
    classes[emit::module_class(work[i].first->description())].push_back(i);
    ++shared;
  }
  for (const auto& one_class : classes) {
    const std::vector<size_t>& members = one_class.second;
    const size_t share = std::max<size_t>(1, jobs * members.size() / shared);
    const size_t units =
        std::min(members.size(),
                 std::max(share, (members.size() + kMaxKernelsPerUnit - 1) / kMaxKernelsPerUnit));
    std::vector<std::vector<size_t>> unit(units);
    for (size_t at = 0; at < members.size(); ++at) unit[at % units].push_back(members[at]);
    for (auto& u : unit) groups.push_back(std::move(u));
  }
  return groups;
}

// Kernels loaded in this process, by entry name: a kernel built once, alone or in a shared
// translation unit, serves every later operation with the same description without another
// cache lookup (a shared unit is cached under the unit's key, not the kernel's own).
struct LoadedKernel {
  GemmDescription description;
  bool split_k_parallel;
  std::shared_ptr<const LoadedModule> module;
};

std::mutex& loaded_kernels_mutex() {
  static std::mutex mutex;
  return mutex;
}

std::multimap<std::string, LoadedKernel>& loaded_kernels() {
  static std::multimap<std::string, LoadedKernel> kernels;
  return kernels;
}

void remember_loaded(const std::string& name, const GemmDescription& description,
                     bool split_k_parallel, const std::shared_ptr<const LoadedModule>& module) {
  std::lock_guard lock(loaded_kernels_mutex());
  auto [first, last] = loaded_kernels().equal_range(name);
  for (auto it = first; it != last; ++it) {
    if (it->second.split_k_parallel == split_k_parallel && it->second.description == description)
      return;
  }
  loaded_kernels().emplace(name, LoadedKernel{description, split_k_parallel, module});
}

std::shared_ptr<const LoadedModule> find_loaded(const GemmDescription& description,
                                                bool split_k_parallel) {
  const std::string name = emit::entry_name(entry_for(description, split_k_parallel));
  std::lock_guard lock(loaded_kernels_mutex());
  auto [first, last] = loaded_kernels().equal_range(name);
  for (auto it = first; it != last; ++it) {
    if (it->second.split_k_parallel == split_k_parallel && it->second.description == description)
      return it->second.module;
  }
  return nullptr;
}

// Records the compiler's facts of a unit's kernels (entry p of a unit is the function
// tc_kernel_<p>), from the resource usage kept beside its module.
void record_unit_facts(const Work& work, const std::vector<size_t>& unit,
                       const std::string& module_path) {
  const std::string path =
      std::filesystem::path(module_path).parent_path().string() + "/resources.txt";
  const std::optional<std::string> text = compile::read_record_file(path, size_t(16) << 20);
  if (!text) return;
  const auto facts = parse_resource_usage(*text);
  for (size_t p = 0; p < unit.size(); ++p) {
    const auto& [operation, split_k] = work[unit[p]];
    if (split_k) continue;
    auto found = facts.find("tc_kernel_" + std::to_string(p));
    if (found != facts.end()) {
      record_kernel_facts(emit::entry_name(entry_for(operation->description(), false)),
                          found->second);
    }
  }
}

using AttachFn = std::function<Status(GemmOperation&, bool, std::shared_ptr<const LoadedModule>)>;

// Builds (or loads) the modules of (operation, kind) pairs and attaches their entries; one
// Status per pair.
std::vector<Status> build_and_attach(const Work& all_work, const compile::ProgressFn& progress,
                                     const AttachFn& attach, bool one_kernel_per_module = false) {
  std::vector<Status> outcome(all_work.size());
  Work work;
  std::vector<size_t> work_index;  // work[i] is all_work[work_index[i]]
  for (size_t at = 0; at < all_work.size(); ++at) {
    const auto& item = all_work[at];
    if (auto module = find_loaded(item.first->description(), item.second)) {
      outcome[at] = attach(*item.first, item.second, std::move(module));
    } else {
      work.push_back(item);
      work_index.push_back(at);
    }
  }
  if (work.empty()) return outcome;
  std::vector<compile::CompileRequest> singles;
  singles.reserve(work.size());
  for (const auto& [operation, split_k] : work) {
    singles.push_back(request_for({entry_for(operation->description(), split_k)}));
  }
  // Modules already in the cache are used as found (looked up, and their HMAC checked, once);
  // only the misses go to the compiler, grouped into translation units.
  const auto cached = compile::find_cached_modules(singles);
  std::vector<std::vector<size_t>> units;
  std::vector<Result<compile::CompiledModule>> results;
  std::vector<size_t> misses;
  for (size_t i = 0; i < work.size(); ++i) {
    if (cached[i]) {
      if (progress && settings().verbose) {
        progress("tilecraft: cache hit for " + singles[i].name + " at " + cached[i]->path);
      }
      units.push_back({i});
      results.push_back(*cached[i]);
    } else {
      misses.push_back(i);
    }
  }
  std::vector<std::vector<size_t>> groups;
  if (one_kernel_per_module) {
    for (size_t i : misses) groups.push_back({i});
  } else {
    groups = group_misses(work, misses);
  }
  if (progress && groups.size() < misses.size()) {
    progress("tilecraft: " + std::to_string(misses.size()) + " kernels share " +
             std::to_string(groups.size()) +
             (groups.size() == 1 ? " translation unit" : " translation units") +
             " (more kernels than parallel compile jobs)");
  }
  std::vector<compile::CompileRequest> requests;
  requests.reserve(groups.size());
  for (const auto& group : groups) {
    units.push_back(group);
    if (group.size() == 1) {
      requests.push_back(singles[group[0]]);
      continue;
    }
    std::vector<emit::GemmEntry> entries;
    for (size_t i : group)
      entries.push_back(entry_for(work[i].first->description(), work[i].second));
    requests.push_back(request_for(entries));
  }
  if (!requests.empty()) {
    for (auto& built : compile::build_modules(requests, progress))
      results.push_back(std::move(built));
  }
  // The request that builds unit u (a cache hit's is its kernel's own).
  auto unit_request = [&](size_t u) -> const compile::CompileRequest& {
    const size_t hits = units.size() - requests.size();
    return u < hits ? singles[units[u][0]] : requests[u - hits];
  };
  for (size_t u = 0; u < units.size(); ++u) {
    if (units[u].size() < 2 || !results[u]) continue;
    std::vector<compile::CompileRequest> members;
    for (size_t i : units[u]) members.push_back(singles[i]);
    compile::record_unit_serves(*results[u], members);
  }
  for (size_t u = 0; u < units.size(); ++u) {
    Status unit_status;
    std::optional<std::shared_ptr<const LoadedModule>> module;
    Result<std::shared_ptr<const LoadedModule>> loaded =
        results[u] ? LoadedModule::load(results[u]->path) : results[u].status();
    // A module from the cache that does not load is a miss: compiled again, once.
    if (results[u] && !loaded && results[u]->from_cache) {
      compile::discard_cached_module(*results[u], loaded.status().message());
      results[u] = compile::build_module(unit_request(u), progress);
      loaded = results[u] ? LoadedModule::load(results[u]->path) : results[u].status();
    }
    if (!loaded) {
      unit_status = loaded.status();
    } else {
      module = *loaded;
    }
    if (module && !results[u]->shared_unit) record_unit_facts(work, units[u], (*module)->path());
    for (size_t i : units[u]) {
      outcome[work_index[i]] =
          module ? attach(*work[i].first, work[i].second, *module) : unit_status;
    }
  }
  return outcome;
}

Status first_failure(const std::vector<Status>& statuses) {
  for (const Status& status : statuses) {
    if (!status) return status;
  }
  return Status::ok();
}

}  // namespace

GemmOperation::GemmOperation(GemmDescription description)
    : description_(std::move(description)), name_(description_.procedural_name()) {}

Result<std::shared_ptr<GemmOperation>> GemmOperation::make(const GemmDescription& description) {
  TILECRAFT_RETURN_IF_ERROR(description.validate());
  return std::shared_ptr<GemmOperation>(new GemmOperation(description));
}

Result<std::shared_ptr<GemmOperation>> GemmOperation::make(
    int arch, const TileDescription& tile, const TensorDescription& A, const TensorDescription& B,
    const TensorDescription& C, const EpilogueFunctor& epilogue, Swizzle swizzle) {
  return make(GemmDescription{arch, tile, A, B, C, epilogue, swizzle});
}

Result<std::shared_ptr<GemmOperation>> GemmOperation::make_with_epilogue_graph(
    int arch, const TileDescription& tile, const TensorDescription& A, const TensorDescription& B,
    const TensorDescription& C, const EpilogueGraph& graph, Swizzle swizzle) {
  auto functor = EpilogueFunctor::linear_combination(
      C.element, C.alignment, tile.math_instruction.element_accumulator, DataType::f32);
  if (!functor) return functor.status();
  GemmDescription description{arch, tile, A, B, C, *functor, swizzle};
  description.epilogue_graph = graph;
  return make(description);
}

Result<std::shared_ptr<GemmOperation>> GemmOperation::make_grouped(
    int arch, const TileDescription& tile, const TensorDescription& A, const TensorDescription& B,
    const TensorDescription& C, const EpilogueFunctor& epilogue, Swizzle swizzle,
    SchedulerMode scheduler_mode) {
  return make(
      GemmDescription{arch, tile, A, B, C, epilogue, swizzle, GemmKind::Grouped, scheduler_mode});
}

Result<EpilogueParams> GemmOperation::epilogue_type(double alpha, double beta,
                                                    std::vector<double> activation_args) const {
  EpilogueParams params{alpha, beta, std::move(activation_args)};
  TILECRAFT_RETURN_IF_ERROR(validate_epilogue_params(description_.epilogue, params));
  return params;
}

bool GemmOperation::is_compiled() const {
  std::lock_guard lock(mutex_);
  return universal_ != nullptr;
}

Status GemmOperation::attach(bool split_k_parallel,
                             std::shared_ptr<const LoadedModule> module) const {
  const std::string name = emit::entry_name(entry_for(description_, split_k_parallel));
  const tc_kernel_entry* found = module->find(name);
  if (!found) {
    return Status(StatusCode::kInternal,
                  "module " + module->path() + " has no entry named " + name);
  }
  remember_loaded(name, description_, split_k_parallel, module);
  std::lock_guard lock(mutex_);
  if (split_k_parallel) {
    split_k_module_ = std::move(module);
    split_k_parallel_ = found;
  } else {
    module_ = std::move(module);
    universal_ = found;
  }
  return Status::ok();
}

std::pair<std::shared_ptr<const LoadedModule>, const tc_kernel_entry*>
GemmOperation::universal_kernel() const {
  std::lock_guard lock(mutex_);
  return {module_, universal_};
}

Status GemmOperation::use_artifact(const CompiledArtifact& artifact) {
  if (!artifact.module()) return Status::invalid("use_artifact: the artifact holds no module");
  if (artifact.kernel_name() != name_) {
    return Status::invalid("use_artifact: the artifact holds kernel " + artifact.kernel_name() +
                           ", but this operation is " + name_);
  }
  return attach(false, artifact.module());
}

Result<const tc_kernel_entry*> GemmOperation::entry(GemmMode mode) const {
  if (description_.is_conv() && mode != GemmMode::Gemm && mode != GemmMode::GemmSplitKParallel) {
    return Status::invalid("operation: " + name_ +
                           " is a convolution; it runs Conv2dArguments (split_k_mode Serial or "
                           "Parallel), not gemm_mode " +
                           std::string(to_string(mode)));
  }
  if (description_.is_grouped() != (mode == GemmMode::Grouped)) {
    return Status::invalid(description_.is_grouped()
                               ? "operation: " + name_ +
                                     " is a grouped GEMM; it runs GemmGroupedArguments, not "
                                     "gemm_mode " +
                                     std::string(to_string(mode))
                               : "gemm_mode Grouped: " + name_ +
                                     " is not a grouped GEMM; describe a GemmOperationGrouped");
  }
  const bool split_k = mode == GemmMode::GemmSplitKParallel;
  {
    std::lock_guard lock(mutex_);
    const tc_kernel_entry* found = split_k ? split_k_parallel_ : universal_;
    if (found) return found;
  }
  // Not compiled yet: compile now (the caller skipped compiler.add_module, or this is the
  // split-K-parallel companion, which is built on first use).
  auto self = std::shared_ptr<GemmOperation>(std::shared_ptr<GemmOperation>{},
                                             const_cast<GemmOperation*>(this));
  TILECRAFT_RETURN_IF_ERROR(first_failure(build_and_attach(
      Work{{self, split_k}}, compile::default_progress,
      [](GemmOperation& op, bool kind, std::shared_ptr<const LoadedModule> module) {
        return op.attach(kind, std::move(module));
      })));
  std::lock_guard lock(mutex_);
  return split_k ? split_k_parallel_ : universal_;
}

Status GemmOperation::run(PreparedLaunch& arguments, void* stream) const {
  const tc_kernel_entry* kernel = arguments.entry();
  if (!kernel) return Status::invalid("arguments: not prepared for any operation");
  DeviceScope on_device(arguments.device());  // the operands' device, whichever is current
  TILECRAFT_RETURN_IF_ERROR(on_device.status());
  if (arguments.launches_nothing()) {
    arguments.note_launch(stream);
    return Status::ok();
  }
  char error[512] = {0};
  const int32_t code =
      kernel->run(arguments.abi_header(), arguments.workspace(), stream, error, sizeof error);
  arguments.note_launch(stream);
  if (code != TC_OK) {
    return Status(
        code == TC_ERROR_INVALID_ARGUMENT ? StatusCode::kInvalidArgument : StatusCode::kCudaError,
        name_ + ": " + error);
  }
  return Status::ok();
}

bool kernel_is_loaded(const GemmDescription& description) {
  return find_loaded(description, false) != nullptr;
}

bool kernel_is_ready(const GemmDescription& description) {
  if (find_loaded(description, false)) return true;
  const auto found = compile::find_cached_modules({request_for({entry_for(description, false)})});
  return found.front().has_value();
}

std::vector<Status> compile_each_operation(
    const std::vector<std::shared_ptr<GemmOperation>>& operations,
    const compile::ProgressFn& progress, bool one_kernel_per_module) {
  std::vector<Status> outcome(operations.size());
  Work work;
  std::vector<size_t> index;
  for (size_t at = 0; at < operations.size(); ++at) {
    const auto& op = operations[at];
    if (!op) {
      outcome[at] = Status::invalid("operations[" + std::to_string(at) + "]: got a null operation");
    } else if (!op->is_compiled()) {
      work.emplace_back(op, false);
      index.push_back(at);
    }
  }
  if (work.empty()) return outcome;
  auto built = build_and_attach(
      work, progress,
      [](GemmOperation& op, bool kind, std::shared_ptr<const LoadedModule> m) {
        return op.attach(kind, std::move(m));
      },
      one_kernel_per_module);
  for (size_t i = 0; i < built.size(); ++i) outcome[index[i]] = std::move(built[i]);
  return outcome;
}

Status compile_split_k_parallel(const std::vector<std::shared_ptr<GemmOperation>>& operations,
                                const compile::ProgressFn& progress) {
  Work work;
  for (size_t at = 0; at < operations.size(); ++at) {
    const auto& op = operations[at];
    const std::string which = "operations[" + std::to_string(at) + "]";
    if (!op) return Status::invalid(which + ": got a null operation");
    if (op->description().is_grouped()) {
      return Status::invalid(which + ": " + op->procedural_name() +
                             " is a grouped GEMM, which has no split-K-parallel form");
    }
    if (Status none = check_parallel_split_k(op->description()); !none) {
      return Status(none.code(), which + ": " + op->procedural_name() + ": " + none.message());
    }
    std::lock_guard lock(op->mutex_);
    if (op->split_k_parallel_ == nullptr) work.emplace_back(op, true);
  }
  if (work.empty()) return Status::ok();
  return first_failure(build_and_attach(
      work, progress, [](GemmOperation& op, bool kind, std::shared_ptr<const LoadedModule> m) {
        return op.attach(kind, std::move(m));
      }));
}

Status compile_operations(const std::vector<std::shared_ptr<GemmOperation>>& operations,
                          const compile::ProgressFn& progress) {
  for (const auto& op : operations) {
    if (!op) return Status::invalid("add_module: got a null operation");
  }
  return first_failure(compile_each_operation(operations, progress));
}

}  // namespace tilecraft
