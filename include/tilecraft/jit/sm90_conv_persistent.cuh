// Persistent SM90 convolutions: CUTLASS's implicit-GEMM conv mainloop (CollectiveConv: TMA im2col
// loads, wgmma) behind the interface of CUTLASS's persistent GEMM kernels (GemmUniversal on the
// cooperative and ping-pong schedules, on the persistent or the stream-K tile scheduler), which
// CUTLASS 4.2 does not build for convolutions. The kernel walks the implicit GEMM's (M, N, K, L)
// tiles; the mainloop keeps the convolution's own problem shape for its TMA descriptors.
//
// The GEMM kernel's K is the conv mainloop's k-tile count times the tile's K: for fprop and dgrad
// the conv mainloop walks K as (C / tile K, S, R) tiles, channel tiles fastest, so a tile never
// mixes filter taps; wgrad's K is the flat N * P * Q, and its N, (C, S, R), is tiled by a tile N
// that divides C (the adapter checks it), so the tile scheduler's flat N index is the filter
// gradient's column. On the stream-K scheduler, units of one tile split its k-tiles.
#pragma once

#include "cute/tensor.hpp"
#include "cutlass/conv/collective/collective_builder.hpp"
#include "cutlass/conv/convnd_problem_shape.hpp"
#include "cutlass/conv/dispatch_policy.hpp"
#include "cutlass/gemm/dispatch_policy.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/kernel/gemm_universal.hpp"

namespace tc_sm90_conv {

template <class ConvMainloop>
struct PersistentMainloop : ConvMainloop {
  using Base = ConvMainloop;
  // What the GEMM kernels read of a mainloop and the conv one lacks or spells otherwise.
  static constexpr int NumProducerThreadEvents = 1;
  using ConvProblemShape = typename Base::ProblemShape;
  // Rank 3, as the kernels' static checks want (the conv mainloop's own strides are used).
  using StrideA = decltype(cute::append(typename Base::StrideA{}, int64_t{}));
  using StrideB = decltype(cute::append(typename Base::StrideB{}, int64_t{}));
  // (N * P * Q, K, (C, S, R), _1) for fprop.
  using ConvShapeMNKL = decltype(Base::get_problem_shape_MNKL(ConvProblemShape{}));

  struct Arguments {
    typename Base::Arguments conv{};
    ConvProblemShape problem{};
  };
  struct Params : Base::Params {
    ConvShapeMNKL conv_mnkl{};
  };

  // The GEMM problem the kernel schedules for a convolution: M and N the implicit GEMM's sizes
  // (wgrad's N is (C, S, R), C fastest: the filter gradient's K rows of R * S * C), K the conv
  // mainloop's k-tiles times the tile's K, L = 1.
  static cute::Shape<int, int, int, int> gemm_problem_shape(const ConvProblemShape& problem) {
    const auto mnkl = Base::get_problem_shape_MNKL(problem);
    const auto k_tiles =
        cute::local_tile(cute::make_identity_tensor(cute::make_shape(1, cute::get<2>(mnkl))),
                         typename Base::TileShape{}, cute::make_coord(cute::_, cute::_, cute::_),
                         cute::Step<cute::_1, cute::Underscore, cute::_1>{});
    const int tile_k = int(cute::size<2>(typename Base::TileShape{}));
    return cute::make_shape(int(cute::size<0>(mnkl)), int(cute::size<1>(mnkl)),
                            int(cute::size<3>(k_tiles)) * tile_k, 1);
  }

  template <class ProblemShapeMNKL>
  static Params to_underlying_arguments(const ProblemShapeMNKL&, const Arguments& args,
                                        void* workspace) {
    Params params;
    static_cast<typename Base::Params&>(params) =
        Base::to_underlying_arguments(args.problem, args.conv, workspace);
    params.conv_mnkl = Base::get_problem_shape_MNKL(args.problem);
    return params;
  }

  template <class ProblemShapeMNKL>
  static bool can_implement(const ProblemShapeMNKL& shape, const Arguments& args) {
    const auto gemm = gemm_problem_shape(args.problem);
    return cute::get<0>(shape) == cute::get<0>(gemm) && cute::get<1>(shape) == cute::get<1>(gemm) &&
           cute::get<2>(shape) == cute::get<2>(gemm) && cute::get<3>(shape) == 1 &&
           Base::can_implement(args.problem, args.conv);
  }

  // The kernels read three things of load_init's tensors: the shapes of A's m and k tile modes
  // and of B's n and l tile modes. They name a tile (m, n) in those shapes and hand the same
  // coordinate to the epilogue, which writes a flat row-major N. So the kernel sees B's tiles
  // through a shape-only view with a flat n mode and a unit l mode; the conv mainloop's own
  // tensors follow, and load() maps n back onto B's tile modes (wgrad's (C tiles, S, R)).
  template <class ProblemShapeMNKL>
  CUTLASS_DEVICE auto load_init(const ProblemShapeMNKL&, const Params& params) {
    auto tensors = Base::load_init(params.conv_mnkl, params);
    const auto& b = cute::get<1>(tensors);
    auto b_tiles = cute::make_identity_tensor(cute::make_shape(
        cute::size<0>(b), cute::size<1>(b), int(cute::size<2>(b)), cute::shape<3>(b), cute::_1{}));
    return cute::make_tuple(cute::get<0>(tensors), b_tiles, b);
  }

  template <class TensorA, class TensorBTiles, class TensorB, class KTileIterator, class BlockCoord>
  CUTLASS_DEVICE void load(const Params& params, typename Base::MainloopPipeline pipeline,
                           typename Base::PipelineState state,
                           const cute::tuple<TensorA, TensorBTiles, TensorB>& tensors,
                           const BlockCoord& block, KTileIterator k_tile_iter, int k_tile_count,
                           int thread_idx, uint32_t block_rank_in_cluster,
                           typename Base::TensorStorage& shared_tensors) {
    const auto& a = cute::get<0>(tensors);
    const auto& b = cute::get<2>(tensors);
    const auto n = cute::idx2crd(cute::get<1>(block), cute::shape<2>(b));
    const auto tile =
        cute::make_coord(cute::get<0>(block), n, cute::get<2>(block), cute::get<3>(block));
    // The kernel's k-tile iterator holds a reference to the shape it was made from, a temporary
    // there (harmless for a GEMM's flat K; the conv K is (C tiles, S, R) and its carries read
    // the shape): the iterator walks on from the kernel's coordinate over a shape held here.
    const auto k_tiles = cute::shape<3>(a);
    auto k_tile = cute::make_coord_iterator(*k_tile_iter, k_tiles);
    Base::load(params, pipeline, state, cute::make_tuple(a, b), tile, k_tile, k_tile_count,
               thread_idx, block_rank_in_cluster, shared_tensors);
  }
};

// The persistent mainloop of the conv mainloop Builder (a conv CollectiveBuilder, whose tiled
// MMA, shared-memory layouts, copies and stage count it takes) on a GEMM kernel schedule.
template <class Builder, cutlass::conv::Operator kOp, class ClusterShape, class GemmSchedule,
          class TileShape, class ElementA, class ElementB>
using PersistentMainloopOf = PersistentMainloop<cutlass::conv::collective::CollectiveConv<
    cutlass::conv::MainloopSm90TmaGmmaWarpSpecializedImplicitGemm<
        kOp, Builder::PipelineStages, Builder::NumSpatialDimensions, ClusterShape, GemmSchedule>,
    TileShape, ElementA, ElementB, typename Builder::TiledMma,
    cutlass::conv::collective::detail::Sm90ImplicitGemmTileTraits<typename Builder::GmemTiledCopyA,
                                                                  typename Builder::SmemLayoutA>,
    cutlass::conv::collective::detail::Sm90ImplicitGemmTileTraits<typename Builder::GmemTiledCopyB,
                                                                  typename Builder::SmemLayoutB>>>;

}  // namespace tc_sm90_conv
