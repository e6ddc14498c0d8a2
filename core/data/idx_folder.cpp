#include "core/data/idx_folder.h"

#include <filesystem>
#include <map>
#include <vector>

#include "core/data/dataset.h"
#include "core/text/quoted_excerpt.h"

namespace pipelab {

namespace {

namespace fs = std::filesystem;

enum class IdxRole { Images, Labels };

struct FoundFile {
  std::string prefix;  // e.g. "train-" or "t10k-"
  IdxRole role;
};

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Recognises "<prefix>images-idx<digits>-ubyte[.gz]" and
// "<prefix>labels-idx1-ubyte[.gz]".
std::optional<FoundFile> recognise(std::string name) {
  if (ends_with(name, ".gz")) name.resize(name.size() - 3);
  if (!ends_with(name, "-ubyte")) return std::nullopt;
  name.resize(name.size() - 6);
  const auto labels_at = name.rfind("labels-idx1");
  if (labels_at != std::string::npos && labels_at + 11 == name.size()) {
    return FoundFile{name.substr(0, labels_at), IdxRole::Labels};
  }
  const auto images_at = name.rfind("images-idx");
  if (images_at == std::string::npos) return std::nullopt;
  const std::string digits = name.substr(images_at + 10);
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  return FoundFile{name.substr(0, images_at), IdxRole::Images};
}

struct PartialPair {
  std::string images;
  std::string labels;
};

// When both "x" and "x.gz" exist, the uncompressed one wins (it loads faster).
void keep_preferred(std::string& slot, const std::string& candidate) {
  const bool slot_is_gzip = ends_with(slot, ".gz");
  const bool candidate_is_gzip = ends_with(candidate, ".gz");
  if (slot.empty() || (slot_is_gzip && !candidate_is_gzip)) slot = candidate;
}

}  // namespace

IdxFolder find_idx_files(const std::string& folder, const std::string& dataset_name) {
  if (folder.empty()) {
    throw DataError(dataset_name +
                    ": data.path is empty; name the folder that holds the IDX "
                    "files");
  }
  const std::string shown = path_excerpt(folder);
  std::error_code error;
  const auto status = fs::status(folder, error);
  if (!fs::exists(status)) throw DataError(shown + ": folder not found");
  if (!fs::is_directory(status)) {
    throw DataError(shown + ": is a file; " + dataset_name +
                    " needs the folder that holds the IDX files");
  }
  std::vector<std::string> file_names;
  for (const auto& entry : fs::directory_iterator(folder, error)) {
    if (entry.is_regular_file(error)) file_names.push_back(entry.path().filename().string());
  }
  if (error) throw DataError(shown + ": cannot list the folder (" + error.message() + ")");
  return pair_idx_files(folder, file_names, dataset_name);
}

IdxFolder pair_idx_files(const std::string& folder, const std::vector<std::string>& file_names,
                         const std::string& dataset_name) {
  const std::string shown = path_excerpt(folder);
  std::map<std::string, PartialPair> pairs;  // by prefix, sorted for stable messages
  for (const std::string& name : file_names) {
    const auto found = recognise(name);
    if (!found) continue;
    PartialPair& pair = pairs[found->prefix];
    keep_preferred(found->role == IdxRole::Images ? pair.images : pair.labels,
                   (fs::path(folder) / name).string());
  }
  if (pairs.empty()) {
    // The hint written out here, so the app's translation test sees its words.
    const bool downloadable = dataset_name == "mnist" || dataset_name == "fashion-mnist";
    throw DataError(shown + ": holds no " + dataset_name +
                    " IDX files; expected t10k-images-idx3-ubyte.gz and t10k-labels-idx1-ubyte.gz "
                    "(and the train-* pair), raw or .gz" +
                    (downloadable ? "; download them with: datasets/download.sh " + dataset_name +
                                        " " + path_excerpt(folder)
                                  : ""));
  }

  std::vector<std::pair<std::string, IdxFilePair>> complete;
  for (const auto& [prefix, pair] : pairs) {
    if (pair.labels.empty()) {
      throw DataError(path_excerpt(pair.images) + ": no matching labels file " +
                      safe_excerpt(prefix) + "labels-idx1-ubyte(.gz) in " + shown);
    }
    if (pair.images.empty()) {
      throw DataError(path_excerpt(pair.labels) + ": no matching images file " +
                      safe_excerpt(prefix) + "images-idx3-ubyte(.gz) in " + shown);
    }
    complete.emplace_back(prefix, IdxFilePair{pair.images, pair.labels});
  }

  IdxFolder result;
  if (complete.size() == 1) {
    result.train = complete.front().second;
    return result;
  }
  for (const auto& [prefix, pair] : complete) {
    const bool is_train = prefix.find("train") != std::string::npos;
    const bool is_test =
        prefix.find("t10k") != std::string::npos || prefix.find("test") != std::string::npos;
    auto& slot = is_train ? result.train : result.test;
    if (is_train == is_test || slot) {
      throw DataError(shown + ": holds " + std::to_string(complete.size()) +
                      " IDX file pairs and cannot tell which to use; keep one train-* pair and "
                      "one t10k-* (or test-*) pair");
    }
    slot = pair;
  }
  return result;
}

}  // namespace pipelab
