// LocalArrowKeys: lets a widget keep the arrow keys (and Space) it needs for
// itself even though the window binds Right to "step" and Space to "run".
// Qt gives window shortcuts precedence unless the focused widget claims the
// key in its ShortcutOverride event; sliders and tables do not, so this
// filter claims it for them.
#pragma once

#include <QObject>

class QWidget;

namespace pipelab {

class LocalArrowKeys : public QObject {
  Q_OBJECT

 public:
  // Installs a filter on `widget` (owned by it).
  static void install(QWidget* widget, bool include_space = false);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  LocalArrowKeys(QObject* parent, bool include_space);
  bool include_space_;
};

}  // namespace pipelab
