#include "tilecraft/runtime/index_limits.hpp"

#include <string>

namespace tilecraft::detail {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

std::string problem_text(int64_t problem) {
  return problem < 0 ? std::string() : "[" + std::to_string(problem) + "]";
}

// SM80 (2.x) kernels with a column-major output run the transposed problem: the tile's M covers
// the problem's N.
bool runs_transposed(const GemmDescription& d) {
  return d.arch == 80 && !d.is_conv() && d.C.layout == Layout::ColumnMajor;
}

// The tile extent that covers the problem's dimension `dim` (0: M, 1: N, 2: K).
int64_t tile_along(const GemmDescription& d, int dim) {
  const auto& tile = d.tile.threadblock_shape;
  if (dim < 2 && runs_transposed(d)) return tile[1 - dim];
  return tile[dim];
}

Status check_padded(const GemmDescription& d, const NamedExtent& e, int dim) {
  if (e.value > kMaxIndex32) {
    return Status::invalid(e.label() + " = " + std::to_string(e.value) +
                           " exceeds the kernel's 32-bit index (at most " +
                           std::to_string(kMaxIndex32) + ")");
  }
  const int64_t tile = tile_along(d, dim);
  if (e.value <= 0 || tile <= 0) return Status::ok();
  const int64_t padded = ceil_div(e.value, tile) * tile;  // both below 2^31: no overflow
  if (padded <= kMaxIndex32) return Status::ok();
  return Status::invalid(
      e.label() + " = " + std::to_string(e.value) + ", rounded up to whole tiles of " +
      std::to_string(tile) + " (the kernel's tile along it), is " + std::to_string(padded) +
      ": beyond the kernel's 32-bit index (at most " + std::to_string(kMaxIndex32) + ")");
}

// The width CUTLASS's GemmIdentityThreadblockSwizzle<N>::get_log_tile picks for `tiles_n`.
int64_t swizzle_width(Swizzle swizzle, int64_t tiles_n) {
  const int n = identity_swizzle_size(swizzle);
  if (n >= 8 && tiles_n >= 6) return 8;
  if (n >= 4 && tiles_n >= 3) return 4;
  if (n >= 2 && tiles_n >= 2) return 2;
  return 1;
}

// CUDA's grid limits for an SM80 (2.x) GEMM or convolution, computed as its swizzle does.
Status check_sm80_grid(const GemmDescription& d, const IndexedProblem& p) {
  const bool transposed = runs_transposed(d);
  const NamedExtent& rows = p.mnk[transposed ? 1 : 0];
  const NamedExtent& columns = p.mnk[transposed ? 0 : 1];
  const int64_t tiles_m = ceil_div(rows.value, d.tile.threadblock_shape[0]);
  const int64_t tiles_n = ceil_div(columns.value, d.tile.threadblock_shape[1]);
  const bool horizontal = d.swizzle == Swizzle::HorizontalSwizzle;
  int64_t width = 1;
  if (!horizontal && d.swizzle != Swizzle::BatchedIdentitySwizzle) {
    width = swizzle_width(d.swizzle, tiles_n);
  }
  const int64_t grid_y = horizontal ? tiles_m : ceil_div(tiles_n, width);
  if (grid_y > kMaxGridYZ) {
    const NamedExtent& along = horizontal ? rows : columns;
    const int tile = d.tile.threadblock_shape[horizontal ? 0 : 1];
    const std::string how = horizontal  ? " (HorizontalSwizzle puts the tiles of M in y)"
                            : width > 1 ? " (" + std::string(to_string(d.swizzle)) + " folds " +
                                              std::to_string(width) + " into x)"
                                        : "";
    return Status::invalid(
        along.label() + " = " + std::to_string(along.value) + " makes " +
        std::to_string(horizontal ? tiles_m : tiles_n) + " tiles of " + std::to_string(tile) + how +
        ", a grid of " + std::to_string(grid_y) +
        " threadblocks in y: the kernel's launch takes at most " + std::to_string(kMaxGridYZ) +
        (transposed ? " (a column-major output runs the transposed problem)" : ""));
  }
  if (p.grid_z.value > kMaxGridYZ) {
    return Status::invalid(
        p.grid_z.label() + " = " + std::to_string(p.grid_z.value) +
        " makes a grid of that many threadblocks in z: the kernel's launch takes at most " +
        std::to_string(kMaxGridYZ));
  }
  return Status::ok();
}

}  // namespace

std::string NamedExtent::label() const {
  return std::string(tensor) + problem_text(problem) +
         (what.empty() ? std::string() : ": " + std::string(what)) +
         (dimension >= 0 ? " (extent of dimension " + std::to_string(dimension) + ")" : "");
}

std::string NamedStride::label() const {
  return std::string(prefix) + std::string(tensor) + problem_text(problem) + ": " +
         (dimension >= 0    ? "stride of dimension " + std::to_string(dimension)
          : dimension == -1 ? std::string("leading dimension")
                            : std::string("batch stride"));
}

void NamedStrides::add(const NamedStride& s) {
  if (count_ < static_cast<int>(fixed_.size())) {
    fixed_[count_++] = s;
  } else {
    more_.push_back(s);
  }
}

void NamedStrides::add_widest(std::string_view prefix, std::string_view tensor, const TensorView& t,
                              int64_t problem) {
  int widest = -1;
  for (int i = 0; i < t.rank && i < TensorView::kMaxRank; ++i) {
    if (t.shape[i] > 1 && (widest < 0 || t.strides[i] > t.strides[widest])) widest = i;
  }
  if (widest >= 0) {
    add({t.strides[widest], storage_bytes(t.dtype), prefix, tensor, widest, problem});
  }
}

Status check_tma_strides(const NamedStrides& strides) {
  Status status;
  strides.for_each([&](const NamedStride& s) {
    if (!status) return;
    const auto bytes = checked_mul(s.elements, s.element_bytes);
    if (bytes && *bytes < kTmaStrideBytes) return;
    status = Status::invalid(s.label() + " is " + std::to_string(s.elements) + " elements of " +
                             std::to_string(s.element_bytes) + " bytes" +
                             (bytes ? " (" + std::to_string(*bytes) + " bytes)" : "") +
                             ": SM90 kernels read operands through TMA descriptors, whose strides "
                             "are below 2^40 bytes (1 TiB)");
  });
  return status;
}

Status check_kernel_indexes(const GemmDescription& d, const IndexedProblem& p) {
  for (int dim = 0; dim < 3; ++dim) TILECRAFT_RETURN_IF_ERROR(check_padded(d, p.mnk[dim], dim));
  if (d.arch == 80 && !d.is_grouped()) TILECRAFT_RETURN_IF_ERROR(check_sm80_grid(d, p));
  if (d.arch == 90) TILECRAFT_RETURN_IF_ERROR(check_tma_strides(p.strides));
  return Status::ok();
}

std::array<int64_t, 3> implicit_gemm_mnk(ConvKind kind, const Conv2dProblemSize& p) {
  // D = T = Z = 1 for a 2-D convolution.
  const int64_t npq = saturating_product({p.n, p.z, p.p, p.q}),
                nhw = saturating_product({p.n, p.d, p.h, p.w});
  // A grouped convolution reduces over one group's channels.
  const int groups = p.groups > 0 ? p.groups : 1;
  const int64_t crs = saturating_product({p.c / groups, p.t, p.r, p.s});
  const int64_t krs = saturating_product({p.k / groups, p.t, p.r, p.s});
  switch (kind) {
    case ConvKind::Fprop:
      return {npq, p.k, crs};
    case ConvKind::Dgrad:
      return {nhw, p.c, krs};
    case ConvKind::Wgrad:
      break;
  }
  return {p.k, crs, npq};
}

IndexedProblem conv_indexing(ConvKind kind, const Conv2dProblemSize& p, std::string_view x,
                             std::string_view w, std::string_view y) {
  const auto mnk = implicit_gemm_mnk(kind, p);
  const bool three_d = p.is_3d();
  const std::string_view npq =
      three_d ? "the implicit GEMM's M (N*Z*P*Q)" : "the implicit GEMM's M (N*P*Q)";
  const std::string_view nhw =
      three_d ? "the implicit GEMM's M (N*D*H*W)" : "the implicit GEMM's M (N*H*W)";
  const std::string_view crs_k =
      three_d ? "the implicit GEMM's K (C*T*R*S)" : "the implicit GEMM's K (C*R*S)";
  const std::string_view krs_k =
      three_d ? "the implicit GEMM's K (K*T*R*S)" : "the implicit GEMM's K (K*R*S)";
  const std::string_view crs_n =
      three_d ? "the implicit GEMM's N (C*T*R*S)" : "the implicit GEMM's N (C*R*S)";
  const std::string_view npq_k =
      three_d ? "the implicit GEMM's K (N*Z*P*Q)" : "the implicit GEMM's K (N*P*Q)";
  IndexedProblem out;
  switch (kind) {
    case ConvKind::Fprop:
      out.mnk = {{{mnk[0], y, npq}, {mnk[1], w, "the implicit GEMM's N (K)"}, {mnk[2], w, crs_k}}};
      break;
    case ConvKind::Dgrad:
      out.mnk = {{{mnk[0], x, nhw}, {mnk[1], w, "the implicit GEMM's N (C)"}, {mnk[2], w, krs_k}}};
      break;
    case ConvKind::Wgrad:
      out.mnk = {
          {{mnk[0], w, "the implicit GEMM's M (K)"}, {mnk[1], w, crs_n}, {mnk[2], y, npq_k}}};
      break;
  }
  out.grid_z = {p.split_k_slices, "split_k_slices", "", -1, -1};
  return out;
}

Status check_grouped_indexes(const GemmDescription& d, const GroupedIndexing& g) {
  const bool transposed = runs_transposed(d);
  const int64_t cluster_m = d.arch == 90 ? d.tile.cluster_shape[0] : 1;
  const int64_t cluster_n = d.arch == 90 ? d.tile.cluster_shape[1] : 1;
  int64_t tiles = 0;
  for (size_t i = 0; i < g.problems.size(); ++i) {
    const GemmCoord& s = g.problems[i];
    const auto problem = static_cast<int64_t>(i);
    TILECRAFT_RETURN_IF_ERROR(check_padded(d, {s.m, g.names[0], "M", -1, problem}, 0));
    TILECRAFT_RETURN_IF_ERROR(check_padded(d, {s.n, g.names[1], "N", -1, problem}, 1));
    TILECRAFT_RETURN_IF_ERROR(check_padded(d, {s.k, g.names[0], "K", -1, problem}, 2));
    if (s.m == 0 || s.n == 0) continue;  // an empty problem has no tiles
    const int64_t rows = transposed ? s.n : s.m, columns = transposed ? s.m : s.n;
    const int64_t along_m = ceil_div(ceil_div(rows, d.tile.threadblock_shape[0]), cluster_m);
    const int64_t along_n = ceil_div(ceil_div(columns, d.tile.threadblock_shape[1]), cluster_n);
    // Each factor is below 2^31 and the sum so far below 2^31: no overflow.
    tiles += along_m * cluster_m * along_n * cluster_n;
    if (tiles > kMaxIndex32) {
      return Status::invalid(
          std::string(g.names[2]) + problem_text(problem) + ": problems 0 to " + std::to_string(i) +
          " have " + std::to_string(tiles) + " output tiles of " +
          std::to_string(d.tile.threadblock_shape[0]) + "x" +
          std::to_string(d.tile.threadblock_shape[1]) +
          (d.arch == 90 ? " (in whole clusters)" : "") +
          ": the grouped kernel numbers its tiles with a 32-bit index (at most " +
          std::to_string(kMaxIndex32) + ")");
    }
  }
  if (d.arch == 90) TILECRAFT_RETURN_IF_ERROR(check_tma_strides(g.strides));
  return Status::ok();
}

}  // namespace tilecraft::detail
