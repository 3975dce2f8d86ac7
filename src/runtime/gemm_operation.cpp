#include "tilecraft/runtime/gemm_operation.hpp"

#include <cuda_runtime_api.h>

#include "tilecraft/emit/gemm_emitter.hpp"
#include "tilecraft/runtime/device.hpp"
#include "tilecraft/runtime/gemm_arguments.hpp"
#include "tilecraft/runtime/module.hpp"

namespace tilecraft {
namespace {

emit::GemmEntry entry_for(const GemmDescription& description, bool split_k_parallel) {
  return {description, split_k_parallel ? emit::GemmEntryKind::kSplitKParallel
                                        : emit::GemmEntryKind::kUniversal};
}

compile::CompileRequest request_for(const GemmDescription& description, bool split_k_parallel) {
  compile::CompileRequest request;
  const emit::GemmEntry entry = entry_for(description, split_k_parallel);
  request.name = emit::entry_name(entry);
  request.source = emit::emit_gemm_module({entry});
  request.arch_flags = emit::gemm_module_arch_flags(description.arch);
  return request;
}

// Builds (or loads) one module per (operation, kind) pair and attaches its entry.
Status build_and_attach(const std::vector<std::pair<std::shared_ptr<GemmOperation>, bool>>& work,
                        const compile::ProgressFn& progress,
                        const std::function<Status(GemmOperation&, bool,
                                                   std::shared_ptr<const LoadedModule>)>& attach) {
  std::vector<compile::CompileRequest> requests;
  requests.reserve(work.size());
  for (const auto& [operation, split_k] : work) {
    requests.push_back(request_for(operation->description(), split_k));
  }
  auto results = compile::build_modules(requests, progress);
  Status first_error;
  for (size_t i = 0; i < work.size(); ++i) {
    if (!results[i]) {
      if (first_error) first_error = results[i].status();
      continue;
    }
    auto module = LoadedModule::load(results[i]->path);
    if (!module) {
      if (first_error) first_error = module.status();
      continue;
    }
    Status status = attach(*work[i].first, work[i].second, *module);
    if (!status && first_error) first_error = status;
  }
  return first_error;
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

Result<const tc_kernel_entry*> GemmOperation::entry(GemmMode mode) const {
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
  TILECRAFT_RETURN_IF_ERROR(build_and_attach(
      {{self, split_k}}, compile::default_progress,
      [](GemmOperation& op, bool kind, std::shared_ptr<const LoadedModule> module) {
        return op.attach(kind, std::move(module));
      }));
  std::lock_guard lock(mutex_);
  return split_k ? split_k_parallel_ : universal_;
}

Status GemmOperation::run(GemmArguments& arguments, void* stream) const {
  const tc_kernel_entry* kernel = arguments.entry();
  if (!kernel) return Status::invalid("arguments: not prepared for any operation");
  char error[512] = {0};
  const int32_t code =
      kernel->run(&arguments.abi_args(), arguments.workspace(), stream, error, sizeof error);
  arguments.note_launch(stream);
  if (code != TC_OK) {
    return Status(
        code == TC_ERROR_INVALID_ARGUMENT ? StatusCode::kInvalidArgument : StatusCode::kCudaError,
        name_ + ": " + error);
  }
  return Status::ok();
}

Status compile_operations(const std::vector<std::shared_ptr<GemmOperation>>& operations,
                          const compile::ProgressFn& progress) {
  std::vector<std::pair<std::shared_ptr<GemmOperation>, bool>> work;
  for (const auto& op : operations) {
    if (!op) return Status::invalid("add_module: got a null operation");
    if (!op->is_compiled()) work.emplace_back(op, false);
  }
  if (work.empty()) return Status::ok();
  return build_and_attach(work, progress,
                          [](GemmOperation& op, bool kind, std::shared_ptr<const LoadedModule> m) {
                            return op.attach(kind, std::move(m));
                          });
}

}  // namespace tilecraft
