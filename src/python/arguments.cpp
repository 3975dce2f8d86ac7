#include "arguments.hpp"

#include <algorithm>

namespace tilecraft::python {
namespace {

constexpr size_t kMaxReprLength = 80;

// "str", "numpy.int64", "tilecraft.DataType" (tilecraft._core's classes are tilecraft's).
std::string type_text(nb::handle value) {
  nb::handle type = value.type();
  std::string module, name;
  try {
    name = nb::cast<std::string>(type.attr("__qualname__"));
    module = nb::cast<std::string>(type.attr("__module__"));
  } catch (const std::exception&) {
    PyErr_Clear();
    return Py_TYPE(value.ptr())->tp_name;
  }
  if (module == "builtins") return name;
  // tilecraft._core's classes are tilecraft's (and tilecraft._core.api's tilecraft.api's).
  const std::string core = "tilecraft._core";
  if (module.rfind(core, 0) == 0) module = "tilecraft" + module.substr(core.size());
  return module + "." + name;
}

bool is_bool(nb::handle value) {
  if (PyBool_Check(value.ptr())) return true;
  const std::string type = Py_TYPE(value.ptr())->tp_name;
  return type == "numpy.bool" || type == "numpy.bool_";
}

bool is_text(nb::handle value) {
  PyObject* o = value.ptr();
  return PyUnicode_Check(o) || PyBytes_Check(o) || PyByteArray_Check(o);
}

std::string range_text(int64_t lo, int64_t hi) {
  return "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The value as a Python int: an int, or an object with __index__ (numpy integers) that is neither
// a bool nor a tensor. TypeError naming the argument otherwise.
nb::object index_of(const std::string& name, nb::handle value, const std::string& expected) {
  PyObject* o = value.ptr();
  if (PyLong_CheckExact(o)) return nb::borrow(value);  // the common case, without the checks
  if (is_bool(value) || !PyIndex_Check(o) || is_tensor_like(value)) {
    wrong_type(name, expected, value);
  }
  nb::object index = nb::steal(PyNumber_Index(o));
  if (!index.is_valid()) {
    PyErr_Clear();
    wrong_type(name, expected, value);
  }
  return index;
}

}  // namespace

std::string given(nb::handle value) {
  std::string text;
  try {
    text = nb::cast<std::string>(nb::repr(value));
  } catch (const std::exception&) {
    PyErr_Clear();
    text = "<unprintable>";
  }
  if (text.size() > kMaxReprLength) text = text.substr(0, kMaxReprLength - 3) + "...";
  return text + " (" + type_text(value) + ")";
}

void wrong_type(const std::string& name, const std::string& expected, nb::handle value) {
  throw nb::type_error((name + ": expected " + expected + ", got " + given(value)).c_str());
}

void wrong_value(const std::string& name, const std::string& expected, nb::handle value) {
  throw nb::value_error((name + ": expected " + expected + ", got " + given(value)).c_str());
}

bool is_tensor_like(nb::handle value) { return nb::hasattr(value, "__dlpack__"); }

int64_t int_from(const std::string& name, nb::handle value, const std::string& expected, int64_t lo,
                 int64_t hi) {
  nb::object index = index_of(name, value, expected);
  int overflow = 0;
  const long long result = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (result == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    wrong_type(name, expected, value);
  }
  if (overflow != 0 || result < lo || result > hi) {
    wrong_value(name, expected + " in " + range_text(lo, hi), value);
  }
  return result;
}

uint64_t unsigned_from(const std::string& name, nb::handle value, const std::string& expected) {
  nb::object index = index_of(name, value, expected);
  const unsigned long long result = PyLong_AsUnsignedLongLong(index.ptr());
  if (result == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
    PyErr_Clear();  // negative, or beyond 64 bits
    wrong_value(name, expected + " in [0, " + std::to_string(UINT64_MAX) + "]", value);
  }
  return result;
}

double float_from(const std::string& name, nb::handle value, const std::string& expected) {
  PyObject* o = value.ptr();
  if (PyFloat_Check(o)) return PyFloat_AsDouble(o);
  PyNumberMethods* number = Py_TYPE(o)->tp_as_number;
  const bool numeric = number != nullptr && (number->nb_float != nullptr || PyIndex_Check(o));
  if (is_bool(value) || is_text(value) || !numeric || is_tensor_like(value)) {
    wrong_type(name, expected, value);
  }
  const double result = PyFloat_AsDouble(o);
  if (result == -1.0 && PyErr_Occurred()) {
    const bool overflow = PyErr_ExceptionMatches(PyExc_OverflowError);
    PyErr_Clear();
    if (overflow) wrong_value(name, expected + " (a double's range)", value);
    wrong_type(name, expected, value);  // e.g. complex: has __float__, which raises
  }
  return result;
}

bool bool_from(const std::string& name, nb::handle value, const std::string& expected) {
  if (!is_bool(value)) wrong_type(name, expected, value);
  return PyObject_IsTrue(value.ptr()) == 1;
}

std::string path_from(const std::string& name, nb::handle value, const std::string& expected) {
  if (!PyUnicode_Check(value.ptr()) && !nb::hasattr(value, "__fspath__")) {
    wrong_type(name, expected, value);
  }
  nb::object path = nb::steal(PyOS_FSPath(value.ptr()));
  if (!path.is_valid() || !PyUnicode_Check(path.ptr())) {
    PyErr_Clear();
    wrong_type(name, expected, value);
  }
  return nb::cast<std::string>(path);
}

nb::list sequence_from(const std::string& name, nb::handle value, const std::string& expected) {
  PyObject* o = value.ptr();
  if (is_text(value) || PyDict_Check(o) || !PySequence_Check(o)) wrong_type(name, expected, value);
  nb::object list = nb::steal(PySequence_List(o));
  if (!list.is_valid()) {
    PyErr_Clear();
    wrong_type(name, expected, value);
  }
  return nb::borrow<nb::list>(list);
}

std::vector<int> ints_from(const std::string& name, nb::handle v, const std::string& expected,
                           size_t count) {
  nb::list items = sequence_from(name, v, expected);
  if (items.size() != count) wrong_value(name, expected, v);
  std::vector<int> out(count);
  for (size_t i = 0; i < count; ++i) {
    out[i] = Arg<int>::from(name + "[" + std::to_string(i) + "]", items[i], Arg<int>::expected());
  }
  return out;
}

std::set<int> Arg<std::set<int>>::from(const std::string& name, nb::handle v,
                                       const std::string& expected) {
  PyObject* o = v.ptr();
  if (is_text(v) || PyDict_Check(o) || is_tensor_like(v)) wrong_type(name, expected, v);
  nb::object iterator = nb::steal(PyObject_GetIter(o));
  if (!iterator.is_valid()) {
    PyErr_Clear();
    wrong_type(name, expected, v);
  }
  std::set<int> out;
  while (nb::object item = nb::steal(PyIter_Next(iterator.ptr()))) {
    try {
      out.insert(Arg<int>::from(name, item, Arg<int>::expected()));
    } catch (const nb::builtin_exception& e) {
      // The element's fault, told with the whole collection.
      const bool range = e.type() == nb::exception_type::value_error;
      const std::string text = name + ": expected " + expected +
                               (range ? " in " + range_text(INT32_MIN, INT32_MAX) : "") + ", got " +
                               given(v) + " holding " + given(item);
      throw range ? nb::value_error(text.c_str()) : nb::type_error(text.c_str());
    }
  }
  if (PyErr_Occurred()) {
    PyErr_Clear();
    wrong_type(name, expected, v);
  }
  return out;
}

std::vector<nb::handle> bind_call(const std::string& function, const nb::args& args,
                                  const nb::kwargs& kwargs, const std::vector<const char*>& names,
                                  const std::vector<bool>& has_fallback) {
  std::vector<nb::handle> values(names.size());
  if (args.size() > names.size() && names.empty()) {
    throw nb::type_error(
        (function + "() takes no arguments, got " + std::to_string(args.size())).c_str());
  }
  if (args.size() > names.size()) {
    std::string list;
    for (const char* n : names) list += (list.empty() ? "" : ", ") + std::string(n);
    throw nb::type_error((function + "() takes at most " + std::to_string(names.size()) +
                          " arguments (" + list + "), got " + std::to_string(args.size()))
                             .c_str());
  }
  for (size_t i = 0; i < args.size(); ++i) values[i] = args[i];
  for (auto [key, value] : kwargs) {
    const std::string keyword = nb::cast<std::string>(nb::str(key));
    const auto found =
        std::find_if(names.begin(), names.end(), [&](const char* n) { return keyword == n; });
    if (found == names.end()) {  // (a function of no arguments lands here too)
      // Did you mean: the closest name within a few edits, or one the keyword begins.
      std::string hint;
      size_t best = std::max<size_t>(2, keyword.size() / 3) + 1;
      for (const char* n : names) {
        const std::string candidate = n;
        const bool prefix = keyword.size() >= 3 && candidate.rfind(keyword, 0) == 0;
        const size_t d = prefix ? 1 : edit_distance(keyword, candidate);
        if (d < best) {
          best = d;
          hint = "; did you mean '" + candidate + "'?";
        }
      }
      throw nb::type_error(
          (function + "() got an unexpected keyword argument '" + keyword + "'" + hint).c_str());
    }
    const size_t i = static_cast<size_t>(found - names.begin());
    if (values[i].is_valid()) {
      throw nb::type_error(
          (function + "() got multiple values for argument '" + keyword + "'").c_str());
    }
    values[i] = value;
  }
  for (size_t i = 0; i < names.size(); ++i) {
    if (!values[i].is_valid() && !has_fallback[i]) {
      throw nb::type_error((function + "() missing required argument '" + names[i] + "'").c_str());
    }
  }
  return values;
}

}  // namespace tilecraft::python
