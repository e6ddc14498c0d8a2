#include "core/io/file_text.h"

#include <filesystem>
#include <fstream>

#include "core/io/experiment_io.h"
#include "core/io/json_document.h"
#include "core/text/quoted_excerpt.h"

namespace fs = std::filesystem;

namespace pipelab {

std::string resolve_path_beside(const std::string& path, const std::string& base_dir) {
  if (path.empty()) return "";
  const fs::path written(path);
  if (written.is_absolute()) return written.lexically_normal().string();
  std::error_code ignored;
  fs::path beside_file;
  if (!base_dir.empty()) {
    beside_file = fs::absolute(fs::path(base_dir) / written, ignored).lexically_normal();
    if (fs::exists(beside_file, ignored)) return beside_file.string();
  }
  const fs::path from_working_dir = fs::absolute(written, ignored).lexically_normal();
  if (fs::exists(from_working_dir, ignored)) return from_working_dir.string();
  return base_dir.empty() ? from_working_dir.string() : beside_file.string();
}

std::string directory_of(const std::string& file_path) {
  if (file_path.empty()) return "";
  std::error_code ignored;
  return fs::absolute(fs::path(file_path), ignored).parent_path().string();
}

std::string read_text_file(const std::string& path, const std::string& what) {
  std::error_code ignored;
  const std::string quoted = quoted_excerpt(path, kPathExcerptBytes);
  if (!fs::exists(path, ignored)) throw ExperimentError(what + " file not found: " + quoted);
  if (fs::is_directory(path, ignored))
    throw ExperimentError(quoted + " is a folder; give the " + what + "'s .json file");
  std::ifstream file(path, std::ios::binary);
  if (!file) throw ExperimentError("cannot open " + what + " file " + quoted);
  std::string text(kMaxExperimentBytes + 1, '\0');
  file.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (file.bad()) throw ExperimentError("cannot read " + what + " file " + quoted);
  text.resize(static_cast<size_t>(file.gcount()));
  return text;
}

void throw_problems(const std::vector<std::string>& problems) {
  if (problems.empty()) return;
  std::string message = problems.front();
  if (problems.size() > 1)
    message += " (and " + std::to_string(problems.size() - 1) + " more problem" +
               (problems.size() > 2 ? "s" : "") + ")";
  throw ExperimentError(message);
}

void write_text_file(const std::string& path, const std::string& text, const std::string& what) {
  const std::string temporary = path + ".saving";
  const std::string quoted = quoted_excerpt(path, kPathExcerptBytes);
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    if (!file)
      throw ExperimentError("cannot write " + what + " " + quoted + ": cannot create " +
                            quoted_excerpt(temporary, kPathExcerptBytes));
    file << text;
    if (!file.flush()) throw ExperimentError("cannot write " + what + " " + quoted);
  }
  std::error_code error;
  fs::rename(temporary, path, error);
  if (error) {
    std::error_code ignored;
    fs::remove(temporary, ignored);
    throw ExperimentError("cannot write " + what + " " + quoted + ": " + error.message());
  }
}

}  // namespace pipelab
