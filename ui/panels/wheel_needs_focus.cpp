#include "ui/panels/wheel_needs_focus.h"

#include <QAbstractSlider>
#include <QAbstractSpinBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QWheelEvent>

namespace pipelab {

void WheelNeedsFocus::install_in(QWidget* panel) {
  auto* filter = new WheelNeedsFocus(panel);
  QList<QWidget*> fields;
  for (QWidget* field : panel->findChildren<QComboBox*>()) fields << field;
  for (QWidget* field : panel->findChildren<QAbstractSpinBox*>()) fields << field;
  for (QWidget* field : panel->findChildren<QAbstractSlider*>()) fields << field;
  for (QWidget* field : fields) {
    // A scroll bar is a slider too: it keeps the wheel.
    if (field->inherits("QScrollBar")) continue;
    field->setFocusPolicy(Qt::StrongFocus);
    field->installEventFilter(filter);
  }
}

bool WheelNeedsFocus::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() != QEvent::Wheel) return false;
  auto* field = static_cast<QWidget*>(watched);
  if (field->hasFocus()) return false;
  // Hand the wheel to the panel behind the field, which scrolls.
  if (QWidget* behind = field->parentWidget()) QCoreApplication::sendEvent(behind, event);
  return true;
}

}  // namespace pipelab
