// tilecraft::api::Conv2dArguments: what the caller's channels-last tensors say about the
// convolution they want.
#include <string>

#include "discover/operand_rules.hpp"
#include "discover/prepared_by_kernel.hpp"
#include "tilecraft/core/extents.hpp"
#include "tilecraft/discover/conv_api.hpp"
#include "tilecraft/runtime/conv2d_arguments.hpp"
#include "tilecraft/runtime/index_limits.hpp"

namespace tilecraft::api {
namespace {

// torch's logical order: (N, C, H, W) or (K, C, R, S); with depth (N, C, D, H, W).
using Extent = std::vector<int64_t>;

std::string extent_text(const Extent& e) {
  std::string out = "(";
  for (size_t i = 0; i < e.size(); ++i) out += (i ? ", " : "") + std::to_string(e[i]);
  return out + ")";
}

// A 4-D (or 5-D) tensor in torch's logical order whose memory is channels-last and packed:
// strides (H*W*C, 1, W*C, C) for (N, C, H, W), (D*H*W*C, 1, H*W*C, W*C, C) for (N, C, D, H, W).
// Extents of 1 may carry any stride.
Status check_channels_last(const char* name, const TensorView& t) {
  if (!t.data) return Status::invalid(std::string(name) + ": expected a tensor, got none");
  if (t.rank != 4 && t.rank != 5) {
    return Status::invalid(std::string(name) +
                           ": expected a 4-D tensor in torch's (N, C, H, W) order (5-D (N, C, D, "
                           "H, W) for a 3-D convolution), got " +
                           t.describe());
  }
  const int rank = t.rank;
  const int64_t c = t.shape[1];
  Extent packed(rank, 0);
  packed[1] = 1;
  int64_t stride = c;
  for (int i = rank - 1; i >= 2; --i) {
    packed[i] = stride;
    if (__builtin_mul_overflow(stride, t.shape[i], &stride)) {
      return Status::invalid(std::string(name) +
                             ": its packed strides overflow 64 bits: " + t.describe());
    }
  }
  packed[0] = stride;
  const char* format = rank == 5 ? "torch.channels_last_3d" : "torch.channels_last";
  for (int i = 0; i < rank; ++i) {
    if (t.shape[i] > 1 && t.strides[i] != packed[i]) {
      const bool channels_first = t.is_contiguous() && c > 1;
      return Status::invalid(
          std::string(name) + ": expected a packed channels-last tensor (strides " +
          extent_text(packed) + ", " + format + " memory format), got " + t.describe() +
          (channels_first
               ? " (channels-first: call .contiguous(memory_format=" + std::string(format) + "))"
               : std::string()));
    }
  }
  return Status::ok();
}

Extent extent_of(const TensorView& t) { return Extent(t.shape.begin(), t.shape.begin() + t.rank); }

// The widest access the channels (the contiguous extent) and the data pointer admit.
int channel_alignment(const TensorView& t) {
  const int bytes = storage_bytes(t.dtype);
  const auto address = reinterpret_cast<uintptr_t>(t.data);
  for (int a = 16 / bytes; a > 1; a /= 2) {
    if (address % (static_cast<uintptr_t>(a) * bytes) == 0 && t.shape[1] % a == 0) return a;
  }
  return 1;
}

Status check_epilogue(const EpilogueArguments& e) {
  TILECRAFT_RETURN_IF_ERROR(check_finite({{"alpha", e.alpha}, {"beta", e.beta}}));
  TILECRAFT_RETURN_IF_ERROR(check_beta_has_c(e.beta, e.C.data != nullptr, "C"));
  TILECRAFT_RETURN_IF_ERROR(check_activation_args(e.activation, e.activation_args));
  if (e.bias_per_row) {
    return Status::invalid(
        "epilogue.bias_per_row: a convolution's bias has one value per output channel");
  }
  if (e.scale_a.given || e.scale_b.given) {
    return Status::invalid("epilogue.scale_a / scale_b: per-tensor scales are fp8 GEMM fusions");
  }
  if (e.graph || !e.operands.tensors.empty() || !e.operands.scalars.empty()) {
    return Status::unsupported(
        "epilogue.graph: get_kernels lists no convolution with a custom epilogue graph yet; "
        "describe one explicitly (a persistent SM90 convolution with the graph as its epilogue, "
        "docs/conv.md)");
  }
  return Status::ok();
}

}  // namespace

std::array<int64_t, 3> Conv2dArguments::gemm_mnk() const {
  return tilecraft::detail::implicit_gemm_mnk(kind_, size_);
}

double Conv2dArguments::flops() const {
  const auto [m, n, k] = gemm_mnk();
  return 2.0 * double(m) * double(n) * double(k);
}

Result<Conv2dArguments> Conv2dArguments::make(ConvKind kind, const TensorView& A,
                                              const TensorView& B, const TensorView& out,
                                              DataType accumulator_type,
                                              const Conv2dGeometry& geometry,
                                              const EpilogueArguments& epilogue) {
  if (!is_valid(kind)) return Status::invalid("kind: expected fprop, dgrad or wgrad");
  // Every tensor in 64 bits before its extents are read (C and bias when given).
  const std::pair<const char*, const TensorView*> given[] = {
      {"A", &A}, {"B", &B}, {"out", &out}, {"C", &epilogue.C}, {"epilogue.bias", &epilogue.bias}};
  for (const auto& [name, t] : given) {
    if (t->data == nullptr && (t == &epilogue.C || t == &epilogue.bias)) continue;
    TILECRAFT_RETURN_IF_ERROR(check_tensor_extents(name, *t).status());
  }
  TILECRAFT_RETURN_IF_ERROR(check_accumulator_type(accumulator_type));
  const char* names[3] = {"A", "B", "out"};
  const TensorView* tensors[3] = {&A, &B, &out};
  for (int i = 0; i < 3; ++i) TILECRAFT_RETURN_IF_ERROR(check_channels_last(names[i], *tensors[i]));
  const int rank = A.rank;
  for (int i = 1; i < 3; ++i) {
    if (tensors[i]->rank != rank) {
      return Status::invalid(std::string(names[i]) + ": expected a " + std::to_string(rank) +
                             "-D tensor like A (4-D for a 2-D convolution, 5-D for a 3-D one), "
                             "got " +
                             tensors[i]->describe());
    }
  }
  const bool three_d = rank == 5;
  TILECRAFT_RETURN_IF_ERROR(check_epilogue(epilogue));
  // Which tensor is x (N, C, H, W) and which the filter (K, C, R, S) for this kind.
  const TensorView& x = kind == ConvKind::Fprop ? A : kind == ConvKind::Wgrad ? B : out;
  const TensorView& w = kind == ConvKind::Wgrad ? out : B;
  const TensorView& y = kind == ConvKind::Fprop ? out : A;
  const Extent xe = extent_of(x), we = extent_of(w), ye = extent_of(y);
  const auto [x_name, w_name, y_name] = conv_tensor_names(kind);
  // What no kernel can index: a convolution extent above 32 bits (tc_conv_problem and CUTLASS's
  // Conv2dProblemSize are int32), refused by the tensor and dimension it comes from.
  for (int i = 0; i < rank; ++i) {
    TILECRAFT_RETURN_IF_ERROR(check_index32(x_name, i, xe[i]));
    TILECRAFT_RETURN_IF_ERROR(check_index32(w_name, i, we[i]));
    TILECRAFT_RETURN_IF_ERROR(check_index32(y_name, i, ye[i]));
  }
  for (const auto& [name, t] :
       {std::pair{x_name, &x}, std::pair{w_name, &w}, std::pair{y_name, &y}}) {
    if (t->numel() > kMaxIndex32) {
      return Status::invalid(std::string(name) + ": " + std::to_string(t->numel()) +
                             " elements exceed the kernels' 32-bit implicit-GEMM index (at most " +
                             std::to_string(kMaxIndex32) + " elements per tensor)");
    }
  }
  if (geometry.groups < 1 || xe[1] % geometry.groups != 0) {
    return Status::invalid("groups: expected a divisor of the " + std::to_string(xe[1]) +
                           " input channels, got " + std::to_string(geometry.groups));
  }
  if (we[1] * geometry.groups != xe[1]) {
    return Status::invalid(std::string(w_name) + ": expected " +
                           std::to_string(xe[1] / geometry.groups) +
                           " channels per filter (C / groups, from " + x_name + " " +
                           extent_text(xe) + "), got " + extent_text(we));
  }
  const auto i32 = [](int64_t v) { return static_cast<int>(v); };
  const std::array<int, 4>& pad = geometry.padding;
  auto size =
      three_d
          ? Conv2dProblemSize::make_3d(
                {i32(xe[0]), i32(xe[2]), i32(xe[3]), i32(xe[4]), i32(xe[1])},
                {i32(we[0]), i32(we[2]), i32(we[3]), i32(we[4]), i32(we[1])},
                {geometry.padding_d[0], geometry.padding_d[1], pad[0], pad[1], pad[2], pad[3]},
                {geometry.stride_d, geometry.stride[0], geometry.stride[1]},
                {geometry.dilation_d, geometry.dilation[0], geometry.dilation[1]}, geometry.mode, 1,
                geometry.groups)
          : Conv2dProblemSize::make(
                {i32(xe[0]), i32(xe[2]), i32(xe[3]), i32(xe[1])},
                {i32(we[0]), i32(we[2]), i32(we[3]), i32(we[1])}, {pad[0], pad[1], pad[2], pad[3]},
                {geometry.stride[0], geometry.stride[1]},
                {geometry.dilation[0], geometry.dilation[1]}, geometry.mode, 1, geometry.groups);
  if (!size) return size.status();
  if (!three_d && (geometry.stride_d != 1 || geometry.dilation_d != 1 ||
                   geometry.padding_d[0] != 0 || geometry.padding_d[1] != 0)) {
    return Status::invalid(
        "stride, padding, dilation: depth values are for 5-D (3-D "
        "convolution) tensors; the tensors are 4-D");
  }
  const Extent expected_y = three_d ? Extent{size->n, size->k, size->z, size->p, size->q}
                                    : Extent{size->n, size->k, size->p, size->q};
  if (ye != expected_y) {
    return Status::invalid(std::string(y_name) + ": expected " + extent_text(expected_y) +
                           (three_d ? " (N, K, Z, P, Q from " : " (N, K, P, Q from ") + x_name +
                           " " + extent_text(xe) + ", " + w_name + " " + extent_text(we) +
                           ", the stride, padding and dilation), got " + extent_text(ye));
  }
  if (A.dtype != B.dtype) {
    return Status::invalid("B: expected " + dsl_name(A.dtype) + " like A, got " +
                           dsl_name(B.dtype));
  }
  if (epilogue.C.data) {
    TILECRAFT_RETURN_IF_ERROR(check_channels_last("C", epilogue.C));
    if (extent_of(epilogue.C) != extent_of(out) || epilogue.C.dtype != out.dtype) {
      return Status::invalid("C: expected a " + dsl_name(out.dtype) + " tensor shaped like out " +
                             extent_text(extent_of(out)) + ", got " + epilogue.C.describe());
    }
  }
  if (epilogue.bias.data) {
    const int64_t channels = out.shape[1];
    if (kind == ConvKind::Wgrad) {
      return Status::invalid(
          "epilogue.bias: wgrad writes a filter gradient; a bias belongs to "
          "fprop or dgrad");
    }
    if (epilogue.bias.numel() != channels || !epilogue.bias.is_contiguous()) {
      return Status::invalid("epilogue.bias: expected a contiguous tensor of " +
                             std::to_string(channels) + " values (one per output channel), got " +
                             epilogue.bias.describe());
    }
  }
  int device = -1;
  const TensorView* all[5] = {&A, &B, &out, &epilogue.C, &epilogue.bias};
  const char* all_names[5] = {"A", "B", "out", "C", "bias"};
  for (int i = 0; i < 5; ++i) {
    const TensorView& t = *all[i];
    if (!t.data) continue;
    if (t.device != DeviceKind::kCuda) {
      return Status::invalid(std::string(all_names[i]) + ": expected a CUDA tensor, got " +
                             t.describe());
    }
    if (device < 0) device = t.device_id;
    if (t.device_id != device) {
      return Status::invalid(std::string(all_names[i]) + ": expected a tensor on cuda:" +
                             std::to_string(device) + " like A, got " + t.describe());
    }
  }
  Conv2dArguments args;
  args.prepared_ = std::make_shared<detail::PreparedByKernel>();
  args.kind_ = kind;
  args.size_ = *size;
  args.a_ = A;
  args.b_ = B;
  args.out_ = out;
  args.epilogue_ = epilogue;
  args.accumulator_ = accumulator_type;
  for (int i = 0; i < 3; ++i) args.alignment_[i] = channel_alignment(*tensors[i]);
  args.alignment_c_ = epilogue.C.data ? channel_alignment(epilogue.C) : args.alignment_[2];
  return args;
}

}  // namespace tilecraft::api
