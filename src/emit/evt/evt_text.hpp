// Text of custom epilogues (epilogue graphs) in generated modules: the elementwise functions, the
// visitor tree's type and the function that fills its arguments from tc_gemm_args.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "emit/evt/evt_tree.hpp"
#include "tilecraft/describe/gemm_operation.hpp"

namespace tilecraft::emit {

// Spellings both visitor families share: the rounding of every conversion, and the strides over
// (M, N, L) of one value per row (M values) and one per column (N values).
inline constexpr std::string_view kEvtRound = "cutlass::FloatRoundStyle::round_to_nearest";
inline constexpr std::string_view kEvtRowVector = "cute::Stride<cute::_1, cute::_0, int64_t>";
inline constexpr std::string_view kEvtColumnVector = "cute::Stride<cute::_0, cute::_1, int64_t>";

// The tc_evt function computing a value node of the graph (an elementwise node; loads have
// none), e.g. "tc_evt::Add"; with fast_math, an activation's approximate form ("tc_evt::TanhFast").
std::string evt_compute_function(const EpilogueNode& node, bool fast_math);
// A number as a C++ float expression (infinities and NaN included).
std::string evt_float_literal(double value);
// The identity element of a reduction ("0.0f", "-std::numeric_limits<float>::infinity()").
std::string evt_reduction_identity(ReduceOp op);

// The visitor type of one lowered node, without its children (given the node's index), and its
// braced arguments, without its children's.
using EvtNodeType = std::function<std::string(const EvtNode&, int)>;
using EvtNodeArguments = std::function<std::string(const EvtNode&)>;
// A family's composing templates: the tree visitor ("...::Sm90EVT") and the topological one
// ("...::Sm90TopologicalVisitor").
struct EvtVisitorTemplates {
  std::string_view tree;
  std::string_view topological;
};

// "using Evt<i> = ...;" for every lowered node, then "using <result> = ...;": the tree's root, or
// the topological visitor of every node with its edges.
std::string evt_types_text(const EvtVisitors& visitors, const EvtNodeType& node_type,
                           const EvtVisitorTemplates& templates, std::string_view result);
// "using FusionArguments = <arguments_type>;" and fill_fusion(FusionArguments& f, const
// <block>& a) (the family's argument block: tc_gemm_args, tc_conv_args), setting f to the braced
// arguments of the composed visitor: in the tree form each node's children's arguments, then its
// own, as Sm90EVT and Sm80EVT nest them; in the topological form one member per operation, in
// order.
std::string evt_fill_fusion_text(std::string_view arguments_type, std::string_view block,
                                 const EvtVisitors& visitors, const EvtNodeArguments& arguments);

// SM90: the graph node the collective epilogue reads as its source C (Sm90SrcFetch): the first
// full (M, N) input of D's element type. Its TMA loads land in the epilogue's C buffers, which
// the epilogue reuses for D, where an Sm90AuxLoad takes shared memory of its own from the
// mainloop's stages. -1 where the graph has no such input (the kernel then has no source C).
int sm90_evt_source_c(const GemmDescription& description);
// Its index among the graph's operand tensors (tc_args_header.epilogue_tensors), or -1.
int sm90_evt_source_c_operand(const GemmDescription& description);
// SM90 (CUTLASS 3.x collective epilogue): inside namespace tc_entry_<i>, after ElementD,
// ElementC (sm90_evt_source_c's element, or void), ElementCompute, LayoutC, TileShape and the
// epilogue schedule are known: "using FusionOp = ...;" with what it needs, given `schedule`
// (the epilogue schedule type).
std::string sm90_evt_types_text(const GemmDescription& description, const std::string& schedule);
// "using FusionArguments = ...; inline void fill_fusion(FusionArguments&, const tc_gemm_args&)".
std::string sm90_evt_fill_text(const GemmDescription& description);

// SM80 (CUTLASS 2.x epilogue visitor, cutlass::epilogue::threadblock): the epilogue's
// software pipeline stages (OutputTileThreadLayout and DefaultGemmWithVisitor agree on them).
inline constexpr int kSm80EvtEpilogueStages = 1;
// Whether the kernel computes the transposed problem (D^T = B^T A^T, row-major N x M): for a
// column-major D, as the 2.x visitors store rows.
bool sm80_evt_transposed(const GemmDescription& description);
// Inside namespace tc_entry_<i>, after ElementD and ElementCompute are known:
// "using OutputTileThreadMap = ...;", the graph's visitors and "using FusionCallbacks = ...;".
// The root stores D (a.D, a.ldd, a.batch_stride_D): in 2.x the visitors write D themselves.
std::string sm80_evt_types_text(const GemmDescription& description);
// Host half, after FusionCallbacks: "constexpr tc_gemm::VisitorTraits kTraits{...};" (the
// graph's operand counts and its reductions' outputs, which the adapter resets before each
// launch), "using FusionArguments = ...; inline void fill_fusion(FusionArguments&, const
// tc_gemm_args&)".
std::string sm80_evt_fill_text(const GemmDescription& description);
}  // namespace tilecraft::emit
