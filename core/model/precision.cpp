#include "core/model/precision.h"

namespace pipelab {

const char* precision_name(Precision precision) {
  return precision == Precision::Bf16Mixed ? "bf16-mixed" : "fp32";
}

std::optional<Precision> parse_precision(const std::string& name) {
  if (name == "fp32") return Precision::Fp32;
  if (name == "bf16-mixed") return Precision::Bf16Mixed;
  return std::nullopt;
}

std::vector<std::string> precision_names() { return {"fp32", "bf16-mixed"}; }

}  // namespace pipelab
