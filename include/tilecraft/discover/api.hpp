// The arguments-first API of seed 003 ("CUTLASS API"), in C++: state what to compute on which
// tensors (GemmArguments), ask which kernels can do it (get_kernels, ranked best-first), then
// check, compile and run one (Kernel). Python's tilecraft.api is a thin skin over this.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tilecraft/compile/kernel_facts.hpp"
#include "tilecraft/core/status.hpp"
#include "tilecraft/core/tensor_view.hpp"
#include "tilecraft/describe/gemm_operation.hpp"
#include "tilecraft/runtime/compiled_artifact.hpp"
#include "tilecraft/runtime/gemm_arguments.hpp"
#include "tilecraft/runtime/gemm_operation.hpp"
#include "tilecraft/runtime/scale_argument.hpp"

namespace tilecraft {
class PreparedLaunch;
}

namespace tilecraft::api {

class Kernel;
class GroupedGemmArguments;
class Conv2dArguments;
namespace detail {
struct PreparedByKernel;  // the launches grouped and convolution arguments keep per kernel
}

// ---- metadata ----------------------------------------------------------------------------------

struct OperandMetadata {
  DataType dtype = DataType::f16;
  Layout layout = Layout::RowMajor;
  int alignment = 1;  // elements
};

struct GemmOperandsMetadata {
  OperandMetadata A, B, out;
  DataType accumulator = DataType::f32;
  // fp8 kernels that accumulate without promoting to f32 every few k-blocks: they run only
  // arguments that allow it (GemmArguments' use_fast_accum).
  bool fast_accum = false;
};

// Sm80DesignMetadata / Sm90DesignMetadata in Python, by arch.
struct DesignMetadata {
  int arch = 90;
  std::array<int, 3> tile_shape{};
  std::array<int, 3> cluster_shape{1, 1, 1};
  std::array<int, 3> warp_count{};  // SM80
  std::array<int, 3> instruction_shape{};
  int stages = 0;  // SM90: 0 = as many as fit
  KernelSchedule kernel_schedule = KernelSchedule::Auto;
  EpilogueSchedule epilogue_schedule = EpilogueSchedule::Auto;
  TileScheduler tile_scheduler = TileScheduler::Persistent;
  Swizzle swizzle = Swizzle::IdentitySwizzle1;
  // K slices of each launch (SM80: serial split-K, the partial sums meeting in out one after
  // another, or with split_k_parallel a slice of accumulators each in a workspace that a second
  // kernel sums into out; SM90 stream-K kernels: split-K reduced in a workspace). The kernel's
  // name ends in _splitk<n> (and _parallel) when it is more than 1.
  int split_k_slices = 1;
  bool split_k_parallel = false;
  // SM90 fp8 with f32 promotion: wgmma k-blocks between promotions (0: CUTLASS's 4); the
  // kernel's name ends in _promo<n> when it is set.
  int mma_promotion_interval = 0;
};

struct EpilogueMetadata {
  EpilogueKind kind = EpilogueKind::LinearCombination;
  Activation activation = Activation::identity;
  DataType compute = DataType::f32;
  bool per_tensor_scales = false;
  BiasKind bias = BiasKind::none;
  DataType bias_dtype = DataType::f32;  // meaningful when bias != none
  std::string epilogue_graph;           // the custom epilogue's key; empty without one
};

struct KernelMetadata {
  std::string kernel_name;
  // "Sm80GemmKernel" (CUTLASS 2.x) or "Sm90GemmKernel" (3.x); "...GroupedGemmKernel" and
  // "...ConvKernel" for the grouped and convolution families.
  std::string kernel_class;
  int min_cc = 80;
  GemmOperandsMetadata operands;
  DesignMetadata design;
  EpilogueMetadata epilogue;
  // Convolution kernels: which convolution, iterator algorithm and stride specialization.
  std::optional<ConvDescription> conv;
  // The ranking model's estimate for the arguments get_kernels ranked for: TFLOP/s on this
  // device (higher is better); 0 when listed without arguments. score_explain says how.
  double score = 0;
  std::string score_explain;
  // Registers, spills, shared memory and resident CTAs per SM: the compiler's once the kernel was
  // built with this cache, else predicted from the tile (facts.source says which).
  KernelFacts facts;
};

KernelMetadata metadata_of(const GemmDescription& description);

using MetadataFilter = std::function<bool(const KernelMetadata&)>;

// ---- arguments ---------------------------------------------------------------------------------

// What Kernel's methods take: the arguments of one kernel family (GemmArguments below,
// GroupedGemmArguments in grouped_api.hpp, Conv2dArguments in conv_api.hpp). A family says how a
// kernel is checked against its arguments, how they are prepared for the ABI and launched, and
// which of its kernels can run them; Kernel's methods are written once over these hooks.
class KernelArguments {
 public:
  virtual ~KernelArguments() = default;

 protected:
  KernelArguments() = default;
  KernelArguments(const KernelArguments&) = default;
  KernelArguments& operator=(const KernelArguments&) = default;

 private:
  friend class Kernel;
  friend std::vector<Kernel> get_kernels(const KernelArguments&, const MetadataFilter&,
                                         std::optional<int>);
  // Ok, or the first requirement of these arguments that `kernel` misses.
  virtual Status check(const Kernel& kernel) const = 0;
  // These arguments prepared for the ABI of `operation` (`kernel`'s), with the given workspace.
  virtual Result<std::unique_ptr<PreparedLaunch>> prepare(const Kernel& kernel,
                                                          const GemmOperation& operation,
                                                          void* workspace,
                                                          size_t workspace_bytes) const = 0;
  // Launches `operation` (`kernel`'s) on `stream`: with these arguments prepared, or with those
  // an earlier launch of the kernel prepared where they still fit.
  virtual Status launch(const Kernel& kernel, const GemmOperation& operation, void* stream,
                        void* workspace, size_t workspace_bytes) const = 0;
  // The family's kernels that can run these arguments (see get_kernels).
  virtual std::vector<Kernel> kernels(const MetadataFilter& metadata_filter,
                                      std::optional<int> cc) const = 0;
};

// What the epilogue does to A @ B before out is written:
//   out = activation(alpha * scale_a * scale_b * (A @ B) + beta * C + bias)
// Every kernel takes alpha, beta and C (shaped, typed and laid out like out). An activation or a
// bias selects kernels that fuse it (get_kernels derives them from the plain ones: SM80 kernels
// fuse the activations of LinearCombinationGeneric, SM90 kernels also bias, gelu_tanh and clamp).
// scale_a and scale_b are the per-tensor scales of fp8 kernels (default 1).
struct EpilogueArguments {
  double alpha = 1.0;
  double beta = 0.0;
  TensorView C;  // data == nullptr: none (beta must then be 0)
  Activation activation = Activation::identity;
  std::vector<double> activation_args;  // leaky_relu: the slope; clamp: lower, upper
  // N values added to every row (M values added to every column with bias_per_row), or one
  // such vector per batch: (L, N).
  TensorView bias;
  bool bias_per_row = false;
  ScaleArgument scale_a, scale_b;
  // A custom epilogue (an epilogue graph, e.g. from tilecraft.epilogue.trace) computed instead of
  // the expression above: out is its D output, `operands` its other tensors and its scalars by
  // name. alpha, beta, C, the activation, bias and scales are then left at their defaults.
  // get_kernels derives kernels that fuse the graph.
  std::optional<EpilogueGraph> graph;
  EpilogueOperands operands;
};

// out = A @ B, with an optional leading batch dimension L on all three (A (L, M, K), B (L, K, N),
// out (L, M, N)), accumulated in accumulator_type. Validated on construction: ranks, shapes,
// batch extents, one device, a contiguous inner dimension.
class GemmArguments : public KernelArguments {
 public:
  static Result<GemmArguments> make(const TensorView& A, const TensorView& B, const TensorView& out,
                                    DataType accumulator_type,
                                    const EpilogueArguments& epilogue = {},
                                    bool use_fast_accum = false);

  const TensorView& A() const { return a_; }
  const TensorView& B() const { return b_; }
  const TensorView& out() const { return out_; }
  // The CUDA device every operand is on (they are checked to share one).
  int device() const { return out_.device_id; }
  const EpilogueArguments& epilogue() const { return epilogue_; }
  DataType accumulator_type() const { return accumulator_; }
  int64_t m() const { return m_; }
  int64_t n() const { return n_; }
  int64_t k() const { return k_; }
  int64_t batch() const { return batch_; }
  // What the tensors allow: layouts from their strides, and the widest access (elements, a power
  // of two up to 16 bytes) that their data pointers, leading dimensions, batch strides and
  // contiguous extents all admit.
  Layout layout_a() const { return layout_[0]; }
  Layout layout_b() const { return layout_[1]; }
  Layout layout_out() const { return layout_[2]; }
  int alignment_a() const { return alignment_[0]; }
  int alignment_b() const { return alignment_[1]; }
  int alignment_out() const { return alignment_[2]; }
  // C's layout and alignment (those of out when no C is given).
  Layout layout_c() const { return layout_c_; }
  int alignment_c() const { return alignment_c_; }
  bool scales_given() const { return epilogue_.scale_a.given || epilogue_.scale_b.given; }
  // fp8 only: kernels may accumulate the tensor cores' products without promoting them to f32
  // every few k-blocks (faster, less accurate; torch._scaled_mm's use_fast_accum). Otherwise
  // only kernels that promote are listed.
  bool use_fast_accum() const { return use_fast_accum_; }

 private:
  Status check(const Kernel& kernel) const override;
  Result<std::unique_ptr<PreparedLaunch>> prepare(const Kernel& kernel,
                                                  const GemmOperation& operation, void* workspace,
                                                  size_t workspace_bytes) const override;
  Status launch(const Kernel& kernel, const GemmOperation& operation, void* stream, void* workspace,
                size_t workspace_bytes) const override;
  std::vector<Kernel> kernels(const MetadataFilter& metadata_filter,
                              std::optional<int> cc) const override;

  TensorView a_, b_, out_;
  DataType accumulator_ = DataType::f32;
  int64_t m_ = 0, n_ = 0, k_ = 0, batch_ = 1;
  std::array<Layout, 3> layout_{};
  std::array<int, 3> alignment_{};
  EpilogueArguments epilogue_;
  Layout layout_c_ = Layout::RowMajor;
  int alignment_c_ = 1;
  bool use_fast_accum_ = false;
};

// ---- kernels -----------------------------------------------------------------------------------

class Kernel {
 public:
  const KernelMetadata& metadata() const;
  const GemmDescription& description() const;

  // Ok, or the first requirement the arguments miss, e.g.
  // "Operand `A` is unsupported: Expected element type Float16, got BFloat16". The arguments are
  // those of the kernel's family: GemmArguments, GroupedGemmArguments or Conv2dArguments.
  Status supports(const KernelArguments& args) const;
  // Compiles (or finds in the cache) the kernel; the artifact can be saved and loaded elsewhere.
  Result<CompiledArtifact> compile(const KernelArguments& args) const;
  // Bytes of device workspace the kernel needs for these arguments (compiles the kernel if
  // needed: the size comes from the compiled module).
  Result<size_t> get_workspace_size(const KernelArguments& args) const;
  // Launches on `stream` (a cudaStream_t; nullptr: the default stream). With an artifact, runs
  // its module (no compiler needed); without one, compiles on first use. A caller's workspace
  // must hold get_workspace_size() bytes.
  // Repeated runs with tensors of the same shapes, strides and types (and the same scalars,
  // stream and workspace) reuse the arguments prepared for the ABI, only swapping pointers (GEMM);
  // runs of the same grouped or convolution arguments object reuse them as they are.
  Status run(const KernelArguments& args, const CompiledArtifact* compiled_artifact = nullptr,
             void* stream = nullptr, bool assume_supported_args = false, void* workspace = nullptr,
             size_t workspace_bytes = 0) const;

  // The operation behind the kernel (made on first use; compiled on its first run).
  Result<std::shared_ptr<GemmOperation>> operation() const;

 private:
  friend std::vector<Kernel> get_kernels(const GemmArguments*,
                                         const std::function<bool(const KernelMetadata&)>&,
                                         std::optional<int>);
  friend std::vector<Kernel> get_kernels(const GroupedGemmArguments&,
                                         const std::function<bool(const KernelMetadata&)>&,
                                         std::optional<int>);
  friend std::vector<Kernel> get_kernels(const Conv2dArguments&,
                                         const std::function<bool(const KernelMetadata&)>&,
                                         std::optional<int>);
  friend Status compile_kernels(const std::vector<Kernel>&);
  friend class GemmArguments;  // its launches reuse the kernel's last prepared arguments
  // A listed kernel: instance `instance` of the arch's space, scored, its description built
  // already (get_kernels builds one to rank it) or, without one, on first use; each launch split
  // into `split_k` K slices.
  static Kernel listed(int arch, size_t instance, double score, std::string score_explain,
                       std::optional<GemmDescription> described, int split_k = 1);
  struct State;
  std::shared_ptr<State> state_;
};

// The kernels that can run `args` (all kernels when args is null) and pass `metadata_filter`,
// for devices of compute capability `cc` (default: that of the device args' operands are on, or
// of the current device without args; every architecture when there is no device). With args they
// come best-first by the analytic performance model (src/discover/performance_model), its estimate
// in metadata().score.
std::vector<Kernel> get_kernels(const GemmArguments* args = nullptr,
                                const MetadataFilter& metadata_filter = {},
                                std::optional<int> cc = std::nullopt);
// The same for the arguments of any family (grouped_api.hpp and conv_api.hpp say how theirs rank).
std::vector<Kernel> get_kernels(const KernelArguments& args,
                                const MetadataFilter& metadata_filter = {},
                                std::optional<int> cc = std::nullopt);

// Compiles many kernels at once: parallel nvcc jobs, several kernels per translation unit when
// there are more kernels than jobs, progress on stderr (what Kernel::compile does one by one).
Status compile_kernels(const std::vector<Kernel>& kernels);

// Ok when the current device's compute capability is in `ccs`; otherwise why not (no device,
// or its capability).
Status is_device_cc_supported(const std::set<int>& ccs);

// CuTe DSL spellings of element types, as the seed prints them: "Float16", "BFloat16", ...
std::string dsl_name(DataType type);

}  // namespace tilecraft::api
