#include "ui/panels/local_arrow_keys.h"

#include <QKeyEvent>
#include <QWidget>

namespace pipelab {

LocalArrowKeys::LocalArrowKeys(QObject* parent, bool include_space)
    : QObject(parent), include_space_(include_space) {}

void LocalArrowKeys::install(QWidget* widget, bool include_space) {
  widget->installEventFilter(new LocalArrowKeys(widget, include_space));
}

bool LocalArrowKeys::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() == QEvent::ShortcutOverride) {
    auto* key_event = static_cast<QKeyEvent*>(event);
    const int key = key_event->key();
    const bool arrow =
        key == Qt::Key_Left || key == Qt::Key_Right || key == Qt::Key_Up || key == Qt::Key_Down;
    if (key_event->modifiers() == Qt::NoModifier &&
        (arrow || (include_space_ && key == Qt::Key_Space))) {
      event->accept();  // the widget gets the key press; no shortcut fires
      return true;
    }
  }
  return QObject::eventFilter(watched, event);
}

}  // namespace pipelab
