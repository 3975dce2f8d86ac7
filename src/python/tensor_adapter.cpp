#include "tensor_adapter.hpp"

#include <algorithm>
#include <iterator>

#include "common.hpp"

namespace tilecraft::python {
namespace {

namespace dl = nb::dlpack;

// DLPack 1.1 type codes of the fp8 formats torch exports (float8_e4m3fn, float8_e5m2).
constexpr uint8_t kDLFloat8E4M3FN = 10;
constexpr uint8_t kDLFloat8E5M2 = 12;

// The DLPack dtypes tilecraft takes (one lane each) and their element types.
struct Element {
  uint8_t code, bits;
  DataType type;
};
constexpr uint8_t kInt = 0, kUInt = 1, kFloat = 2, kBfloat = 4;  // DLPack's type codes
constexpr Element kElements[] = {
    {kFloat, 64, DataType::f64},       {kFloat, 32, DataType::f32},
    {kFloat, 16, DataType::f16},       {kBfloat, 16, DataType::bf16},
    {kInt, 8, DataType::s8},           {kUInt, 8, DataType::u8},
    {kInt, 32, DataType::s32},         {kDLFloat8E4M3FN, 8, DataType::e4m3},
    {kDLFloat8E5M2, 8, DataType::e5m2}};

std::string dtype_text(const dl::dtype& t) {
  if (t.code == kDLFloat8E4M3FN) return "float8_e4m3fn";
  if (t.code == kDLFloat8E5M2) return "float8_e5m2";
  // DLPack's type codes 0 to 6 (3: an opaque handle).
  constexpr const char* kCodeNames[] = {"int", "uint", "float", "?", "bfloat", "complex", "bool"};
  return (t.code < std::size(kCodeNames) ? kCodeNames[t.code] : "?") + std::to_string(t.bits);
}

}  // namespace

TensorView to_tensor_view(const char* name, const nb::ndarray<>& array) {
  const dl::dtype t = array.dtype();
  const std::string who = name;
  TensorView view;
  if (t.lanes != 1) throw Error(Status::invalid(who + ": vector dtypes are not supported"));
  const Element* element =
      std::find_if(std::begin(kElements), std::end(kElements),
                   [&](const Element& e) { return e.code == t.code && e.bits == t.bits; });
  if (element == std::end(kElements)) {
    throw Error(Status::invalid(who + ": dtype " + dtype_text(t) +
                                " is not a GEMM element type (float64, float32, float16, "
                                "bfloat16, int8, uint8, int32, float8_e4m3fn, float8_e5m2)"));
  }
  view.dtype = element->type;
  const int rank = static_cast<int>(array.ndim());
  if (rank > TensorView::kMaxRank) {
    throw Error(Status::invalid(who + ": expected a tensor of rank 0 to " +
                                std::to_string(TensorView::kMaxRank) + ", got rank " +
                                std::to_string(rank)));
  }
  if (rank == 0) {  // a scalar tensor (a scale): one element
    view.rank = 1;
    view.shape[0] = 1;
    view.strides[0] = 1;
  }
  if (rank > 0) view.rank = rank;
  for (int i = 0; i < rank; ++i) {
    view.shape[i] = static_cast<int64_t>(array.shape(i));
    view.strides[i] = static_cast<int64_t>(array.stride(i));
  }
  view.data = array.data();
  switch (array.device_type()) {
    case nb::device::cuda::value:
      view.device = DeviceKind::kCuda;
      break;
    case nb::device::cpu::value:
      view.device = DeviceKind::kCpu;
      break;
    default:
      throw Error(Status::invalid(who +
                                  ": expected a CUDA device tensor or a host array, got "
                                  "DLPack device type " +
                                  std::to_string(array.device_type())));
  }
  view.device_id = static_cast<int>(array.device_id());
  return view;
}

ScaleArgument to_scale_argument(const std::string& name, nanobind::handle value) {
  ScaleArgument scale;
  if (value.is_none()) return scale;
  scale.given = true;
  const std::string expected = Arg<ScaleArgument>::expected();
  if (is_tensor_like(value)) {
    scale.tensor = to_tensor_view(name.c_str(), Arg<nb::ndarray<>>::from(name, value, expected));
  } else {
    scale.value = float_from(name, value, expected);  // bool, str, ...: TypeError
  }
  return scale;
}

std::vector<TensorView> to_tensor_views(const char* name,
                                        const std::vector<nanobind::ndarray<>>& arrays) {
  std::vector<TensorView> out;
  out.reserve(arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
    const std::string who = std::string(name) + "[" + std::to_string(i) + "]";
    out.push_back(to_tensor_view(who.c_str(), arrays[i]));
  }
  return out;
}

EpilogueOperands epilogue_operands_from(const char* name, nb::handle value) {
  EpilogueOperands out;
  if (value.is_none()) return out;
  if (!nb::isinstance<nb::dict>(value)) {
    wrong_type(name, "a dict of the epilogue graph's names to tensors and numbers", value);
  }
  for (auto [key, item] : nb::borrow<nb::dict>(value)) {
    if (!nb::isinstance<nb::str>(key)) {
      wrong_type(name, "str keys (the epilogue graph's names)", key);
    }
    const std::string operand = nb::cast<std::string>(key);
    const std::string label = std::string(name) + "[" + operand + "]";
    if (is_tensor_like(item)) {
      auto array = Arg<nb::ndarray<>>::from(label, item, "a tensor");
      out.tensors[operand] = to_tensor_view(("epilogue." + operand).c_str(), array);
    } else {
      out.scalars[operand] = float_from(label, item, "a tensor (torch, cupy, numpy) or a number");
    }
  }
  return out;
}

}  // namespace tilecraft::python
