// The arguments of every binding, checked with words (DESIGN, Decided 6).
//
// nanobind's own overload resolution answers a wrong type with its generic "incompatible function
// arguments" text, names unnamed parameters arg0, arg1, ..., lets True pass as an int and any
// object with __float__ as a float. So each binding of the Python surfaces takes (*args, **kwargs)
// and binds them here as Python binds a call to a signature (missing, unexpected or repeated
// arguments are TypeErrors naming them), then converts each value with Arg<T>::from: a value of
// the wrong type raises TypeError, a value outside the C++ type's range ValueError, both naming
// the argument, what was expected and what was given, as in
//   arch: expected an int (80 or 90), got '80' (str)
// Values of the right type then meet the C++ validation, whose Status names them as well.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/set.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace tilecraft::python {

namespace nb = nanobind;

// "'80' (str)", "None (NoneType)", "<Layout.RowMajor: 0> (tilecraft.Layout)": the value's repr
// (shortened) and its type, for messages.
std::string given(nb::handle value);

// Raise TypeError / ValueError "<name>: expected <expected>, got <given(value)>".
[[noreturn]] void wrong_type(const std::string& name, const std::string& expected,
                             nb::handle value);
[[noreturn]] void wrong_value(const std::string& name, const std::string& expected,
                              nb::handle value);

// Values by kind, strictly: bool is not an int, a str is not a number, a tensor is not a scalar;
// numpy scalars are numbers.
int64_t int_from(const std::string& name, nb::handle value, const std::string& expected, int64_t lo,
                 int64_t hi);
uint64_t unsigned_from(const std::string& name, nb::handle value, const std::string& expected);
double float_from(const std::string& name, nb::handle value, const std::string& expected);
bool bool_from(const std::string& name, nb::handle value, const std::string& expected);
std::string path_from(const std::string& name, nb::handle value, const std::string& expected);
// Whether a value crosses as a tensor (it has __dlpack__: torch, cupy, jax, numpy arrays).
bool is_tensor_like(nb::handle value);
// A sequence (list, tuple, ...), not a str, bytes or mapping, as a list; TypeError otherwise.
nb::list sequence_from(const std::string& name, nb::handle value, const std::string& expected);

// Arg<T>: how a parameter of type T is converted (from), shown in signatures (hint) and worded
// in messages (expected).
template <typename T, typename = void>
struct Arg;

template <>
struct Arg<int> {
  static std::string hint() { return "int"; }
  static std::string expected() { return "an int"; }
  static int from(const std::string& name, nb::handle v, const std::string& expected) {
    return static_cast<int>(int_from(name, v, expected, std::numeric_limits<int>::min(),
                                     std::numeric_limits<int>::max()));
  }
};

template <>
struct Arg<uint64_t> {
  static std::string hint() { return "int"; }
  static std::string expected() { return "an int >= 0"; }
  static uint64_t from(const std::string& name, nb::handle v, const std::string& expected) {
    return unsigned_from(name, v, expected);
  }
};

template <>
struct Arg<double> {
  static std::string hint() { return "float"; }
  static std::string expected() { return "a float"; }
  static double from(const std::string& name, nb::handle v, const std::string& expected) {
    return float_from(name, v, expected);
  }
};

template <>
struct Arg<bool> {
  static std::string hint() { return "bool"; }
  static std::string expected() { return "True or False"; }
  static bool from(const std::string& name, nb::handle v, const std::string& expected) {
    return bool_from(name, v, expected);
  }
};

// A file path: a str or an os.PathLike.
struct Path {
  std::string text;
};
template <>
struct Arg<Path> {
  static std::string hint() { return "str | os.PathLike"; }
  static std::string expected() { return "a path (a str or an os.PathLike)"; }
  static Path from(const std::string& name, nb::handle v, const std::string& expected) {
    return {path_from(name, v, expected)};
  }
};

// Any object, unchecked here (for values the binding's body checks, e.g. a scale, which is a
// number or a tensor).
template <>
struct Arg<nb::object> {
  static std::string hint() { return "object"; }
  static std::string expected() { return "an object"; }
  static nb::object from(const std::string&, nb::handle v, const std::string&) {
    return nb::borrow(v);
  }
};

// A DLPack tensor: torch, cupy, jax, numpy.
template <>
struct Arg<nb::ndarray<>> {
  static std::string hint() { return "ndarray"; }
  static std::string expected() { return "a torch, cupy or numpy array"; }
  static nb::ndarray<> from(const std::string& name, nb::handle v, const std::string& expected) {
    nb::ndarray<> array;
    if (v.is_none() || !is_tensor_like(v) || !nb::try_cast(v, array)) {
      wrong_type(name, expected, v);
    }
    return array;
  }
};

// How messages name a bound enum or class, e.g. hint "DataType", expected "a tilecraft.DataType
// (e.g. tilecraft.float16)"; for classes also wrapper_attribute, the attribute of the Python
// wrapper that holds the C++ object ("_op", "_native"), or nullptr. Specialized beside each
// binding.
template <typename T>
struct Described;

// A bound enum: an instance of it, never an int.
template <typename T>
struct Arg<T, std::enable_if_t<std::is_enum_v<T>>> {
  static std::string hint() { return Described<T>::hint; }
  static std::string expected() { return Described<T>::expected; }
  static T from(const std::string& name, nb::handle v, const std::string& expected) {
    T out{};
    if (v.is_none() || !nb::try_cast(v, out, /*convert=*/false)) wrong_type(name, expected, v);
    return out;
  }
};

// The C++ object of a bound class T: an instance of T, or the Python wrapper that holds one.
template <typename T>
T* instance_of(nb::handle v) {
  T* pointer = nullptr;
  if (v.is_none()) return nullptr;
  if (nb::try_cast(v, pointer, /*convert=*/false) && pointer != nullptr) return pointer;
  if constexpr (Described<T>::wrapper_attribute != nullptr) {
    if (nb::hasattr(v, Described<T>::wrapper_attribute)) {
      nb::object inner = v.attr(Described<T>::wrapper_attribute);
      if (nb::try_cast(inner, pointer, /*convert=*/false) && pointer != nullptr) return pointer;
    }
  }
  return nullptr;
}

// A reference to the C++ object of a bound class.
template <typename T>
struct Ref {
  T* pointer = nullptr;
  T& operator*() const { return *pointer; }
  T* operator->() const { return pointer; }
};
template <typename T>
struct Arg<Ref<T>> {
  static std::string hint() { return Described<T>::hint; }
  static std::string expected() { return Described<T>::expected; }
  static Ref<T> from(const std::string& name, nb::handle v, const std::string& expected) {
    T* pointer = instance_of<T>(v);
    if (pointer == nullptr) wrong_type(name, expected, v);
    return {pointer};
  }
};

// The same, held by shared_ptr (operations are shared with the compiled-module cache).
template <typename T>
struct Arg<std::shared_ptr<T>> {
  static std::string hint() { return Described<T>::hint; }
  static std::string expected() { return Described<T>::expected; }
  static std::shared_ptr<T> from(const std::string& name, nb::handle v,
                                 const std::string& expected) {
    if (instance_of<T>(v) == nullptr) wrong_type(name, expected, v);
    std::shared_ptr<T> out;
    if (nb::try_cast(v, out, /*convert=*/false) && out) return out;
    if constexpr (Described<T>::wrapper_attribute != nullptr) {
      return nb::cast<std::shared_ptr<T>>(v.attr(Described<T>::wrapper_attribute));
    }
    wrong_type(name, expected, v);
  }
};

// A str.
template <>
struct Arg<std::string> {
  static std::string hint() { return "str"; }
  static std::string expected() { return "a str"; }
  static std::string from(const std::string& name, nb::handle v, const std::string& expected) {
    if (!nb::isinstance<nb::str>(v)) wrong_type(name, expected, v);
    return nb::cast<std::string>(v);
  }
};

// None, or a T.
template <typename T>
struct Arg<std::optional<T>> {
  static std::string hint() { return Arg<T>::hint() + " | None"; }
  static std::string expected() { return Arg<T>::expected() + " or None"; }
  static std::optional<T> from(const std::string& name, nb::handle v, const std::string& expected) {
    if (v.is_none()) return std::nullopt;
    return Arg<T>::from(name, v, expected);
  }
};

// N ints, as a list or tuple: [M, N, K], (stride_h, stride_w) and the like. Elements are
// named: shape[1].
std::vector<int> ints_from(const std::string& name, nb::handle v, const std::string& expected,
                           size_t count);

template <size_t N>
struct Arg<std::array<int, N>> {
  static std::string hint() { return "list[int]"; }
  static std::string expected() { return "a list of " + std::to_string(N) + " ints"; }
  static std::array<int, N> from(const std::string& name, nb::handle v,
                                 const std::string& expected) {
    const std::vector<int> items = ints_from(name, v, expected, N);
    std::array<int, N> out{};
    for (size_t i = 0; i < N; ++i) out[i] = items[i];
    return out;
  }
};

// A list of T. Elements are named: activation_args[0].
template <typename T>
struct Arg<std::vector<T>> {
  static std::string hint() { return "list[" + Arg<T>::hint() + "]"; }
  static std::string expected() { return "a list of " + Arg<T>::hint(); }
  static std::vector<T> from(const std::string& name, nb::handle v, const std::string& expected) {
    nb::list items = sequence_from(name, v, expected);
    std::vector<T> out;
    out.reserve(items.size());
    for (size_t i = 0; i < items.size(); ++i) {
      out.push_back(
          Arg<T>::from(name + "[" + std::to_string(i) + "]", items[i], Arg<T>::expected()));
    }
    return out;
  }
};

// A set of ints, from any collection of them (a str, a mapping or a single int is not one).
template <>
struct Arg<std::set<int>> {
  static std::string hint() { return "set[int]"; }
  static std::string expected() { return "a set of ints"; }
  static std::set<int> from(const std::string& name, nb::handle v, const std::string& expected);
};

// ---- parameters and calls -------------------------------------------------------------------

template <typename T>
struct Param {
  const char* name;
  const char* expected = nullptr;  // overrides Arg<T>::expected, e.g. "an int (80 or 90)"
  std::optional<T> fallback;       // the value when the argument is left out; none: required
  const char* shown = nullptr;     // how the signature shows the fallback

  std::string expectation() const { return expected ? std::string(expected) : Arg<T>::expected(); }
};

// A required parameter; `expected` words what it takes, when the type's usual wording is too
// vague.
template <typename T>
Param<T> required(const char* name, const char* expected = nullptr) {
  return {name, expected, std::nullopt, nullptr};
}
// A parameter the caller may leave out; `shown` is how the signature shows `fallback`.
template <typename T>
Param<T> optional(const char* name, T fallback, const char* shown, const char* expected = nullptr) {
  return {name, expected, std::optional<T>(std::move(fallback)), shown};
}

// Binds positional and keyword arguments to the parameter names, as Python binds a call: the
// handle of each, or a null handle where the caller left it out (and it has a fallback).
std::vector<nb::handle> bind_call(const std::string& function, const nb::args& args,
                                  const nb::kwargs& kwargs, const std::vector<const char*>& names,
                                  const std::vector<bool>& has_fallback);

template <typename T>
T convert(const Param<T>& param, nb::handle value) {
  if (!value.is_valid()) return *param.fallback;
  return Arg<T>::from(param.name, value, param.expectation());
}

template <typename... T, size_t... I>
std::tuple<T...> convert_all(const std::vector<nb::handle>& values,
                             const std::tuple<Param<T>...>& params, std::index_sequence<I...>) {
  // Braced initialization converts left to right: the first wrong argument is the one named.
  return std::tuple<T...>{convert(std::get<I>(params), values[I])...};
}

// Binds and converts a call's arguments to the parameters' types.
template <typename... T>
std::tuple<T...> bind_arguments(const std::string& function, const nb::args& args,
                                const nb::kwargs& kwargs, const std::tuple<Param<T>...>& params) {
  const std::vector<const char*> names =
      std::apply([](const auto&... p) { return std::vector<const char*>{p.name...}; }, params);
  const std::vector<bool> has_fallback = std::apply(
      [](const auto&... p) { return std::vector<bool>{p.fallback.has_value()...}; }, params);
  const std::vector<nb::handle> values = bind_call(function, args, kwargs, names, has_fallback);
  return convert_all(values, params, std::index_sequence_for<T...>{});
}

// "def name(self, a: int, b: DataType = float32)", for nb::sig.
template <typename... T>
std::string signature(const char* name, bool method, const std::tuple<Param<T>...>& params) {
  std::string text = std::string("def ") + name + "(" + (method ? "self" : "");
  bool first = !method;
  std::apply(
      [&](const auto&... p) {
        ((text += (first ? "" : ", ") + std::string(p.name) + ": " +
                  Arg<typename std::decay_t<decltype(p.fallback)>::value_type>::hint() +
                  (p.fallback ? std::string(" = ") + (p.shown ? p.shown : "...") : ""),
          first = false),
         ...);
      },
      params);
  return text + ")";
}

// ---- definitions ----------------------------------------------------------------------------

// A module function (or static method): fn(T...) with the converted arguments.
template <typename Scope, typename Fn, typename... T>
void def_checked(Scope& scope, const char* name, const char* who, Fn fn, Param<T>... params) {
  auto spec = std::make_tuple(std::move(params)...);
  const std::string sig = signature(name, false, spec);
  auto call = [fn, spec, who = std::string(who)](nb::args args, nb::kwargs kwargs) {
    return std::apply(fn, bind_arguments(who, args, kwargs, spec));
  };
  if constexpr (std::is_same_v<Scope, nb::module_>) {
    scope.def(name, std::move(call), nb::sig(sig.c_str()));
  } else {
    scope.def_static(name, std::move(call), nb::sig(sig.c_str()));
  }
}

// An instance method: fn(Self&, T...).
template <typename Class, typename Fn, typename... T>
void def_method(Class& cls, const char* name, const char* who, Fn fn, Param<T>... params) {
  using Self = typename Class::Type;
  auto spec = std::make_tuple(std::move(params)...);
  const std::string sig = signature(name, true, spec);
  cls.def(
      name,
      [fn, spec, who = std::string(who)](Self& self, nb::args args, nb::kwargs kwargs) {
        return std::apply(
            [&](auto&&... values) { return std::invoke(fn, self, std::move(values)...); },
            bind_arguments(who, args, kwargs, spec));
      },
      nb::sig(sig.c_str()));
}

// A constructor: fn(T...) returns the new object.
template <typename Class, typename Fn, typename... T>
void def_init(Class& cls, const char* who, Fn fn, Param<T>... params) {
  using Self = typename Class::Type;
  auto spec = std::make_tuple(std::move(params)...);
  const std::string sig = signature("__init__", true, spec);
  cls.def(
      "__init__",
      [fn, spec, who = std::string(who)](Self* self, nb::args args, nb::kwargs kwargs) {
        new (self) Self(std::apply(fn, bind_arguments(who, args, kwargs, spec)));
      },
      nb::sig(sig.c_str()));
}

}  // namespace tilecraft::python
