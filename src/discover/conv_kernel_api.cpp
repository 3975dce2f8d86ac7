// api::Kernel for convolutions, and get_kernels(Conv2dArguments): each design of the GEMM spaces
// in its implicit-GEMM convolution variant (SM80: ImplicitGemmConvolution; SM90: ConvUniversal on
// the TmaWarpSpecialized schedule), ranked by the performance model on the implicit GEMM.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "discover/kernel_state.hpp"
#include "discover/operand_rules.hpp"
#include "discover/prepared_by_kernel.hpp"
#include "tilecraft/describe/conv2d_rules.hpp"
#include "tilecraft/discover/conv_api.hpp"
#include "tilecraft/runtime/conv2d_arguments.hpp"
#include "tilecraft/runtime/index_limits.hpp"

namespace tilecraft::api {
namespace {

std::string kind_text(ConvKind kind) { return std::string(to_string(kind)); }

Status unsupported(const char* what, const std::string& text) {
  return Status::invalid(std::string(what) + " is unsupported: " + text);
}

Status check_operand(const char* name, const OperandMetadata& kernel, DataType dtype,
                     int alignment) {
  TILECRAFT_RETURN_IF_ERROR(check_element(name, kernel.dtype, dtype));
  return check_alignment(name, kernel.alignment, alignment,
                         " (its channel count and data pointer), the tensor allows ");
}

// The GEMM operand layouts of a convolution's implicit GEMM (conv2d_rules' implicit_gemm_of).
std::array<Layout, 3> gemm_layouts(ConvKind kind) {
  switch (kind) {
    case ConvKind::Fprop:
      return {Layout::RowMajor, Layout::ColumnMajor, Layout::RowMajor};
    case ConvKind::Dgrad:
      return {Layout::RowMajor, Layout::RowMajor, Layout::RowMajor};
    case ConvKind::Wgrad:
      break;
  }
  return {Layout::ColumnMajor, Layout::RowMajor, Layout::RowMajor};
}

bool operands_match(const discover::GemmOperands& o, const Conv2dArguments& args) {
  const auto layouts = gemm_layouts(args.kind());
  return element_matches(o.a, args.A().dtype) && element_matches(o.b, args.B().dtype) &&
         o.out == args.out().dtype && o.accumulator == args.accumulator_type() &&
         o.layout_a == layouts[0] && o.layout_b == layouts[1] && o.layout_out == layouts[2] &&
         args.alignment_a() % o.alignment_a == 0 && args.alignment_b() % o.alignment_b == 0 &&
         args.alignment_out() % o.alignment_out == 0 && args.alignment_c() % o.alignment_out == 0 &&
         !o.fast_accum && !o.scaled;
}

// The grouped variants of a fprop with groups > 1 (arch 80 only): depthwise (C == K == groups) on
// CUDA cores; otherwise tensor-op kernels mapping one group per CTA (optimized or analytic
// iterators) or several (analytic). check_geometry keeps those whose tile N fits the groups.
std::vector<ConvDescription> group_variants(const Conv2dArguments& args, int arch,
                                            const discover::GemmOperands& o) {
  const Conv2dProblemSize& p = args.problem_size();
  if (arch != 80 || args.kind() != ConvKind::Fprop) return {};
  const ConvKind kind = ConvKind::Fprop;
  const StrideSupport stride = StrideSupport::Strided;
  if (p.c == p.groups && p.k == p.groups) {
    if (o.math != discover::MathFamily::simt) return {};
    return {{kind, IteratorAlgorithm::Analytic, stride, GroupMode::Depthwise}};
  }
  if (o.math != discover::MathFamily::tensor_op) return {};
  std::vector<ConvDescription> out;
  if (p.r <= 32 && p.s <= 32) {
    out.push_back({kind, IteratorAlgorithm::Optimized, stride, GroupMode::SingleGroup});
  } else {
    out.push_back({kind, IteratorAlgorithm::Analytic, stride, GroupMode::SingleGroup});
  }
  out.push_back({kind, IteratorAlgorithm::Analytic, stride, GroupMode::MultipleGroup});
  return out;
}

// The convolution variants of one GEMM description: the iterator algorithms and the stride
// specialization the problem can use.
// The 3-D variants (arch 80, CUTLASS's Conv3d): 128-bit accesses on tensor cores, one element on
// CUDA cores; dgrad analytic strided, or optimized at unit strides.
std::vector<ConvDescription> conv3d_variants(const Conv2dArguments& args, int arch,
                                             const discover::GemmOperands& o) {
  const Conv2dProblemSize& p = args.problem_size();
  if (arch != 80 || p.groups != 1 || size_in_bits(o.a) == 8) return {};
  if (o.math == discover::MathFamily::tensor_op &&
      (o.alignment_a != 128 / size_in_bits(o.a) || o.alignment_b != 128 / size_in_bits(o.b))) {
    return {};
  }
  const ConvKind kind = args.kind();
  const bool small_filter = p.t <= 32 && p.r <= 32 && p.s <= 32;
  const IteratorAlgorithm fast =
      small_filter ? IteratorAlgorithm::Optimized : IteratorAlgorithm::Analytic;
  if (kind == ConvKind::Dgrad) {
    const bool unit_stride = p.stride_d == 1 && p.stride_h == 1 && p.stride_w == 1;
    if (unit_stride && small_filter) {
      return {{kind, IteratorAlgorithm::Optimized, StrideSupport::Unity}};
    }
    return {{kind, IteratorAlgorithm::Analytic, StrideSupport::Strided}};
  }
  return {{kind, fast, StrideSupport::Strided}};
}

std::vector<ConvDescription> conv_variants(const Conv2dArguments& args, int arch,
                                           const discover::GemmOperands& o) {
  const Conv2dProblemSize& p = args.problem_size();
  if (p.is_3d()) return conv3d_variants(args, arch, o);
  if (p.groups != 1) return group_variants(args, arch, o);
  const ConvKind kind = args.kind();
  const bool unit_stride = p.stride_h == 1 && p.stride_w == 1;
  StrideSupport stride = StrideSupport::Strided;
  if (kind == ConvKind::Dgrad && (unit_stride || arch == 90)) stride = StrideSupport::Unity;
  if (arch == 90) return {{kind, IteratorAlgorithm::Optimized, stride}};
  // Accesses narrower than cp.async's 32 bits (3 channels of f16, say): the two-stage mainloop,
  // whose CUTLASS forms take the analytic iterators.
  if (o.narrow_accesses()) {
    return {{kind, IteratorAlgorithm::Analytic, stride}};
  }
  std::vector<ConvDescription> out;
  const bool small_filter = p.r <= 32 && p.s <= 32;
  out.push_back(
      {kind, small_filter ? IteratorAlgorithm::Optimized : IteratorAlgorithm::Analytic, stride});
  // Few input channels: fprop's fixed-channel iterator loads a whole pixel per access.
  if (kind == ConvKind::Fprop && o.math == discover::MathFamily::tensor_op &&
      p.c == o.alignment_a) {
    out.push_back({kind, IteratorAlgorithm::FixedChannels, stride});
  }
  return out;
}

// The designs of tilecraft's direct convolution: threads along the output channels (a vector of
// channels each) and along the output pixels, and consecutive pixels of a row per thread.
struct DirectDesign {
  int channel_threads, pixel_threads, pixels_per_thread;
};
constexpr DirectDesign kDirectDesigns[] = {{8, 32, 4}, {8, 32, 2}, {4, 32, 4}, {16, 16, 4}};

// The widest access (a power of two up to 128 bits) dividing every extent in `extents`.
int direct_vector(DataType element, std::initializer_list<int64_t> extents) {
  int vector = 128 / size_in_bits(element);
  for (int64_t extent : extents) {
    while (vector > 1 && extent % vector != 0) vector /= 2;
  }
  return vector;
}

// tilecraft's direct kernels for a grouped fprop (arch 80, CUDA cores, float accumulators):
// depthwise (C == K == groups: a thread's channels in as many groups), or a thread's channels in
// one group (multiple_group); their epilogue computes the arguments' activation in f32, at the
// kernels' access width.
std::vector<GemmDescription> direct_descriptions(const Conv2dArguments& args) {
  const Conv2dProblemSize& p = args.problem_size();
  const DataType a = args.A().dtype;
  const bool float_operands = a == DataType::f16 || a == DataType::bf16 || a == DataType::f32;
  if (args.kind() != ConvKind::Fprop || p.groups == 1 || p.is_3d() || !float_operands ||
      args.B().dtype != a || args.accumulator_type() != DataType::f32 || p.split_k_slices != 1) {
    return {};
  }
  const bool depthwise = p.c == p.groups && p.k == p.groups;
  const int64_t c_per_group = p.c / p.groups, k_per_group = p.k / p.groups;
  const int vector =
      depthwise
          ? direct_vector(a, {p.c, args.alignment_a(), args.alignment_out(), args.alignment_c()})
          : direct_vector(a, {c_per_group, k_per_group, args.alignment_a(), args.alignment_out(),
                              args.alignment_c()});
  if (size_in_bits(args.out().dtype) * vector > 128) return {};
  auto math = MathInstruction::make({1, 1, 1}, a, a, DataType::f32, OpClass::Simt,
                                    MathOperation::multiply_add);
  if (!math) return {};
  const Activation activation = args.epilogue().activation;
  EpilogueFunctor epilogue;
  epilogue.kind = activation == Activation::identity ? EpilogueKind::LinearCombination
                                                     : EpilogueKind::LinearCombinationGeneric;
  epilogue.activation = activation;
  epilogue.element_output = args.out().dtype;
  epilogue.element_accumulator = DataType::f32;
  epilogue.element_epilogue = DataType::f32;
  epilogue.elements_per_access = vector;
  std::vector<GemmDescription> out;
  for (const DirectDesign& design : kDirectDesigns) {
    const std::array<int, 3> shape{design.pixel_threads * design.pixels_per_thread,
                                   design.channel_threads * vector, 1};
    auto tile = TileDescription::make(
        shape, 2, {design.channel_threads * design.pixel_threads / 32, 1, 1}, *math);
    if (!tile) continue;
    auto conv = GemmDescription::make_conv2d(
        ConvKind::Fprop, IteratorAlgorithm::Direct, 80, *tile, {a, Layout::TensorNHWC, vector},
        {a, Layout::TensorNHWC, 1}, {args.out().dtype, Layout::TensorNHWC, vector},
        StrideSupport::Strided, epilogue, Swizzle::IdentitySwizzle1,
        depthwise ? GroupMode::Depthwise : GroupMode::MultipleGroup);
    if (conv) out.push_back(std::move(*conv));
  }
  return out;
}

// The designs of the GEMM space a convolution takes. SM90: each ping-pong design (tile M up to
// 128) on CUTLASS's ConvUniversal (the TmaWarpSpecialized schedule), once. The persistent SM90
// convolutions (jit/sm90_conv_persistent.cuh) are described explicitly, and not listed, until
// they have run through the GPU suites. Arch 80: the design itself, and for a grouped fprop of 8
// to 32 output channels per group, each tensor-op design of tile N 64 narrowed to N 32 (the
// warps stacked along M; SM80 warp tiles are 32 wide at least): MMAs that span one group of 32
// (single_group) or 2 to 4 smaller ones (multiple_group), where the space's tiles span 2 to 8.
std::vector<discover::GemmDesign> conv_designs(discover::GemmDesign design, int arch,
                                               const Conv2dArguments& args) {
  if (arch != 90) {
    std::vector<discover::GemmDesign> out{design};
    const Conv2dProblemSize& p = args.problem_size();
    const int64_t k_per_group = p.k / p.groups;
    if (p.groups > 1 && args.kind() == ConvKind::Fprop &&
        design.math == discover::MathFamily::tensor_op && design.tile_mn_kbytes[1] == 64 &&
        (k_per_group == 8 || k_per_group == 16 || k_per_group == 32)) {
      discover::GemmDesign narrow = design;
      narrow.tile_mn_kbytes[1] = 32;
      const int warps = design.warp_count[0] * design.warp_count[1];
      narrow.warp_count = {std::min(warps, design.tile_mn_kbytes[0] / 32), 1, 1};
      out.push_back(narrow);
    }
    return out;
  }
  if (design.kernel_schedule != KernelSchedule::TmaWarpSpecializedPingpong) return {};
  design.kernel_schedule = KernelSchedule::TmaWarpSpecialized;
  return {design};
}

// A depthwise kernel (CUTLASS's DefaultDepthwiseFprop) is a two-stage CUDA-core pipeline.
Result<GemmDescription> conv_description(const GemmDescription& gemm, const ConvDescription& conv,
                                         bool three_d) {
  TileDescription tile = gemm.tile;
  if (conv.group_mode == GroupMode::Depthwise) tile.stages = 2;
  const Layout layout = three_d ? Layout::TensorNDHWC : Layout::TensorNHWC;
  return GemmDescription::make_conv2d(
      conv.kind, conv.iterator_algorithm, gemm.arch, tile,
      {gemm.A.element, layout, gemm.A.alignment}, {gemm.B.element, layout, gemm.B.alignment},
      {gemm.C.element, layout, gemm.C.alignment}, conv.stride_support, gemm.epilogue, gemm.swizzle,
      conv.group_mode);
}

// What of a kernel's design the geometry checks read.
struct KernelShape {
  int tile_n = 0;
  int align_a = 1, align_b = 1;
};

// The groups of the problem against the kernel's group mode, tile N and alignments.
Status check_groups(const ConvDescription& conv, const KernelShape& shape,
                    const Conv2dArguments& args) {
  const int tile_n = shape.tile_n, align_a = shape.align_a, align_b = shape.align_b;
  const Conv2dProblemSize& p = args.problem_size();
  const std::string mode(to_string(conv.group_mode));
  if (conv.group_mode == GroupMode::None) {
    if (p.groups == 1) return Status::ok();
    return unsupported("Groups",
                       "Expected 1 for an ungrouped kernel (grouped fprop runs on "
                       "arch-80 group kernels), got " +
                           std::to_string(p.groups));
  }
  if (p.groups == 1) {
    return unsupported("Groups", "Expected groups > 1 for a " + mode + " kernel, got 1");
  }
  const int k_per_group = p.k / p.groups;
  const int c_per_group = p.c / p.groups;
  if (conv.iterator_algorithm == IteratorAlgorithm::Direct &&
      conv.group_mode == GroupMode::MultipleGroup) {
    // A thread's align_a channels lie in one group, of its input and of its output.
    if (c_per_group % align_a != 0 || k_per_group % align_a != 0) {
      return unsupported("Groups",
                         "Expected C / groups and K / groups multiples of this direct "
                         "kernel's access of " +
                             std::to_string(align_a) + " channels, got " +
                             std::to_string(c_per_group) + " and " + std::to_string(k_per_group));
    }
    return Status::ok();
  }
  if (conv.group_mode == GroupMode::Depthwise) {
    if (p.c != p.groups || p.k != p.groups) {
      return unsupported("Groups", "Expected C == K == groups for a depthwise kernel, got C=" +
                                       std::to_string(p.c) + " K=" + std::to_string(p.k) +
                                       " groups=" + std::to_string(p.groups));
    }
    return Status::ok();
  }
  if (conv.group_mode == GroupMode::SingleGroup && k_per_group % tile_n != 0) {
    return unsupported("Groups",
                       "Expected K / groups a multiple of this single_group kernel's "
                       "tile N=" +
                           std::to_string(tile_n) + ", got " + std::to_string(k_per_group));
  }
  if (conv.group_mode == GroupMode::MultipleGroup && tile_n % k_per_group != 0) {
    return unsupported("Groups",
                       "Expected K / groups dividing this multiple_group kernel's "
                       "tile N=" +
                           std::to_string(tile_n) + ", got " + std::to_string(k_per_group));
  }
  for (const auto& [name, alignment] : {std::pair{"A", align_a}, std::pair{"B", align_b}}) {
    if (c_per_group % alignment != 0) {
      return unsupported("Groups", std::string("Expected C / groups a multiple of operand ") +
                                       name + "'s alignment of " + std::to_string(alignment) +
                                       " elements (each group's channels start a new access), "
                                       "got " +
                                       std::to_string(c_per_group));
    }
  }
  return Status::ok();
}

// What the problem needs of the kernel's convolution specialization, in words.
Status check_geometry(const ConvDescription& conv, int arch, const KernelShape& shape,
                      const Conv2dArguments& args) {
  const Conv2dProblemSize& p = args.problem_size();
  TILECRAFT_RETURN_IF_ERROR(check_groups(conv, shape, args));
  const bool unit_stride = p.stride_h == 1 && p.stride_w == 1;
  const bool dilated = p.dilation_h > 1 || p.dilation_w > 1 || p.dilation_d > 1;
  if (conv.kind == ConvKind::Dgrad && conv.stride_support == StrideSupport::Unity &&
      (!unit_stride || p.stride_d != 1)) {
    return unsupported("Stride", "Expected (1, 1) for this unit-stride dgrad kernel, got (" +
                                     std::to_string(p.stride_h) + ", " +
                                     std::to_string(p.stride_w) + ")");
  }
  if (conv.kind == ConvKind::Dgrad && conv.stride_support == StrideSupport::Strided && dilated) {
    return unsupported("Dilation", "Expected (1, 1) for the strided dgrad kernel, got (" +
                                       std::to_string(p.dilation_h) + ", " +
                                       std::to_string(p.dilation_w) + ")");
  }
  if (conv.iterator_algorithm == IteratorAlgorithm::Optimized && arch == 80 &&
      (p.r > 32 || p.s > 32 || p.t > 32)) {
    return unsupported("Filter", "Expected T, R and S up to 32 for the optimized iterators, got " +
                                     (p.is_3d() ? std::to_string(p.t) + "x" : std::string()) +
                                     std::to_string(p.r) + "x" + std::to_string(p.s));
  }
  if (conv.iterator_algorithm == IteratorAlgorithm::FixedChannels && p.c != args.alignment_a()) {
    return unsupported("Channels", "Expected C equal to the fixed-channel access of " +
                                       std::to_string(args.alignment_a()) + ", got " +
                                       std::to_string(p.c));
  }
  if (arch == 90 && p.mode == ConvMode::Convolution) {
    return unsupported("Mode", "Expected cross_correlation (SM90 kernels), got convolution");
  }
  return Status::ok();
}

Status check_epilogue(const KernelMetadata& m, const Conv2dArguments& args) {
  const EpilogueArguments& e = args.epilogue();
  TILECRAFT_RETURN_IF_ERROR(check_activation(m.epilogue.activation, e.activation));
  const bool fused_bias = m.epilogue.bias != BiasKind::none;
  if (e.bias.data && m.design.arch == 80) {
    // SM80 kernels read the bias as a C of one value per channel.
    if (e.C.data) {
      return unsupported_epilogue("no C beside a bias (an SM80 kernel reads the bias as its C)",
                                  "both");
    }
    if (e.bias.dtype != m.operands.out.dtype) {
      return unsupported_epilogue(
          "a bias of " + dsl_name(m.operands.out.dtype) + " (the output's type, read as C)",
          dsl_name(e.bias.dtype));
    }
    return Status::ok();
  }
  if (fused_bias != (e.bias.data != nullptr) ||
      (fused_bias && m.epilogue.bias_dtype != e.bias.dtype)) {
    return unsupported_epilogue(
        fused_bias ? "a " + dsl_name(m.epilogue.bias_dtype) + " bias per output channel"
                   : "no bias",
        e.bias.data ? "a " + dsl_name(e.bias.dtype) + " bias" : "none");
  }
  return Status::ok();
}

// The implicit GEMM as kernels index it, each extent named by the tensor it comes from.
tilecraft::detail::IndexedProblem indexing_of(const Conv2dArguments& args) {
  const ConvTensorNames names = conv_tensor_names(args.kind());
  return tilecraft::detail::conv_indexing(args.kind(), args.problem_size(), names.x, names.w,
                                          names.y);
}

// The fraction of a grouped implicit GEMM's MMAs that is useful: a tile's N spans all of its
// groups' output channels and one group's count (multiple_group, depthwise; measured on an H100:
// 0.03-0.17x cuDNN, bench/RESULTS.md, issue 14), and each k-tile reads one filter tap's channels
// of one group, padded to the tile's K (every group mode but depthwise). 1 without groups.
double group_useful_fraction(const GemmDescription& conv, const Conv2dProblemSize& p) {
  const GroupMode mode = conv.conv.group_mode;
  if (mode == GroupMode::None) return 1.0;
  double useful = 1.0;
  if (mode == GroupMode::MultipleGroup || mode == GroupMode::Depthwise) {
    useful = double(p.k / p.groups) / double(conv.tile.threadblock_shape[1]);
  }
  if (mode != GroupMode::Depthwise) {
    const int64_t c_per_group = p.c / p.groups;
    const int64_t tile_k = conv.tile.threadblock_shape[2];
    useful *= double(c_per_group) / double((c_per_group + tile_k - 1) / tile_k * tile_k);
  }
  return useful;
}

// The K-slice counts worth offering for `conv` (the decomposition heuristic on its implicit GEMM)
// where CUTLASS 2.x splits exactly: arch-80 kernels without groups, a plain linear epilogue (no
// bias, no C: an SM80 bias is a C of one value per channel, which the slices would add again),
// and for parallel slices no strided dgrad (CUTLASS has no parallel form of it).
std::vector<int> conv_split_k_choices(const GemmDescription& conv, const GemmDescription& implicit,
                                      const discover::GemmShape& shape,
                                      const discover::DeviceTraits& traits,
                                      const Conv2dArguments& args) {
  const EpilogueArguments& e = args.epilogue();
  if (conv.arch != 80 || conv.conv.group_mode != GroupMode::None || e.bias.data || e.C.data ||
      e.activation != Activation::identity) {
    return {};
  }
  if (discover::split_k_parallel(conv) && !check_parallel_split_k(conv)) return {};
  return discover::split_k_choices(implicit, shape, traits);
}

// `split_k` K slices: serial (they meet in the output, which holds the accumulator's type) or,
// for a narrower output, parallel (discover::split_k_parallel).
Result<tilecraft::Conv2dProblem> problem_for(const Conv2dArguments& args,
                                             const GemmOperation& operation, int split_k = 1) {
  const EpilogueArguments& e = args.epilogue();
  tilecraft::Conv2dProblem p;
  p.problem_size = args.problem_size();
  p.problem_size.split_k_slices = split_k;
  p.split_k_mode = split_k > 1 && discover::split_k_parallel(operation.description())
                       ? SplitKMode::Parallel
                       : SplitKMode::Serial;
  p.A = args.A();
  p.B = args.B();
  p.D = args.out();
  p.C = e.C;
  double beta = e.beta;
  if (e.bias.data) {
    if (operation.description().arch == 90) {
      p.bias = e.bias;
    } else {
      p.C = e.bias;  // one value per channel, added with beta = 1
      beta = 1.0;
    }
  }
  auto output_op = operation.epilogue_type(e.alpha, beta, e.activation_args);
  if (!output_op) return output_op.status();
  p.output_op = *output_op;
  return p;
}

}  // namespace

Status Conv2dArguments::check(const Kernel& kernel) const {
  const Conv2dArguments& args = *this;
  const KernelMetadata& m = kernel.metadata();
  if (!m.conv) {
    return Status::invalid("Kernel is unsupported: " + m.kernel_name +
                           " is not a convolution; get_kernels(Conv2dArguments) lists "
                           "convolution kernels");
  }
  if (m.conv->kind != args.kind()) {
    return unsupported("Kernel", "Expected a " + kind_text(args.kind()) + " kernel, this one " +
                                     "computes " + kind_text(m.conv->kind));
  }
  const bool three_d_kernel = m.operands.A.layout == Layout::TensorNDHWC;
  if (three_d_kernel != args.problem_size().is_3d()) {
    return unsupported("Kernel", std::string("Expected a ") +
                                     (args.problem_size().is_3d() ? "3-D" : "2-D") +
                                     " convolution kernel, this one computes " +
                                     (three_d_kernel ? "3-D" : "2-D") + " convolutions");
  }
  TILECRAFT_RETURN_IF_ERROR(check_operand("A", m.operands.A, args.A().dtype, args.alignment_a()));
  TILECRAFT_RETURN_IF_ERROR(check_operand("B", m.operands.B, args.B().dtype, args.alignment_b()));
  TILECRAFT_RETURN_IF_ERROR(
      check_operand("out", m.operands.out, args.out().dtype, args.alignment_out()));
  TILECRAFT_RETURN_IF_ERROR(check_accumulator(m.operands.accumulator, args.accumulator_type()));
  if (m.operands.fast_accum || m.epilogue.per_tensor_scales) {
    return unsupported("Kernel",
                       "Expected a kernel without fast accumulation or per-tensor "
                       "scales (fp8 GEMM kernels), this one has them");
  }
  TILECRAFT_RETURN_IF_ERROR(check_geometry(
      *m.conv, m.design.arch,
      {m.design.tile_shape[1], m.operands.A.alignment, m.operands.B.alignment}, args));
  TILECRAFT_RETURN_IF_ERROR(check_epilogue(m, args));
  return tilecraft::detail::check_kernel_indexes(kernel.description(), indexing_of(args));
}

Result<std::unique_ptr<PreparedLaunch>> Conv2dArguments::prepare(const Kernel& kernel,
                                                                 const GemmOperation& operation,
                                                                 void* workspace,
                                                                 size_t workspace_bytes) const {
  return detail::prepared_launch<tilecraft::Conv2dArguments>(
      operation, problem_for(*this, operation, kernel.metadata().design.split_k_slices), workspace,
      workspace_bytes);
}

Status Conv2dArguments::launch(const Kernel& kernel, const GemmOperation& operation, void* stream,
                               void* workspace, size_t workspace_bytes) const {
  return prepared_->run(kernel.metadata().kernel_name, operation, stream, workspace,
                        workspace_bytes,
                        [&] { return prepare(kernel, operation, workspace, workspace_bytes); });
}

std::vector<Kernel> Conv2dArguments::kernels(const MetadataFilter& metadata_filter,
                                             std::optional<int> cc) const {
  return get_kernels(*this, metadata_filter, cc);
}

std::vector<Kernel> get_kernels(const Conv2dArguments& args, const MetadataFilter& metadata_filter,
                                std::optional<int> cc) {
  const EpilogueArguments& e = args.epilogue();
  const std::array<int64_t, 3> mnk = args.gemm_mnk();
  const tilecraft::detail::IndexedProblem indexing = indexing_of(args);
  std::set<std::string> depthwise_listed;
  return detail::ranked_kernels(
      cc, args.device(), metadata_filter,
      [&](const discover::GemmOperands& operands) { return operands_match(operands, args); },
      [&](const discover::GemmSpace& space, const discover::DeviceTraits& traits,
          const discover::GemmOperands& operands, uint32_t instance, auto add) {
        const int arch = space.arch();
        // SM90 kernels fuse the bias per column: the implicit GEMM's N is the output channels.
        const discover::GemmEpilogue fusion = detail::fusion_for(
            e.activation, e.bias.data && arch == 90 ? std::optional(e.bias.dtype) : std::nullopt);
        for (const discover::GemmDesign& design :
             conv_designs(space.design_of(instance), arch, args)) {
          auto gemm = discover::make_description(arch, operands, design, fusion);
          if (!gemm) continue;
          for (const ConvDescription& variant : conv_variants(args, arch, operands)) {
            auto conv = conv_description(*gemm, variant, args.problem_size().is_3d());
            if (!conv) continue;
            const KernelShape shape{conv->tile.threadblock_shape[1], conv->A.alignment,
                                    conv->B.alignment};
            if (!check_geometry(variant, arch, shape, args)) continue;
            // A narrowed tile of one group is the single_group variant's.
            if (variant.group_mode == GroupMode::MultipleGroup &&
                shape.tile_n == args.problem_size().k / args.problem_size().groups) {
              continue;
            }
            // A kernel that cannot index the problem (supports() says why) is not listed.
            if (!tilecraft::detail::check_kernel_indexes(*conv, indexing)) continue;
            // Depthwise kernels have two stages whatever the design's count: list each once.
            if (variant.group_mode == GroupMode::Depthwise &&
                !depthwise_listed.insert(conv->procedural_name()).second) {
              continue;
            }
            const GemmDescription implicit = implicit_gemm_of(*conv);
            const discover::GemmShape problem{mnk[0], mnk[1], mnk[2], 1};
            for (int splits : conv_split_k_choices(*conv, implicit, problem, traits, args)) {
              const auto split = discover::for_convolution(
                  discover::estimate_split_k(implicit, problem, splits, traits), *conv, traits);
              add(Kernel::listed(arch, instance, split.score, split.explain(), *conv, splits));
            }
            auto estimate = discover::for_convolution(discover::estimate(implicit, problem, traits),
                                                      *conv, traits);
            const double useful = group_useful_fraction(*conv, args.problem_size());
            estimate.score *= useful;
            estimate.seconds /= useful;
            estimate.tile_efficiency *= useful;
            add(Kernel::listed(arch, instance, estimate.score, estimate.explain(),
                               std::move(*conv)));
          }
        }
      },
      [&](int arch, const discover::DeviceTraits& traits, auto add) {
        if (arch != 80) return;
        for (GemmDescription& direct : direct_descriptions(args)) {
          if (!tilecraft::detail::check_kernel_indexes(direct, indexing)) continue;
          const auto estimate = discover::estimate_direct_conv(direct, args.problem_size(), traits);
          add(Kernel::listed(arch, 0, estimate.score, estimate.explain(), std::move(direct)));
        }
      });
}

}  // namespace tilecraft::api
