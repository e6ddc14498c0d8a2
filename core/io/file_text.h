// Finding and reading the text files a user names (experiments, hardware
// files), and reporting what is wrong with one. Internal to core/io.
#pragma once

#include <string>
#include <vector>

namespace pipelab {

// A relative path is looked up beside the file that names it (`base_dir`)
// first, then in the working directory; when it is in neither, the place
// beside the file, where it most likely belongs. "" stays "".
std::string resolve_path_beside(const std::string& path, const std::string& base_dir);

// The folder of `file_path`, absolute ("" for "").
std::string directory_of(const std::string& file_path);

// The file's text, refused (ExperimentError) when it is missing, a folder or
// unreadable. Reads at most one byte more than a JSON document may hold, so a
// huge file or an endless one (/dev/zero) is refused by the parser's size
// check, not read whole. `what` names the file in messages ("experiment file").
std::string read_text_file(const std::string& path, const std::string& what);

// Writes `text` beside `path`, then renames it into place, so a failed write
// never leaves half a file. Throws ExperimentError naming `what` ("experiment
// file") and the path.
void write_text_file(const std::string& path, const std::string& text, const std::string& what);

// Throws ExperimentError with the first problem and how many more there are
// ("... (and 2 more problems)"); does nothing when there are none.
void throw_problems(const std::vector<std::string>& problems);

}  // namespace pipelab
