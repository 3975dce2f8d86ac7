// GemmOperationUniversal: a described GEMM kernel that can be compiled and launched (seeds
// 002/004).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "tilecraft/abi/module_abi.h"
#include "tilecraft/compile/compiler.hpp"
#include "tilecraft/core/status.hpp"
#include "tilecraft/describe/gemm_operation.hpp"

namespace tilecraft {

class CompiledArtifact;
class GemmArguments;
class LoadedModule;
class PreparedLaunch;

class GemmOperation {
 public:
  static Result<std::shared_ptr<GemmOperation>> make(const GemmDescription& description);
  static Result<std::shared_ptr<GemmOperation>> make(
      int arch, const TileDescription& tile, const TensorDescription& A, const TensorDescription& B,
      const TensorDescription& C, const EpilogueFunctor& epilogue, Swizzle swizzle);
  // GemmOperationUniversal(..., epilogue_functor=graph, visitor=True) (seed 002's epilogue
  // visitor tree): the kernel computes `graph` as its epilogue, over a LinearCombination to C's
  // element type and alignment in Float32.
  static Result<std::shared_ptr<GemmOperation>> make_with_epilogue_graph(
      int arch, const TileDescription& tile, const TensorDescription& A, const TensorDescription& B,
      const TensorDescription& C, const EpilogueGraph& graph, Swizzle swizzle);
  // GemmOperationGrouped (seed 002).
  static Result<std::shared_ptr<GemmOperation>> make_grouped(
      int arch, const TileDescription& tile, const TensorDescription& A, const TensorDescription& B,
      const TensorDescription& C, const EpilogueFunctor& epilogue, Swizzle swizzle,
      SchedulerMode scheduler_mode);

  const GemmDescription& description() const { return description_; }
  const std::string& procedural_name() const { return name_; }

  // operation.epilogue_type(alpha, beta, *activation_args): checked against the functor.
  Result<EpilogueParams> epilogue_type(double alpha, double beta,
                                       std::vector<double> activation_args = {}) const;

  // Launches prepared arguments (GemmArguments, or GroupedGemmArguments for a grouped
  // operation) on `stream` (a cudaStream_t; nullptr: the default stream). Never synchronizes.
  Status run(PreparedLaunch& arguments, void* stream = nullptr) const;

  bool is_compiled() const;
  // The kernel entry for a mode, compiling (or loading from the cache) on first use. A grouped
  // operation runs only mode Grouped, any other only the others.
  Result<const tc_kernel_entry*> entry(GemmMode mode) const;

  // Runs with an artifact's universal kernel (CompiledArtifact::load) instead of compiling one.
  // The artifact must hold this operation's kernel (its name is the procedural name).
  Status use_artifact(const CompiledArtifact& artifact);

 private:
  friend class CompiledArtifact;
  friend std::vector<Status> compile_each_operation(
      const std::vector<std::shared_ptr<GemmOperation>>&, const compile::ProgressFn&, bool);
  friend Status compile_split_k_parallel(const std::vector<std::shared_ptr<GemmOperation>>&,
                                         const compile::ProgressFn&);
  explicit GemmOperation(GemmDescription description);
  Status attach(bool split_k_parallel, std::shared_ptr<const LoadedModule> module) const;
  // The universal entry and the module holding it, read together (null before compiling).
  std::pair<std::shared_ptr<const LoadedModule>, const tc_kernel_entry*> universal_kernel() const;

  GemmDescription description_;
  std::string name_;
  mutable std::mutex mutex_;
  mutable std::shared_ptr<const LoadedModule> module_;
  mutable std::shared_ptr<const LoadedModule> split_k_module_;
  mutable const tc_kernel_entry* universal_ = nullptr;
  mutable const tc_kernel_entry* split_k_parallel_ = nullptr;
};

// compiler.add_module([op, ...]): emits one module for the operations' universal kernels,
// compiles it (or finds it in the cache) and attaches the entries. The split-K-parallel
// companion of an operation is compiled on the first GemmSplitKParallel arguments made for it.
Status compile_operations(const std::vector<std::shared_ptr<GemmOperation>>& operations,
                          const compile::ProgressFn& progress = compile::default_progress);

// The split-K-parallel companions (partials kernel and reduction) of the operations, compiled
// together, each in its own unit, in parallel; those already built are kept. Without it each
// companion compiles on the first GemmSplitKParallel / SplitKMode.Parallel arguments made for its
// operation, one at a time. Grouped operations have none: they are refused.
Status compile_split_k_parallel(const std::vector<std::shared_ptr<GemmOperation>>& operations,
                                const compile::ProgressFn& progress = compile::default_progress);

// Whether the kernel of `description` is ready without compiling: loaded in this process, or
// in the artifact cache as a module of its own (a module shared with other kernels is found only
// once loaded).
bool kernel_is_ready(const GemmDescription& description);
// Only the first half of that (no cache lookup): loaded in this process.
bool kernel_is_loaded(const GemmDescription& description);

// The same, with one Status per operation (a kernel that fails to compile does not hide the
// others). one_kernel_per_module keeps every kernel in its own translation unit even when there
// are more kernels than compile jobs, so that each is found in the cache later on its own (the
// autotuner compiles its candidates so).
std::vector<Status> compile_each_operation(
    const std::vector<std::shared_ptr<GemmOperation>>& operations,
    const compile::ProgressFn& progress = compile::default_progress,
    bool one_kernel_per_module = false);

}  // namespace tilecraft
