#include "ui/gpu_availability.h"

#include <QCoreApplication>
#include <QStringList>

#include "ui/number_text.h"

namespace pipelab {

QString GpuAvailability::reason_unusable() const {
  if (!built_with_cuda)
    return QCoreApplication::translate(
        "GpuAvailability",
        "This build has no CUDA backend (configure with -DPIPELAB_CUDA=ON on a machine with the "
        "CUDA toolkit).");
  if (gpus.empty()) {
    const QString reason = unavailable_reason.isEmpty()
                               ? QCoreApplication::translate("GpuAvailability", "no CUDA device")
                               : unavailable_reason;
    return QCoreApplication::translate("GpuAvailability", "No GPU can be used: %1.").arg(reason);
  }
  return {};
}

QString GpuAvailability::description() const {
  QStringList lines;
  for (const GpuDescription& gpu : gpus) {
    lines << QCoreApplication::translate("GpuAvailability", "GPU %1: %2, %3 (%4 free)")
                 .arg(gpu.index)
                 .arg(gpu.name, bytes_text(double(gpu.total_bytes)),
                      bytes_text(double(gpu.free_bytes)));
  }
  return lines.join('\n');
}

}  // namespace pipelab
