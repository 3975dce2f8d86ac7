// Builds text from strings and numbers without iostreams. std::ostream's number formatting
// crashed inside a Python process that had loaded torch (a locale facet of another libstdc++
// copy), so the code that Python reaches formats with snprintf and parses with strtod.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace tilecraft::tune {

class Text {
 public:
  explicit Text(int precision = 9) : precision_(precision) {}

  Text& operator<<(std::string_view s) {
    text_.append(s);
    return *this;
  }
  Text& operator<<(const std::string& s) { return *this << std::string_view(s); }
  Text& operator<<(const char* s) { return *this << std::string_view(s); }
  Text& operator<<(char c) {
    text_ += c;
    return *this;
  }
  Text& operator<<(const void* p) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%p", p);
    return *this << buffer;
  }
  template <typename T>
  requires std::is_arithmetic_v<T> Text& operator<<(T value) {
    if constexpr (std::is_same_v<T, bool>) {
      text_ += value ? '1' : '0';
    } else if constexpr (std::is_integral_v<T>) {
      text_ += std::to_string(value);
    } else {
      char buffer[40];
      std::snprintf(buffer, sizeof buffer, "%.*g", precision_, static_cast<double>(value));
      text_ += buffer;
    }
    return *this;
  }

  const std::string& str() const { return text_; }

 private:
  int precision_;
  std::string text_;
};

// The lines of text, without their '\n'.
inline std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// Splits off the first space-separated word of *rest.
inline std::string_view next_word(std::string_view* rest) {
  size_t start = rest->find_first_not_of(' ');
  if (start == std::string_view::npos) {
    *rest = {};
    return {};
  }
  size_t end = rest->find(' ', start);
  if (end == std::string_view::npos) end = rest->size();
  std::string_view word = rest->substr(start, end - start);
  *rest = rest->substr(end);
  return word;
}

// The whole word as a number (double or int64_t); false when it is not one.
template <typename Number>
bool parse_number(std::string_view word, Number* out) {
  if (word.empty()) return false;
  const std::string text(word);
  char* end = nullptr;
  if constexpr (std::is_floating_point_v<Number>) {
    *out = std::strtod(text.c_str(), &end);
  } else {
    *out = std::strtoll(text.c_str(), &end, 10);
  }
  return end == text.c_str() + text.size();
}

}  // namespace tilecraft::tune
