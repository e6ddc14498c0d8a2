#include "ui/timeline/device_row_label.h"

#include <QCoreApplication>
#include <QStringList>
#include <algorithm>

namespace pipelab {

QString device_row_label(const Trace& trace, int device) {
  const auto info = std::find_if(trace.devices.begin(), trace.devices.end(),
                                 [device](const DeviceInfo& d) { return d.device == device; });
  if (info == trace.devices.end() || info->stages.empty())
    return QCoreApplication::translate("DeviceRowLabel", "device %1").arg(device);
  QStringList stages;
  for (int stage : info->stages) stages << QString::number(stage);
  QString label = info->stages.size() == 1
                      ? QCoreApplication::translate("DeviceRowLabel", "device %1 · stage %2")
                      : QCoreApplication::translate("DeviceRowLabel", "device %1 · stages %2");
  label = label.arg(device).arg(stages.join(','));
  label += QCoreApplication::translate("DeviceRowLabel", " · replica %1").arg(info->replica);
  const bool context_parallel = std::any_of(trace.devices.begin(), trace.devices.end(),
                                            [](const DeviceInfo& d) { return d.context > 0; });
  if (context_parallel)
    label += QCoreApplication::translate("DeviceRowLabel", " · context %1").arg(info->context);
  const bool sharded = std::any_of(trace.devices.begin(), trace.devices.end(),
                                   [](const DeviceInfo& d) { return d.shard > 0; });
  if (sharded)
    label += QCoreApplication::translate("DeviceRowLabel", " · shard %1").arg(info->shard);
  return label;
}

}  // namespace pipelab
