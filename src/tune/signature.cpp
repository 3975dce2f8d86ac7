// Problem signatures and tuning options.
#include <algorithm>
#include <cmath>
#include <set>

#include "tilecraft/core/settings.hpp"
#include "tilecraft/runtime/device.hpp"
#include "tilecraft/tune/tuning.hpp"
#include "tune/grouped_shape.hpp"
#include "tune/text.hpp"

namespace tilecraft::tune {

namespace {

constexpr std::pair<TuningMode, std::string_view> kModeNames[] = {
    {TuningMode::automatic, "auto"},
    {TuningMode::blocking, "blocking"},
    {TuningMode::off, "off"},
    {TuningMode::force, "force"}};

std::string operand_text(const char* name, DataType dtype, Layout layout, int alignment) {
  return std::string(name) + "=" + std::string(long_name(dtype)) + "/" +
         std::string(to_string(layout)) + "/" + std::to_string(alignment);
}

// The device's name, or why there is none.
Result<std::string> device_model(int device) {
  auto info = device_info(device);
  if (!info) return info.status();
  return info->name;
}

std::string epilogue_text(Activation activation, bool c, bool bias, DataType bias_dtype) {
  return std::string(";act=") + std::string(to_string(activation)) + (c ? ";C" : "") +
         (bias ? ";bias=" + std::string(long_name(bias_dtype)) : "");
}

}  // namespace

GroupedShape grouped_shape(const api::GroupedGemmArguments& args) {
  GroupedShape shape;
  int64_t rows = 0;
  for (const GemmCoord& s : args.problem().problem_sizes) {
    rows += s.m;
    shape.largest_rows = std::max<int64_t>(shape.largest_rows, s.m);
    shape.extents[1] = std::max<int64_t>(shape.extents[1], s.n);
    shape.extents[2] = std::max<int64_t>(shape.extents[2], s.k);
    shape.empty_groups += s.m == 0 || s.n == 0;
  }
  const int64_t groups = std::max(args.problem_count(), 1);
  shape.extents[0] = (rows + groups - 1) / groups;
  shape.extents[3] = groups;
  Text text;
  text << groups << " groups, " << rows << " rows (at most " << shape.largest_rows << " a group) x "
       << shape.extents[1] << " x " << shape.extents[2];
  shape.text = text.str();
  return shape;
}

std::string_view to_string(TuningMode mode) {
  for (const auto& [known, name] : kModeNames) {
    if (known == mode) return name;
  }
  return "?";
}

Result<TuningMode> parse_tuning_mode(std::string_view text, std::string_view argument) {
  if (text == "automatic") return TuningMode::automatic;
  for (const auto& [mode, name] : kModeNames) {
    if (name == text) return mode;
  }
  return Status::invalid(std::string(argument) +
                         ": expected 'auto', 'blocking', 'off' or 'force', got '" +
                         std::string(text) + "'");
}

Status validate(const TuningOptions& options) {
  if (options.max_candidates < 1 || options.max_candidates > 64) {
    return Status::invalid("max_candidates: expected an integer from 1 to 64, got " +
                           std::to_string(options.max_candidates));
  }
  if (!(options.max_seconds >= 0) || !std::isfinite(options.max_seconds)) {
    return Status::invalid("max_seconds: expected a number of seconds >= 0 (0: no limit), got " +
                           std::to_string(options.max_seconds));
  }
  if (options.repeats < 1 || options.repeats > 1000) {
    return Status::invalid("repeats: expected an integer from 1 to 1000, got " +
                           std::to_string(options.repeats));
  }
  return Status::ok();
}

Result<TuningOptions> tuning_options_from_environment() {
  const Settings& s = settings();
  TuningOptions options;
  auto mode = parse_tuning_mode(s.tuning, "TILECRAFT_TUNING");
  if (!mode) return mode.status();
  options.mode = *mode;
  options.max_candidates = s.tuning_candidates;
  options.max_seconds = s.tuning_seconds;
  return options;
}

int64_t shape_bucket(int64_t extent) {
  if (extent <= 8) return std::max<int64_t>(extent, 1);
  int64_t octave = 8;
  while (octave * 2 < extent) octave *= 2;  // octave < extent <= 2 * octave
  const int64_t step = octave / 4;
  return (extent + step - 1) / step * step;
}

std::string ProblemSignature::text() const {
  Text out;
  out << family << ";mnkl=" << bucket[0] << "x" << bucket[1] << "x" << bucket[2] << "x"
      << bucket[3];
  return out.str();
}

std::string ProblemSignature::key() const {
  return compile::sha256_hex(device_model + "\n" + text());
}

bool admits(const TuningOptions& options, const api::KernelMetadata& kernel) {
  return options.allow_tf32 || kernel.operands.A.dtype != DataType::tf32;
}

Result<ProblemSignature> signature_of(const api::GemmArguments& args, bool allow_tf32) {
  if (args.epilogue().graph) {
    // A signature names no graph: a winner stored for it would serve other epilogues.
    return Status::unsupported(
        "epilogue.graph: tuning and plans do not take custom epilogues; run a kernel of "
        "api::get_kernels(args) (the one call tilecraft.gemm(epilogue=) does)");
  }
  auto info = device_info(args.A().device_id);
  if (!info) return info.status();
  const api::EpilogueArguments& e = args.epilogue();
  Text family;
  family << operand_text("A", args.A().dtype, args.layout_a(), args.alignment_a()) << ";"
         << operand_text("B", args.B().dtype, args.layout_b(), args.alignment_b()) << ";"
         << operand_text("out", args.out().dtype, args.layout_out(), args.alignment_out()) << ";"
         << "acc=" << long_name(args.accumulator_type()) << ";";
  if (e.C.data) family << operand_text("C", e.C.dtype, args.layout_c(), args.alignment_c()) << ";";
  family << "beta=" << (e.beta != 0 ? "nonzero" : "zero") << ";act=" << to_string(e.activation);
  if (e.bias.data) {
    family << ";bias=" << (e.bias_per_row ? "row/" : "column/") << long_name(e.bias.dtype);
  }
  if (e.scale_a.given || e.scale_b.given) family << ";scales";
  if (args.use_fast_accum()) family << ";fast_accum";
  if (args.A().dtype == DataType::f32) family << ";f32math=" << (allow_tf32 ? "tf32" : "f32");
  family << ";batched=" << (args.batch() > 1 ? "yes" : "no");
  ProblemSignature signature;
  signature.device_model = info->name;
  signature.family = family.str();
  signature.bucket = {shape_bucket(args.m()), shape_bucket(args.n()), shape_bucket(args.k()),
                      shape_bucket(args.batch())};
  return signature;
}

}  // namespace tilecraft::tune

namespace tilecraft::tune {

Result<ProblemSignature> signature_of(const api::GroupedGemmArguments& args, bool allow_tf32) {
  auto model = device_model(args.device());
  if (!model) return model.status();
  const api::GroupedEpilogueArguments& e = args.epilogue();
  const GroupedShape shape = grouped_shape(args);
  Text family;
  family << "grouped;" << operand_text("A", args.dtype_a(), args.layout_a(), args.alignment_a())
         << ";" << operand_text("B", args.dtype_b(), args.layout_b(), args.alignment_b()) << ";"
         << operand_text("out", args.dtype_out(), args.layout_out(), args.alignment_out())
         << ";acc=" << long_name(args.accumulator_type())
         << epilogue_text(e.activation, !args.problem().C.empty(), args.bias_dtype().has_value(),
                          args.bias_dtype().value_or(DataType::f32))
         << (e.beta != 0 ? ";beta" : "") << (e.scale_a != 1 || e.scale_b != 1 ? ";scales" : "");
  if (args.dtype_a() == DataType::f32) family << ";f32math=" << (allow_tf32 ? "tf32" : "f32");
  // The distribution of rows: the largest group and the share of empty ones (in eighths).
  family << ";rows_max=" << shape_bucket(shape.largest_rows)
         << ";empty=" << (8 * shape.empty_groups + shape.extents[3] - 1) / shape.extents[3];
  std::set<std::pair<int64_t, int64_t>> nk;
  for (const GemmCoord& s : args.problem().problem_sizes) {
    if (s.m != 0 && s.n != 0) nk.insert({shape_bucket(s.n), shape_bucket(s.k)});
  }
  if (nk.size() > 1) {
    family << ";nk=";
    for (const auto& [n, k] : nk) family << n << "x" << k << ",";
  }
  ProblemSignature signature;
  signature.device_model = *model;
  signature.family = family.str();
  signature.bucket = {shape_bucket(shape.extents[0]), shape_bucket(shape.extents[1]),
                      shape_bucket(shape.extents[2]), shape_bucket(shape.extents[3])};
  return signature;
}

Result<ProblemSignature> signature_of(const api::Conv2dArguments& args, bool allow_tf32) {
  auto model = device_model(args.device());
  if (!model) return model.status();
  const api::EpilogueArguments& e = args.epilogue();
  Conv2dProblemSize layer = args.problem_size();
  layer.n = 1;  // the batch is bucketed
  Text family;
  family << "conv;" << to_string(args.kind()) << ";"
         << "A=" << long_name(args.A().dtype) << "/" << args.alignment_a()
         << ";B=" << long_name(args.B().dtype) << "/" << args.alignment_b()
         << ";out=" << long_name(args.out().dtype) << "/" << args.alignment_out()
         << ";acc=" << long_name(args.accumulator_type())
         << epilogue_text(e.activation, e.C.data != nullptr, e.bias.data != nullptr, e.bias.dtype)
         << (e.C.data ? ";alignment_c=" + std::to_string(args.alignment_c()) : "")
         << (e.beta != 0 ? ";beta" : "") << ";layer=" << layer.to_string();
  if (args.A().dtype == DataType::f32) family << ";f32math=" << (allow_tf32 ? "tf32" : "f32");
  ProblemSignature signature;
  signature.device_model = *model;
  signature.family = family.str();
  signature.bucket = {shape_bucket(args.problem_size().n), 1, 1, 1};
  return signature;
}

}  // namespace tilecraft::tune
