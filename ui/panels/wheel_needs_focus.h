// WheelNeedsFocus: in a scrolling panel, the mouse wheel scrolls the panel
// and does not change a combo box, spin box or slider it passes over; a field
// takes the wheel only once it has the focus (clicked or tabbed to). Qt's
// default lets a wheel over any field change it, so scrolling the
// Parallelism panel used to change its ZeRO stage or schedule by accident.
#pragma once

#include <QObject>

class QWidget;

namespace pipelab {

class WheelNeedsFocus : public QObject {
  Q_OBJECT

 public:
  // Installs the filter on every combo box, spin box and slider inside `panel`.
  static void install_in(QWidget* panel);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  explicit WheelNeedsFocus(QObject* parent) : QObject(parent) {}
};

}  // namespace pipelab
