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
  if (inventory.gpus.empty()) {
    const QString reason = inventory.unavailable_reason.empty()
                               ? QCoreApplication::translate("GpuAvailability", "no CUDA device")
                               : QString::fromStdString(inventory.unavailable_reason);
    return QCoreApplication::translate("GpuAvailability", "No GPU can be used: %1.").arg(reason);
  }
  return {};
}

QString GpuAvailability::description() const {
  QStringList lines;
  for (const GpuInfo& gpu : inventory.gpus) {
    lines << QCoreApplication::translate("GpuAvailability", "GPU %1: %2, %3 (%4 free)")
                 .arg(gpu.index)
                 .arg(QString::fromStdString(gpu.name), bytes_text(double(gpu.total_bytes)),
                      bytes_text(double(gpu.free_bytes)));
  }
  return lines.join('\n');
}

}  // namespace pipelab
