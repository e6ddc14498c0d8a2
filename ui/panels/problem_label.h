// ProblemLabel: the red, word-wrapped note a panel shows under the fields a
// problem is about ("parallel.pp = 8 but the model has 5 layers ..."). Hidden
// while there is nothing to say.
#pragma once

#include <QLabel>
#include <QStringList>

namespace pipelab {

class ProblemLabel : public QLabel {
  Q_OBJECT

 public:
  explicit ProblemLabel(QWidget* parent = nullptr);
  void setProblems(const QStringList& problems);
  QStringList problems() const { return problems_; }

 private:
  QStringList problems_;
};

}  // namespace pipelab
