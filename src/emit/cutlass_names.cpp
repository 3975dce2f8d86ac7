#include "emit/cutlass_names.hpp"

#include <cctype>

#include "tilecraft/core/status.hpp"

namespace tilecraft::emit {
namespace {

[[noreturn]] void unsupported(std::string what) {
  throw Error(Status::unsupported("emit: " + std::move(what) + " has no SM80 CUTLASS spelling"));
}

}  // namespace

std::string camel_case(std::string_view snake_case) {
  std::string out;
  bool upper = true;
  for (char c : snake_case) {
    if (c == '_') {
      upper = true;
    } else {
      out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
      upper = false;
    }
  }
  return out;
}

std::string cutlass_element(DataType type) {
  switch (type) {
    case DataType::f64:
      return "double";
    case DataType::f32:
      return "float";
    case DataType::tf32:
      return "cutlass::tfloat32_t";
    case DataType::f16:
      return "cutlass::half_t";
    case DataType::bf16:
      return "cutlass::bfloat16_t";
    case DataType::s8:
      return "int8_t";
    case DataType::u8:
      return "uint8_t";
    case DataType::s32:
      return "int32_t";
    case DataType::e4m3:
      return "cutlass::float_e4m3_t";
    case DataType::e5m2:
      return "cutlass::float_e5m2_t";
  }
  unsupported("element type " + std::string(short_name(type)));
}

std::string cutlass_layout(Layout layout) {
  switch (layout) {
    case Layout::RowMajor:
      return "cutlass::layout::RowMajor";
    case Layout::ColumnMajor:
      return "cutlass::layout::ColumnMajor";
    case Layout::RowMajorInterleaved32:
      return "cutlass::layout::RowMajorInterleaved<32>";
    case Layout::ColumnMajorInterleaved32:
      return "cutlass::layout::ColumnMajorInterleaved<32>";
    case Layout::TensorNHWC:
      return "cutlass::layout::TensorNHWC";
    case Layout::TensorNDHWC:
      return "cutlass::layout::TensorNDHWC";
    case Layout::TensorNC32HW32:
      return "cutlass::layout::TensorNCxHWx<32>";
    case Layout::TensorC32RSK32:
      return "cutlass::layout::TensorCxRSKx<32>";
  }
  unsupported("layout " + std::string(to_string(layout)));
}

std::string cutlass_op_class(OpClass op_class) {
  return op_class == OpClass::Simt ? "cutlass::arch::OpClassSimt"
                                   : "cutlass::arch::OpClassTensorOp";
}

std::string cutlass_math_operator(MathOperation operation) {
  switch (operation) {
    case MathOperation::multiply_add:
      return "cutlass::arch::OpMultiplyAdd";
    case MathOperation::multiply_add_saturate:
      return "cutlass::arch::OpMultiplyAddSaturate";
    case MathOperation::multiply_add_fast_f32:
      return "cutlass::arch::OpMultiplyAddFastF32";
    case MathOperation::multiply_add_fast_f16:
      return "cutlass::arch::OpMultiplyAddFastF16";
    case MathOperation::multiply_add_fast_bf16:
      return "cutlass::arch::OpMultiplyAddFastBF16";
    case MathOperation::multiply_add_fast_accum:
      break;
  }
  unsupported("math operation");
}

std::string cutlass_gemm_shape(const std::array<int, 3>& shape) {
  return "cutlass::gemm::GemmShape<" + std::to_string(shape[0]) + ", " + std::to_string(shape[1]) +
         ", " + std::to_string(shape[2]) + ">";
}

std::string cutlass_activation(Activation activation) {
  const std::string ns = "cutlass::epilogue::thread::";
  switch (activation) {
    case Activation::identity:
      return "";
    case Activation::relu:
      return ns + "ReLu";
    case Activation::leaky_relu:
      return ns + "LeakyReLU";
    case Activation::tanh:
      return ns + "Tanh";
    case Activation::sigmoid:
      return ns + "Sigmoid";
    case Activation::silu:
      return ns + "SiLu";
    case Activation::hardswish:
      return ns + "HardSwish";
    case Activation::gelu:
      return ns + "GELU";
    case Activation::gelu_tanh:
      return ns + "GELU_taylor";
    case Activation::clamp:
      return ns + "Clamp";
  }
  unsupported("activation");
}

std::string cutlass_activation_functor(Activation activation) {
  return activation == Activation::identity ? "cutlass::epilogue::thread::Identity"
                                            : cutlass_activation(activation);
}

std::string cutlass_epilogue(const EpilogueFunctor& epilogue) {
  const std::string ns = "cutlass::epilogue::thread::";
  const std::string output = cutlass_element(epilogue.element_output);
  const std::string count = std::to_string(epilogue.elements_per_access);
  const std::string tail = output + ", " + count + ", " +
                           cutlass_element(epilogue.element_accumulator) + ", " +
                           cutlass_element(epilogue.element_epilogue) + ">";
  switch (epilogue.kind) {
    case EpilogueKind::LinearCombination:
      return ns + "LinearCombination<" + tail;
    case EpilogueKind::LinearCombinationClamp:
      return ns + "LinearCombinationClamp<" + tail;
    case EpilogueKind::FastLinearCombinationClamp:
      return ns + "FastLinearCombinationClamp<" + output + ", " + count + ">";
    case EpilogueKind::LinearCombinationGeneric:
      // LinearCombinationGeneric<Identity, ...> computes exactly LinearCombination.
      return ns + "LinearCombinationGeneric<" + cutlass_activation_functor(epilogue.activation) +
             ", " + tail;
  }
  unsupported("epilogue");
}

std::string cutlass_swizzle(Swizzle swizzle) {
  const std::string ns = "cutlass::gemm::threadblock::";
  switch (swizzle) {
    case Swizzle::IdentitySwizzle1:
    case Swizzle::IdentitySwizzle2:
    case Swizzle::IdentitySwizzle4:
    case Swizzle::IdentitySwizzle8:
      return ns + "GemmIdentityThreadblockSwizzle<" +
             std::to_string(identity_swizzle_size(swizzle)) + ">";
    case Swizzle::HorizontalSwizzle:
      // GemmHorizontalThreadblockSwizzle lacks the get_tile_offset(int log_tile) the universal
      // kernel calls; its split-K twin maps tiles identically (blockIdx.y -> M, blockIdx.x -> N,
      // blockIdx.z -> K partition or batch) and has it.
      return ns + "GemmSplitKHorizontalThreadblockSwizzle";
    case Swizzle::BatchedIdentitySwizzle:
      return ns + "GemmBatchedIdentityThreadblockSwizzle";
  }
  unsupported("swizzle");
}

}  // namespace tilecraft::emit
