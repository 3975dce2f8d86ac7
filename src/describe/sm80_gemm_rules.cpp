// CUTLASS's SM80 multistage tensor-op mainloop (gemm/threadblock/default_mma_core_sm80.h) copies
// each operand's threadblock tile to shared memory in 128-bit vectors, the 32 threads of a warp
// arranged along the tile's contiguous dimension as its layout says, the warps raked over the
// tile (transform/pitch_linear_thread_map.h, PitchLinearWarpRakedThreadMap). Its static_asserts
// refuse tiles and warp counts that do not divide that copy evenly, and its shared-memory layout
// for an M- or N-major operand ("congruous") exists only for whole 128-byte rows. These are
// those rules, stated before anything is compiled (the randomized test of the description layer
// found tiles that passed every other rule and did not compile).
#include "describe/sm80_gemm_rules.hpp"

#include <algorithm>
#include <string>
#include <string_view>
#include <tuple>

#include "describe/checks.hpp"

namespace tilecraft {
namespace {

constexpr int kWarpSize = 32;
constexpr int kAccessBits = 128;
// The global-memory iterator keeps one predicate per access a thread makes, in at most four
// 32-bit words of 16 predicates each (predicated_tile_access_iterator.h).
constexpr int kMaxPredicates = 64;

std::string too_many_predicates(int accesses) {
  return "each thread would make " + std::to_string(accesses) +
         " global-memory accesses per K-tile, more than the " + std::to_string(kMaxPredicates) +
         " predicates CUTLASS's iterator holds: use more warps, a smaller tile or a wider "
         "alignment";
}

// "tile_description: threadblock_shape [..] with warp_count [..] (N threads): ", what a refusal
// of the tile's operand loads starts with.
std::string tile_text(const GemmDescription& d) {
  return "tile_description: threadblock_shape " + describe::triple_text(d.tile.threadblock_shape) +
         " with warp_count " + describe::triple_text(d.tile.warp_count) + " (" +
         std::to_string(static_cast<int>(d.tile.threads())) + " threads): ";
}

struct OperandLoad {
  const char* which;  // "A" or "B"
  const char* mn;     // "M" or "N"
  int mn_extent;      // the threadblock tile's M (A) or N (B)
  int k_extent;       // its K
  bool k_major;       // RowMajor A, ColumnMajor B: K is contiguous
  const TensorDescription* operand;
};

std::string why_not(const OperandLoad& load, int threads) {
  const int bits = size_in_bits(load.operand->element);
  const int per_access = kAccessBits / bits;  // elements in a 128-bit vector
  // The tile as the copy sees it: contiguous x strided.
  const int contiguous = load.k_major ? load.k_extent : load.mn_extent;
  const int strided = load.k_major ? load.mn_extent : load.k_extent;
  const std::string tile = std::string("its ") + (load.k_major ? "K x " : "") + load.mn +
                           (load.k_major ? "" : " x K") + " tile " + std::to_string(contiguous) +
                           " x " + std::to_string(strided);
  if (!load.k_major) {
    // The shared-memory layout of an M- or N-major operand ("congruous") is laid out in rows
    // of min(128 bytes, the extent); CUTLASS's warp iterators read rows of 128 bytes, and for
    // 16-bit types also of 32 or 16 elements (mma_tensor_op_tile_iterator.h).
    const int row = 8 * per_access;  // 128 bytes
    const int crosswise = std::min(row, load.mn_extent);
    const bool narrow_ok = bits == 16 && (crosswise == 32 || crosswise == 16);
    if ((crosswise != row && !narrow_ok) || load.mn_extent % crosswise != 0) {
      return std::string(load.mn) + " " + std::to_string(load.mn_extent) + " must be " +
             (bits == 16 ? "16, 32 or " : "") + "a multiple of " + std::to_string(row) +
             " (128 bytes of " + spelled(load.operand->element) + ") for a " +
             std::string(to_string(load.operand->layout)) + " " + load.which;
    }
  }
  if (contiguous % per_access != 0) {
    return tile + " is not a whole number of 128-bit vectors along its contiguous dimension";
  }
  const int vectors = contiguous / per_access;
  // Threads of a warp along the contiguous dimension, and along the strided one.
  const int along = load.k_major ? vectors : std::min(vectors, 8);
  if (along < 1 || kWarpSize % along != 0) {
    return tile + " is " + std::to_string(vectors) +
           " vectors wide; a warp's 32 threads must split evenly along it (1, 2, 4, 8, 16 or 32 "
           "vectors)";
  }
  const int across = kWarpSize / along;
  if (vectors % along != 0 || strided % across != 0) {
    return tile + " does not divide into the warp's " + std::to_string(along) + " x " +
           std::to_string(across) + " arrangement of threads";
  }
  const int warps = threads / kWarpSize;
  const int rows = strided / across, columns = vectors / along;  // warp-sized accesses
  const int warps_strided = std::min(rows, warps);
  const int warps_contiguous = warps > rows ? warps / warps_strided : 1;
  if (warps_strided * warps_contiguous != warps || rows % warps_strided != 0 ||
      columns % warps_contiguous != 0) {
    return tile + " makes " + std::to_string(rows * columns) + " warp-sized 128-bit copies (" +
           std::to_string(columns) + " x " + std::to_string(rows) + "), which " +
           std::to_string(warps) + " warps cannot share evenly";
  }
  // Each 128-bit vector is read from global memory in accesses of the operand's alignment.
  const int iterations = (columns / warps_contiguous) * (rows / warps_strided);
  const int accesses = iterations * (per_access / std::max(1, load.operand->alignment));
  if (accesses > kMaxPredicates) return tile + ": " + too_many_predicates(accesses);
  return "";
}

// The SIMT mainloop copies each operand element by element, its threads strip-mined along the
// contiguous dimension (PitchLinearStripminedThreadMap), and pads the shared-memory tiles of
// most layouts by K / 32 elements, which must be a whole number of each thread's lanes.
Status validate_sm80_simt_loads(const GemmDescription& d) {
  const MathInstruction& math = d.tile.math_instruction;
  if (size_in_bits(math.element_a) == 16 && math.element_accumulator == DataType::f32) {
    return Status::unsupported(
        "tile_description: CUTLASS's SIMT kernels take float32, float64 or float16 -> float16; " +
        spelled(math.element_a) +
        " operands with a float32 accumulator on CUDA cores are tilecraft's direct convolution "
        "(a Conv2dOperation with iterator_algorithm direct), or a TensorOp instruction");
  }
  const auto& shape = d.tile.threadblock_shape;
  const int threads = static_cast<int>(d.tile.threads());
  for (const auto& [which, contiguous, what] :
       {std::tuple{"A", d.A.layout == Layout::RowMajor ? shape[2] : shape[0],
                   d.A.layout == Layout::RowMajor ? "K" : "M"},
        std::tuple{"B", d.B.layout == Layout::ColumnMajor ? shape[2] : shape[1],
                   d.B.layout == Layout::ColumnMajor ? "K" : "N"}}) {
    const bool fits = threads < contiguous ? contiguous % threads == 0 : threads % contiguous == 0;
    // One element per access: the operand's M x K (or K x N) elements over the threads.
    const int mn = std::string_view(which) == "A" ? shape[0] : shape[1];
    const int64_t accesses = int64_t{mn} * shape[2] / threads;
    if (fits && accesses > kMaxPredicates) {
      return Status::invalid(tile_text(d) + "in CUTLASS's SM80 SIMT mainloop, to copy " + which +
                             ", " + too_many_predicates(static_cast<int>(accesses)));
    }
    if (!fits) {
      return Status::invalid(tile_text(d) + "CUTLASS's SM80 SIMT mainloop strip-mines " + which +
                             "'s contiguous " + what + " " + std::to_string(contiguous) +
                             " over the threads, which must divide it or be a multiple of it");
    }
  }
  const auto warp = d.tile.warp_shape();
  const int lane_m = std::min(128 / size_in_bits(d.A.element), warp[0] / 4);
  const int lane_n = std::min(128 / size_in_bits(d.B.element), warp[1] / 8);
  const int padding = shape[2] / 32;
  const bool padded = !(d.A.layout == Layout::ColumnMajor && d.B.layout == Layout::RowMajor);
  if (padded && (padding % lane_m != 0 || padding % lane_n != 0)) {
    return Status::invalid(
        "tile_description: threadblock_shape " + describe::triple_text(shape) +
        ": CUTLASS's SM80 SIMT mainloop pads shared memory by K / 32 = " + std::to_string(padding) +
        " elements, which must be a multiple of the threads' lanes (" + std::to_string(lane_m) +
        " x " + std::to_string(lane_n) + "): use K of 8 or 16");
  }
  return Status::ok();
}

}  // namespace

Status validate_sm80_operand_loads(const GemmDescription& d) {
  const MathInstruction& math = d.tile.math_instruction;
  if (math.opcode_class == OpClass::Simt) return validate_sm80_simt_loads(d);
  // The rules of DefaultMmaCore's 8-, 16- and 32-bit tensor-op specializations; f64 (DMMA) and
  // the interleaved int8 layouts have their own.
  if (size_in_bits(math.element_a) == 64 || is_interleaved(d.A.layout)) return Status::ok();
  const auto& shape = d.tile.threadblock_shape;
  const int threads = static_cast<int>(d.tile.threads());
  for (const OperandLoad& load :
       {OperandLoad{"A", "M", shape[0], shape[2], d.A.layout == Layout::RowMajor, &d.A},
        OperandLoad{"B", "N", shape[1], shape[2], d.B.layout == Layout::ColumnMajor, &d.B}}) {
    const std::string problem = why_not(load, threads);
    if (!problem.empty()) {
      return Status::invalid(tile_text(d) + "CUTLASS's SM80 mainloop copies " + load.which + " (" +
                             std::string(to_string(load.operand->layout)) + " " +
                             spelled(load.operand->element) +
                             ") to shared memory in 128-bit vectors, and " + problem +
                             ": use another tile or warp count (CUTLASS's generator tiles, e.g. "
                             "[128, 128, 32] with [2, 2, 1], always fit)");
    }
  }
  return Status::ok();
}

}  // namespace tilecraft
