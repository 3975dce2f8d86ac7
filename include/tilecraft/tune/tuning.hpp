// Measured picks (issue 12): a problem's signature, the persistent tuning cache that maps it to
// the kernel measured fastest on a device model, and the autotuner that measures.
//
// A signature is everything that decides which kernels can run a GEMM and how fast they are:
// operand types, layouts and alignments, the epilogue, batch, the device model, and the shape
// in buckets (four per octave of each extent), so that nearby shapes share one entry.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tilecraft/compile/compiler.hpp"
#include "tilecraft/core/status.hpp"
#include "tilecraft/discover/api.hpp"
#include "tilecraft/discover/conv_api.hpp"
#include "tilecraft/discover/grouped_api.hpp"

namespace tilecraft::tune {

// automatic: a tuned winner when stored; otherwise a kernel already compiled for the problem's
//   family serves at once (or the ranked first pick is compiled) while the candidates tune in
//   the background, and the winner takes over once stored.
// blocking: a signature without a stored winner is tuned before the call returns.
// off: the ranked first pick; nothing is timed or stored.
// force: tuned again before the call returns, replacing the stored winner.
enum class TuningMode { automatic, blocking, off, force };

struct TuningOptions {
  TuningMode mode = TuningMode::automatic;
  int max_candidates = 6;  // the top-ranked kernels that compile and run, >= 1
  double max_seconds = 0;  // wall-clock budget of one tuning run; 0: none
  int repeats = 25;        // timed launches per candidate (the median is kept)
  // Which kernels may serve f32 operands: tf32 tensor-core kernels (true), or only kernels that
  // multiply in full f32 (false). Part of the signature.
  bool allow_tf32 = true;
};

// Whether `kernel` may serve under `options` (allow_tf32).
bool admits(const TuningOptions& options, const api::KernelMetadata& kernel);

std::string_view to_string(TuningMode mode);
// "auto" | "automatic" | "blocking" | "off" | "force"; the error names `argument`.
Result<TuningMode> parse_tuning_mode(std::string_view text, std::string_view argument);
// TILECRAFT_TUNING (a mode), TILECRAFT_TUNING_CANDIDATES, TILECRAFT_TUNING_SECONDS; defaults for
// what is unset. An error names the variable, what it expects and what it holds.
Result<TuningOptions> tuning_options_from_environment();
Status validate(const TuningOptions& options);

// The bucket an extent falls in: the smallest of 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 20,
// ... (four steps per octave) that is >= extent.
int64_t shape_bucket(int64_t extent);

struct ProblemSignature {
  std::string device_model;         // "NVIDIA H100 80GB HBM3"
  std::string family;               // operands, layouts, alignments, epilogue, batched or not
  std::array<int64_t, 4> bucket{};  // M, N, K, L
  std::string text() const;         // family and buckets: what the cache file records
  std::string key() const;          // SHA-256 of the device model and text
};

// The signature of arguments on the device their tensors live on; allow_tf32 matters for f32
// operands only.
Result<ProblemSignature> signature_of(const api::GemmArguments& args, bool allow_tf32 = true);
// fn(args) with the arguments' own family (GemmArguments, GroupedGemmArguments, Conv2dArguments),
// or otherwise(): arguments of another kind. fn returns the same type for every family.
template <typename Fn, typename Otherwise>
auto visit_family(const api::KernelArguments& args, Fn&& fn, Otherwise&& otherwise) {
  if (auto* gemm = dynamic_cast<const api::GemmArguments*>(&args)) return fn(*gemm);
  if (auto* grouped = dynamic_cast<const api::GroupedGemmArguments*>(&args)) return fn(*grouped);
  if (auto* conv = dynamic_cast<const api::Conv2dArguments*>(&args)) return fn(*conv);
  return otherwise();
}

// Grouped GEMM: operands, layouts, alignments and epilogue; the rows per group in buckets (their
// mean as M, their largest, and the share of empty groups), N, K and the group count. Problems
// whose N and K differ name each distinct (N, K) bucket.
Result<ProblemSignature> signature_of(const api::GroupedGemmArguments& args,
                                      bool allow_tf32 = true);
// Convolution: the kind, operands, alignments and epilogue, and the layer (channels, image,
// filter, stride, padding, dilation, groups) exactly; the batch in buckets.
Result<ProblemSignature> signature_of(const api::Conv2dArguments& args, bool allow_tf32 = true);

// How one candidate fared.
enum class Outcome { measured, compile_failed, run_failed, verify_failed, timed_out, skipped };
std::string_view to_string(Outcome outcome);

struct CandidateResult {
  std::string kernel_name;
  Outcome outcome = Outcome::skipped;
  double median_us = 0;
  double tflops = 0;
  int repeats = 0;
  std::string reason;  // why not measured; empty when measured
};

// A stored winner.
struct TunedChoice {
  std::string kernel_name;
  double median_us = 0;
  double tflops = 0;
  std::array<int64_t, 4> shape{};  // the M, N, K, L it was measured on
  std::string clocks;              // the SM and memory clocks seen while timing
  int64_t tuned_at = 0;            // seconds since the epoch
  std::vector<CandidateResult> candidates;
};

struct TuningReport {
  ProblemSignature signature;
  std::vector<CandidateResult> candidates;  // ranked order
  std::optional<size_t> winner;             // index into candidates
  std::string clocks;
  double seconds = 0;
  bool stored = false;  // written to the tuning cache
};

// ---- the tuning cache: <cache dir>/tuning/v1/<device model>/<signature key>.txt --------------

// The stored winner of a signature, or nullopt (none stored, or an entry that does not verify:
// it is ignored, and a tuning run replaces it).
std::optional<TunedChoice> find_tuned(const ProblemSignature& signature);
// Writes atomically (temporary file, then rename): readers see the old entry or the new one.
Status store_tuned(const ProblemSignature& signature, const TunedChoice& choice);

struct TuningCacheEntry {
  std::string path;
  std::string device_model;
  std::string signature;
  std::string kernel_name;
  double tflops = 0;
  int64_t bytes = 0;
  int64_t tuned_at = 0;
};
struct TuningCacheStats {
  std::string folder;
  size_t entries = 0;
  int64_t bytes = 0;
  size_t invalid = 0;  // files that do not verify
};
Result<TuningCacheStats> tuning_cache_stats();
Result<std::vector<TuningCacheEntry>> list_tuning_cache();
// Removes every entry and family index; returns the files removed. Only files tilecraft wrote
// are removed and no link is followed out of the cache: anything else is left where it is and
// said so (in *left_alone, or on stderr when it is null).
Result<size_t> clear_tuning_cache(std::vector<std::string>* left_alone = nullptr);
// Removes the oldest files until the cache holds at most max_bytes; returns the files removed.
Result<size_t> prune_tuning_cache(int64_t max_bytes,
                                  std::vector<std::string>* left_alone = nullptr);

// ---- the autotuner -------------------------------------------------------------------------

// Tunes the arguments' signature on their device (one tuner for every family: GEMM, grouped GEMM,
// convolution): the top `max_candidates` of get_kernels(args) compile in parallel (each in its own
// module), each runs once on fresh random data shaped like the arguments (their own tensors are
// neither read nor written) and is checked against a float64 reference (sampled elements, and no
// element left unwritten), then is timed (cold L2, warmed, median of `repeats`, clocks noted). The
// fastest verified candidate is stored. A candidate that fails to compile, to run or to verify, or
// that the budget cuts off, is reported with the reason and never chosen. The candidates tune_*
// would compile and time for `args` on a device of capability cc.
std::vector<api::Kernel> tuning_candidates(const api::GemmArguments& args,
                                           const TuningOptions& options, int cc);
std::vector<api::Kernel> tuning_candidates(const api::GroupedGemmArguments& args,
                                           const TuningOptions& options, int cc);
std::vector<api::Kernel> tuning_candidates(const api::Conv2dArguments& args,
                                           const TuningOptions& options, int cc);

// Compiles the tuning candidates of many problems at once (one kernel per module, every compile
// job busy), so that tuning them one after another only runs and times. The problems may be of
// any family (GemmArguments, GroupedGemmArguments, Conv2dArguments). Fails only on bad input.
Status precompile_candidates(const std::vector<const api::KernelArguments*>& problems,
                             const TuningOptions& options,
                             const compile::ProgressFn& progress = compile::default_progress);

Result<TuningReport> tune_gemm(const api::GemmArguments& args, const TuningOptions& options,
                               const compile::ProgressFn& progress = compile::default_progress);
Result<TuningReport> tune_grouped_gemm(
    const api::GroupedGemmArguments& args, const TuningOptions& options,
    const compile::ProgressFn& progress = compile::default_progress);
Result<TuningReport> tune_conv2d(const api::Conv2dArguments& args, const TuningOptions& options,
                                 const compile::ProgressFn& progress = compile::default_progress);

}  // namespace tilecraft::tune
