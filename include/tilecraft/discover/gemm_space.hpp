// The configuration space of GEMM kernels per architecture (issue 4): every valid kernel a family
// can build, enumerated once per process as compact (operands, design) index pairs and turned
// into a GemmDescription only when asked for.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "tilecraft/core/types.hpp"
#include "tilecraft/describe/gemm_operation.hpp"

namespace tilecraft::discover {

// The instructions a kernel computes with. A design (tile, warps, stages) is made for one family:
// SM80 tensor cores at 8 to 32 bits (mma.sync 16x8xK), f64 tensor cores (DMMA 8x8x4), or CUDA
// cores (SIMT, f32 and f64).
enum class MathFamily : uint8_t { tensor_op, tensor_op_f64, simt };

// What a kernel fixes about its operands: element types, layouts and alignments (in elements).
struct GemmOperands {
  DataType a = DataType::f16, b = DataType::f16, out = DataType::f16;
  DataType accumulator = DataType::f32;
  Layout layout_a = Layout::RowMajor, layout_b = Layout::ColumnMajor, layout_out = Layout::RowMajor;
  int alignment_a = 8, alignment_b = 8, alignment_out = 8;
  // fp8 kernels run the per-tensor-scale epilogue (scales default to 1).
  bool scaled = false;
  MathFamily math = MathFamily::tensor_op;
  // fp8 kernels that accumulate without promoting to f32 (listed only for use_fast_accum).
  bool fast_accum = false;
  friend bool operator==(const GemmOperands&, const GemmOperands&) = default;
  // Tensor-core operands read in accesses narrower than cp.async's 32 bits (A's and B's accesses
  // are the same width): the SM80 two-stage mainloop's, which loads through registers.
  bool narrow_accesses() const {
    return math == MathFamily::tensor_op && alignment_a * size_in_bits(a) < 32;
  }
};

// The epilogue a kernel fuses beyond D = alpha * acc + beta * C. The spaces list the plain
// kernels; get_kernels derives fused ones from arguments that ask for an activation or a bias.
struct GemmEpilogue {
  Activation activation = Activation::identity;
  BiasKind bias = BiasKind::none;
  DataType element_bias = DataType::f32;
  bool plain() const { return activation == Activation::identity && bias == BiasKind::none; }
  friend bool operator==(const GemmEpilogue&, const GemmEpilogue&) = default;
};

// The design choices of a kernel, independent of its operand types. Tile K is given in bytes of
// the A operand so that one design serves every element width.
struct GemmDesign {
  std::array<int, 3> tile_mn_kbytes{};
  std::array<int, 3> cluster_shape{1, 1, 1};
  KernelSchedule kernel_schedule = KernelSchedule::Auto;
  TileScheduler tile_scheduler = TileScheduler::Persistent;
  Swizzle swizzle = Swizzle::IdentitySwizzle1;
  int stages = 0;                          // 0: as many as fit (SM90)
  std::array<int, 3> warp_count{1, 1, 1};  // SM80 only
  MathFamily math = MathFamily::tensor_op;
};

class GemmSpace {
 public:
  // The space of an architecture: 80 (CUTLASS 2.x tensor-op kernels, which also run on Hopper)
  // or 90 (CUTLASS 3.x TMA + wgmma kernels). Built on first use, then shared; thread-safe. An
  // operand set's instances are found on first use too: ranking one problem validates only the
  // designs of the operand sets that match it.
  static const GemmSpace& of(int arch);

  int arch() const { return arch_; }
  // Every instance (this finds the instances of every operand set).
  size_t size() const { return all_instances().size(); }
  const std::vector<uint32_t>& all_instances() const;
  const std::vector<GemmOperands>& operand_sets() const { return operands_; }
  // An instance is a number that names its operand set and its design (stable for the space's
  // lists): the valid ones are those all_instances() and instances_of() give.
  const GemmOperands& operands_of(size_t instance) const;
  // The valid description of instance i (validated again on the way out).
  GemmDescription description(size_t instance) const;
  // Instance i with another epilogue; Status::invalid when its kernel cannot fuse that epilogue.
  Result<GemmDescription> description(size_t instance, const GemmEpilogue& epilogue) const;
  // The design of instance i (convolution kernels are derived from it).
  const GemmDesign& design_of(size_t instance) const;
  // The instances whose operand set is `operand_set`, in design order.
  const std::vector<uint32_t>& instances_of(size_t operand_set) const;

 private:
  explicit GemmSpace(int arch);
  size_t set_of(size_t instance) const;
  size_t design_index_of(size_t instance) const;
  int arch_;
  std::vector<GemmOperands> operands_;
  std::vector<GemmDesign> designs_;
  mutable std::unique_ptr<std::once_flag[]> found_;  // per operand set
  mutable std::vector<std::vector<uint32_t>> by_operand_set_;
  mutable std::once_flag all_found_;
  mutable std::vector<uint32_t> all_;
};

// Builds the description of one (operands, design) pair; Status::invalid when the pair is not a
// kernel CUTLASS can build (the same rules GemmDescription::make applies to hand-written ones).
Result<GemmDescription> make_description(int arch, const GemmOperands& operands,
                                         const GemmDesign& design,
                                         const GemmEpilogue& epilogue = {});

}  // namespace tilecraft::discover
