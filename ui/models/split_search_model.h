// SplitSearchModel: the planner view's data, apart from its widgets. It holds
// one search's candidates (core/planner/split_search.h) and turns each into a
// point: memory per device against throughput, from the simulator where the
// search ran it and from the search's estimates elsewhere. Filters keep a
// dimension to one value; the Pareto front is over the points shown that fit.
#pragma once

#include <QString>
#include <QStringList>
#include <array>
#include <optional>
#include <vector>

#include "core/planner/split_search.h"

namespace pipelab {

class SplitSearchModel {
 public:
  // The dimensions a user can filter by, in the order the view shows them.
  enum Dimension { Tp, Cp, Pp, Ep, Zero, Schedule, Recompute, Offload, kDimensionCount };
  static QString dimensionName(Dimension dimension);  // "tp", "cp", ..., "offload"

  struct Point {
    int candidate = 0;         // index into candidates()
    double memory_bytes = 0;   // per device: the simulated peak, or the estimate
    double samples_per_s = 0;  // the batch over the simulated (or estimated) step
    bool simulated = false;
    bool fits = false;    // memory at most the usable bytes
    // Simulated, fits, and no other such shown point has less memory and more
    // throughput. Estimated points are never on it: the cheap pass's estimates
    // may be optimistic, so the front stays what the simulator confirmed.
    bool pareto = false;
  };

  // `batch`: samples per step (the experiment's training.batch_size).
  void setResult(SearchResult result, int64_t batch);
  void clear();
  bool empty() const { return result_.considered.empty(); }

  const SearchResult& result() const { return result_; }
  const std::vector<SearchedPlan>& candidates() const { return result_.considered; }
  int64_t usableBytes() const { return result_.usable_bytes; }

  // A dimension's value of a candidate, as the filter shows it ("8", "zb-v",
  // "interleaved-1f1b x2", "selective").
  static QString valueOf(const ParallelPlan& plan, Dimension dimension);
  // Every value the candidates take in `dimension`, in a stable order.
  QStringList values(Dimension dimension) const;
  // Keeps `dimension` to `value`; an empty value shows every one.
  void setFilter(Dimension dimension, const QString& value);
  QString filter(Dimension dimension) const { return filters_[dimension]; }

  // The points the filters let through.
  const std::vector<Point>& points() const { return points_; }
  // The fastest point shown that fits (the one with less memory on ties), or none.
  std::optional<Point> fastestFitting() const;

  // A candidate's place among the search's best plans (1 the fastest), or 0.
  int rankOf(int candidate) const;
  // Why the search set a candidate aside, or null for one of the best.
  const PrunedPlan* prunedOf(int candidate) const;
  // The candidate that is the search's best plan `rank` (1 the fastest), or -1.
  int candidateOfRank(int rank) const;

 private:
  void rebuild();
  void index();

  SearchResult result_;
  std::vector<int> rank_;    // per candidate: 1-based rank among result_.best, or 0
  std::vector<int> pruned_;  // per candidate: index into result_.pruned, or -1
  int64_t batch_ = 1;
  std::array<QString, kDimensionCount> filters_;
  std::vector<Point> points_;
};

}  // namespace pipelab
