// The places in core/'s source text where a message the app shows is made (a
// "site"), and what each says: its pieces of text with a gap wherever a value
// goes, one variant per branch of a `?:` in it. The rule for which calls make a
// user-facing message lives in docs/contributing.md and in kMessageSiteCalls.
#pragma once

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace pipelab::testing {

// A user-facing message is the argument of one of these calls: the exceptions
// the app catches and shows through core_message_text, the validator's list of
// an experiment's problems, and the helpers that throw those exceptions.
inline const std::vector<std::string> kMessageSiteCalls = {
    "throw ExperimentError(", "throw DataError(", "throw RunFileError(", "throw LiveStreamError(",
    "problems.push_back(",
    // Local helpers that throw one of these with the text they are given:
    // core/io/run_file.cpp's whole message, core/planner/split_search.cpp's
    // why after its place ("search space 'x': ").
    "run_file_error(", "search_space_error(",
    // core/live/live_frames.cpp's what a run's frame held that it cannot
    // (after "the run sent ").
    "run_sent("};

struct MessagePiece {
  bool is_text = false;  // a string literal; otherwise a value (a variable, a call, ...)
  std::string text;
};
using MessageVariant = std::vector<MessagePiece>;

struct MessageSite {
  std::string file;  // relative to the source root, e.g. "core/data/csv_reader.cpp"
  int line = 0;
  std::string call;  // one of kMessageSiteCalls
  std::vector<MessageVariant> variants;
};

namespace message_sites_detail {

// `at` is on the opening quote of a "string" or a 'c'haracter literal; returns
// the index just past its closing quote (a backslash escapes the next char).
inline size_t skip_literal(const std::string& code, size_t at) {
  const char quote = code[at];
  size_t i = at + 1;
  while (i < code.size() && code[i] != quote) i += code[i] == '\\' ? 2 : 1;
  return i + 1;
}

// The code with its comments blanked out (newlines kept, so lines still count),
// so a call named in a comment is no site.
inline std::string without_comments(const std::string& code) {
  std::string out = code;
  size_t i = 0;
  while (i < out.size()) {
    if (out[i] == '"' || out[i] == '\'') {
      i = skip_literal(out, i);
    } else if (out.compare(i, 2, "//") == 0) {
      while (i < out.size() && out[i] != '\n') out[i++] = ' ';
    } else if (out.compare(i, 2, "/*") == 0) {
      const size_t end = std::min(out.find("*/", i + 2), out.size() - 2) + 2;
      for (; i < end; ++i)
        if (out[i] != '\n') out[i] = ' ';
    } else {
      ++i;
    }
  }
  return out;
}

// Where the characters of `wanted` stand outside literals and brackets
// ("::" is not a ':', "++" and "+=" are not a '+').
inline std::vector<size_t> top_level(const std::string& code, const std::string& wanted) {
  std::vector<size_t> found;
  int depth = 0;
  for (size_t i = 0; i < code.size(); ++i) {
    const char c = code[i];
    if (c == '"' || c == '\'') {
      i = skip_literal(code, i) - 1;
    } else if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == ')' || c == ']' || c == '}') {
      --depth;
    } else if (depth == 0 && wanted.find(c) != std::string::npos) {
      const char next = i + 1 < code.size() ? code[i + 1] : ' ';
      const char previous = i > 0 ? code[i - 1] : ' ';
      if (c == ':' && (next == ':' || previous == ':')) continue;
      if (c == '+' && (next == '+' || next == '=' || previous == '+')) continue;
      found.push_back(i);
    }
  }
  return found;
}

// The ')' that closes the '(' at `open`, or npos.
inline size_t closing(const std::string& code, size_t open) {
  int depth = 0;
  for (size_t i = open; i < code.size(); ++i) {
    if (code[i] == '"' || code[i] == '\'') {
      i = skip_literal(code, i) - 1;
    } else if (code[i] == '(') {
      ++depth;
    } else if (code[i] == ')' && --depth == 0) {
      return i;
    }
  }
  return std::string::npos;
}

inline std::string trimmed(const std::string& text) {
  const size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return {};
  return text.substr(begin, text.find_last_not_of(" \t\r\n") - begin + 1);
}

// A literal's body as the program sees it.
inline std::string unescaped(const std::string& body) {
  std::string text;
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] != '\\' || i + 1 == body.size()) {
      text += body[i];
      continue;
    }
    const char next = body[++i];
    text += next == 'n' ? '\n' : next == 't' ? '\t' : next;
  }
  return text;
}

// One term of a sum: adjacent literals ("a" "b") are one piece of text, a
// parenthesised expression (or std::string(...)) is read inside, anything else is a value.
inline std::vector<MessageVariant> variants_of(const std::string& expression);

inline std::vector<MessageVariant> variants_of_term(const std::string& term) {
  if (!term.empty() && term[0] == '"') {
    std::string text;
    size_t i = 0;
    while (i < term.size() && term[i] == '"') {
      const size_t end = skip_literal(term, i);
      text += unescaped(term.substr(i + 1, end - i - 2));
      i = term.find_first_not_of(" \t\r\n", end);
      if (i == std::string::npos) return {{MessagePiece{true, text}}};
    }
    return {{MessagePiece{false, term}}};  // e.g. "abc"s or a literal indexed
  }
  if (!term.empty() && term[0] == '(' && closing(term, 0) == term.size() - 1)
    return variants_of(term.substr(1, term.size() - 2));
  // std::string("text") is text too.
  const std::string to_string = "std::string(";
  if (term.compare(0, to_string.size(), to_string) == 0 &&
      closing(term, to_string.size() - 1) == term.size() - 1)
    return variants_of(term.substr(to_string.size(), term.size() - to_string.size() - 1));
  return {{MessagePiece{false, term}}};
}

// `c ? a : b` gives a's variants and b's (the condition says nothing); a sum
// gives every combination of its terms' variants.
inline std::vector<MessageVariant> variants_of(const std::string& expression) {
  const std::string code = trimmed(expression);
  const std::vector<size_t> marks = top_level(code, "?:");
  if (!marks.empty() && code[marks[0]] == '?') {
    int open = 0;
    for (size_t mark : marks) {
      open += code[mark] == '?' ? 1 : -1;
      if (open > 0) continue;
      std::vector<MessageVariant> both =
          variants_of(code.substr(marks[0] + 1, mark - marks[0] - 1));
      for (MessageVariant& variant : variants_of(code.substr(mark + 1))) both.push_back(variant);
      return both;
    }
  }
  std::vector<MessageVariant> combined = {{}};
  size_t begin = 0;
  std::vector<size_t> pluses = top_level(code, "+");
  pluses.push_back(code.size());
  for (size_t plus : pluses) {
    std::vector<MessageVariant> next;
    for (const MessageVariant& term_variant :
         variants_of_term(trimmed(code.substr(begin, plus - begin))))
      for (MessageVariant variant : combined) {
        variant.insert(variant.end(), term_variant.begin(), term_variant.end());
        next.push_back(variant);
      }
    combined = next;
    begin = plus + 1;
  }
  return combined;
}

}  // namespace message_sites_detail

// Every site in one file's text, `file` being its name relative to the root.
inline std::vector<MessageSite> message_sites_in(const std::string& file,
                                                 const std::string& source) {
  using namespace message_sites_detail;
  const std::string code = without_comments(source);
  std::vector<MessageSite> sites;
  for (const std::string& call : kMessageSiteCalls) {
    for (size_t at = code.find(call); at != std::string::npos; at = code.find(call, at + 1)) {
      // A whole name only: "my_problems.push_back(" is another list.
      if (at > 0 && (std::isalnum(static_cast<unsigned char>(code[at - 1])) || code[at - 1] == '_'))
        continue;
      const size_t open = at + call.size() - 1;
      const size_t close = closing(code, open);
      if (close == std::string::npos) continue;
      MessageSite site;
      site.file = file;
      site.line = 1 + static_cast<int>(
                          std::count(code.begin(), code.begin() + static_cast<long>(at), '\n'));
      site.call = call;
      site.variants = variants_of(code.substr(open + 1, close - open - 1));
      sites.push_back(site);
    }
  }
  return sites;
}

// Every site in the .cpp and .h files under `root`/core.
inline std::vector<MessageSite> core_message_sites(const std::string& root) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(root) / "core")) {
    const std::string extension = entry.path().extension().string();
    if (entry.is_regular_file() && (extension == ".cpp" || extension == ".h"))
      files.push_back(fs::relative(entry.path(), root).generic_string());
  }
  std::sort(files.begin(), files.end());
  std::vector<MessageSite> sites;
  for (const std::string& file : files) {
    std::ifstream in(fs::path(root) / file, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    for (MessageSite& site : message_sites_in(file, text.str())) sites.push_back(site);
  }
  return sites;
}

}  // namespace pipelab::testing
