#include "ui/panels/preset_note.h"

namespace pipelab {

PresetNote::PresetNote(QWidget* parent) : QLabel(parent) {
  setWordWrap(true);
  setTextFormat(Qt::RichText);
  setMargin(6);
  setCursor(Qt::PointingHandCursor);
  setToolTip(tr("Click to hide"));
  // A pale note colour that reads on light and dark styles alike.
  setStyleSheet(
      QStringLiteral("QLabel { background: #fff8dc; color: #333; border: 1px solid #e0d6a8; "
                     "border-radius: 3px; }"));
  hide();
}

void PresetNote::showPreset(const QString& title, const QString& what_to_see) {
  setText(title.isEmpty() ? QString()
                          : tr("<b>%1</b>: %2")
                                .arg(title.toHtmlEscaped(), what_to_see.toHtmlEscaped()));
  setVisible(!title.isEmpty());
}

void PresetNote::mouseReleaseEvent(QMouseEvent* event) {
  hide();
  QLabel::mouseReleaseEvent(event);
}

}  // namespace pipelab
