// PresetNote: the open preset's title and "what to see" (with its formula) in
// a strip above the timeline, where a class looks while the figure runs.
// Hidden while no preset is open; a click hides it.
#pragma once

#include <QLabel>

namespace pipelab {

class PresetNote : public QLabel {
  Q_OBJECT

 public:
  explicit PresetNote(QWidget* parent = nullptr);

  // An empty title hides the note (another experiment was opened).
  void showPreset(const QString& title, const QString& what_to_see);

 protected:
  void mouseReleaseEvent(QMouseEvent* event) override;
};

}  // namespace pipelab
