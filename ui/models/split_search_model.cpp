#include "ui/models/split_search_model.h"

#include <algorithm>
#include <string>
#include <unordered_map>

namespace pipelab {

QString SplitSearchModel::dimensionName(Dimension dimension) {
  static const char* const names[] = {"tp",   "cp",       "pp",        "ep",
                                      "zero", "schedule", "recompute", "offload"};
  return QString::fromLatin1(names[dimension]);
}

QString SplitSearchModel::valueOf(const ParallelPlan& plan, Dimension dimension) {
  switch (dimension) {
    case Tp:
      return QString::number(plan.tp);
    case Cp:
      return QString::number(plan.cp);
    case Pp:
      return QString::number(plan.pp);
    case Ep:
      return QString::number(plan.ep);
    case Zero:  // ZeRO 3 keeping the gathered weights for the backward: "3 kept"
      return plan.zero == 3 && !plan.reshard_after_forward ? QStringLiteral("3 kept")
                                                           : QString::number(plan.zero);
    case Schedule: {
      QString name =
          plan.pp > 1 ? QString::fromUtf8(schedule_name(plan.schedule)) : QStringLiteral("none");
      if (plan.schedule == ScheduleKind::Interleaved1F1B)
        name += QStringLiteral(" x%1").arg(plan.chunks);
      return name;
    }
    case Recompute:
      return plan.recompute_blocks      ? QStringLiteral("block")
             : plan.recompute           ? QStringLiteral("full")
             : plan.selective_recompute ? QStringLiteral("selective")
                                        : QStringLiteral("none");
    case Offload:
      return QString::fromUtf8(offload_name(plan.offload));
    case kDimensionCount:
      break;
  }
  return {};
}

void SplitSearchModel::setResult(SearchResult result, int64_t batch) {
  result_ = std::move(result);
  batch_ = std::max<int64_t>(batch, 1);
  filters_ = {};
  index();
  rebuild();
}

// A split's label names every dimension the search varies: it identifies a
// candidate among the best plans and the pruned ones.
void SplitSearchModel::index() {
  std::unordered_map<std::string, int> candidate_of;
  for (size_t i = 0; i < result_.considered.size(); ++i)
    candidate_of.emplace(split_label(result_.considered[i].plan), static_cast<int>(i));
  rank_.assign(result_.considered.size(), 0);
  pruned_.assign(result_.considered.size(), -1);
  for (size_t r = 0; r < result_.best.size(); ++r)
    if (const auto found = candidate_of.find(split_label(result_.best[r].plan));
        found != candidate_of.end())
      rank_[found->second] = static_cast<int>(r) + 1;
  for (size_t p = 0; p < result_.pruned.size(); ++p)
    if (const auto found = candidate_of.find(split_label(result_.pruned[p].plan));
        found != candidate_of.end())
      pruned_[found->second] = static_cast<int>(p);
}

int SplitSearchModel::rankOf(int candidate) const {
  return candidate >= 0 && candidate < static_cast<int>(rank_.size()) ? rank_[candidate] : 0;
}

const PrunedPlan* SplitSearchModel::prunedOf(int candidate) const {
  if (candidate < 0 || candidate >= static_cast<int>(pruned_.size()) || pruned_[candidate] < 0)
    return nullptr;
  return &result_.pruned[pruned_[candidate]];
}

int SplitSearchModel::candidateOfRank(int rank) const {
  const auto found = std::find(rank_.begin(), rank_.end(), rank);
  return rank > 0 && found != rank_.end() ? static_cast<int>(found - rank_.begin()) : -1;
}

void SplitSearchModel::clear() { setResult({}, 1); }

QStringList SplitSearchModel::values(Dimension dimension) const {
  QStringList found;
  for (const SearchedPlan& candidate : result_.considered) {
    const QString value = valueOf(candidate.plan, dimension);
    if (!found.contains(value)) found.push_back(value);
  }
  // Numbers in numeric order, names in the search's order of first appearance.
  if (dimension == Tp || dimension == Cp || dimension == Pp || dimension == Ep || dimension == Zero)
    std::sort(found.begin(), found.end(), [](const QString& a, const QString& b) {
      // By the leading number ("3 kept" after "3").
      const int x = a.section(QLatin1Char(' '), 0, 0).toInt(),
                y = b.section(QLatin1Char(' '), 0, 0).toInt();
      return x != y ? x < y : a < b;
    });
  return found;
}

void SplitSearchModel::setFilter(Dimension dimension, const QString& value) {
  filters_[dimension] = value;
  rebuild();
}

std::optional<SplitSearchModel::Point> SplitSearchModel::fastestFitting() const {
  std::optional<Point> fastest;
  for (const Point& point : points_)
    if (point.fits && point.simulated &&
        (!fastest || point.samples_per_s > fastest->samples_per_s ||
                       (point.samples_per_s == fastest->samples_per_s &&
                        point.memory_bytes < fastest->memory_bytes)))
      fastest = point;
  return fastest;
}

void SplitSearchModel::rebuild() {
  points_.clear();
  for (size_t i = 0; i < result_.considered.size(); ++i) {
    const SearchedPlan& candidate = result_.considered[i];
    bool shown = true;
    for (int d = 0; d < kDimensionCount && shown; ++d)
      shown = filters_[d].isEmpty() ||
              valueOf(candidate.plan, static_cast<Dimension>(d)) == filters_[d];
    if (!shown) continue;
    Point point;
    point.candidate = static_cast<int>(i);
    point.simulated = candidate.simulated;
    point.memory_bytes =
        static_cast<double>(candidate.simulated ? candidate.peak_bytes : candidate.memory_estimate);
    const double step = candidate.simulated ? candidate.step_s : candidate.step_estimate_s;
    point.samples_per_s = step > 0 ? static_cast<double>(batch_) / step : 0;
    point.fits = point.memory_bytes <= static_cast<double>(result_.usable_bytes);
    points_.push_back(point);
  }
  // The front: in order of memory, each simulated fitting point faster than
  // every one before it.
  std::vector<Point*> fitting;
  for (Point& point : points_)
    if (point.fits && point.simulated) fitting.push_back(&point);
  std::sort(fitting.begin(), fitting.end(), [](const Point* a, const Point* b) {
    if (a->memory_bytes != b->memory_bytes) return a->memory_bytes < b->memory_bytes;
    return a->samples_per_s > b->samples_per_s;
  });
  double fastest = -1;
  for (Point* point : fitting)
    if (point->samples_per_s > fastest) {
      point->pareto = true;
      fastest = point->samples_per_s;
    }
}

}  // namespace pipelab
