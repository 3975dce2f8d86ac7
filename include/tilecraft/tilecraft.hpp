// tilecraft's public C++ API: describe a GEMM, compile it, run it on your tensors.
#pragma once

#include "tilecraft/compile/compiler.hpp"
#include "tilecraft/core/settings.hpp"
#include "tilecraft/core/status.hpp"
#include "tilecraft/core/tensor_view.hpp"
#include "tilecraft/core/types.hpp"
#include "tilecraft/describe/epilogue.hpp"
#include "tilecraft/describe/gemm_operation.hpp"
#include "tilecraft/describe/math_instruction.hpp"
#include "tilecraft/describe/swizzle.hpp"
#include "tilecraft/describe/tensor_description.hpp"
#include "tilecraft/describe/tile_description.hpp"
#include "tilecraft/runtime/compiled_artifact.hpp"
#include "tilecraft/runtime/device.hpp"
#include "tilecraft/runtime/gemm_arguments.hpp"
#include "tilecraft/runtime/gemm_operation.hpp"
#include "tilecraft/runtime/memory_pool.hpp"
