// ParallelPanel: how the model is split and run: dp x tp x pp, the pipeline
// schedule (with its one-line description), interleaving chunks, the
// micro-batch count (a slider that re-predicts the timeline as it moves),
// sync/async updates, recomputation, the partition rule, the cost model the
// prediction uses, and the backend (CPU threads, or CUDA when a GPU is there).
#pragma once

#include <QWidget>
#include <vector>

#include "ui/gpu_availability.h"

class QAction;
class QCheckBox;
class QComboBox;
class QLabel;
class QSlider;
class QSpinBox;
class QToolButton;

namespace pipelab {

class ClusterPicture;
class ExperimentDocument;
struct Experiment;
class ProblemLabel;

class ParallelPanel : public QWidget {
  Q_OBJECT

 public:
  ParallelPanel(ExperimentDocument* document, const GpuAvailability& gpus,
                QWidget* parent = nullptr);

  void setProblems(const QStringList& problems);
  // A button for the window's Plan for me… under the dp x tp x pp row.
  void setPlanAction(QAction* plan);
  // The predicted bubble fraction shown under the slider (NaN: none), and the
  // share of the run in collectives, which the bubble counts as idle.
  void setPredictedBubble(double fraction, double collectives = 0);

  QSlider* microbatchSlider() const { return microbatch_slider_; }
  QLabel* predictedBubbleLabel() const { return predicted_bubble_label_; }
  QLabel* collectivesLabel() const { return collectives_label_; }
  QComboBox* scheduleCombo() const { return schedule_combo_; }
  QComboBox* backendCombo() const { return backend_combo_; }
  QSpinBox* ppSpin() const { return pp_spin_; }
  QCheckBox* recomputeCheck() const { return recompute_check_; }
  QCheckBox* blockRecomputeCheck() const { return block_recompute_check_; }
  QSpinBox* recomputeLayersSpin() const { return recompute_layers_spin_; }
  QSpinBox* nodesSpin() const { return nodes_spin_; }
  QLabel* clusterLabel() const { return cluster_label_; }
  ClusterPicture* clusterPicture() const { return cluster_picture_; }
  QCheckBox* overlapCheck() const { return overlap_check_; }
  QComboBox* zeroCombo() const { return zero_combo_; }
  QCheckBox* reshardCheck() const { return reshard_check_; }
  // The micro-batch counts the slider steps through, in order.
  const std::vector<int>& microbatchChoices() const { return microbatch_choices_; }

 private:
  void refreshFromDocument();
  void refreshCluster(const Experiment& experiment);
  void rebuildMicrobatchChoices();

  ExperimentDocument* document_;
  GpuAvailability gpus_;
  QSpinBox* dp_spin_;
  QSpinBox* tp_spin_;
  QSpinBox* pp_spin_;
  QSpinBox* cp_spin_;
  QToolButton* plan_button_;
  QComboBox* schedule_combo_;
  QLabel* schedule_description_;
  QSpinBox* chunks_spin_;
  QSlider* microbatch_slider_;
  QLabel* microbatch_label_;
  QLabel* predicted_bubble_label_;
  QLabel* collectives_label_;  // the predicted run's share in collectives, when there is one
  QComboBox* update_combo_;
  QSpinBox* staleness_spin_;
  QCheckBox* recompute_check_;
  QCheckBox* block_recompute_check_;      // Transformers: each block as the unit (Megatron-LM)
  QSpinBox* recompute_layers_spin_;  // ... the blocks rebuilt together (--recompute-num-layers)
  QCheckBox* selective_recompute_check_;  // Transformers: the attention core only
  QComboBox* offload_combo_;              // parallel.offload
  QComboBox* zero_combo_;                 // parallel.zero
  QCheckBox* reshard_check_;              // parallel.reshard_after_forward (zero 3)
  QCheckBox* sequence_parallel_check_;    // Transformers with tp > 1
  QComboBox* partition_combo_;
  QComboBox* profile_combo_;
  QSpinBox* nodes_spin_;      // simulation.cluster.nodes (0: as many as needed)
  QLabel* cluster_label_;     // the nodes the prediction places the devices on
  ClusterPicture* cluster_picture_;  // and the same drawn: nodes, devices by stage
  QCheckBox* overlap_check_;  // simulation.overlap_grad_reduce
  QComboBox* backend_combo_;
  QSpinBox* threads_spin_;
  QLabel* backend_note_;
  ProblemLabel* problem_label_;
  std::vector<int> microbatch_choices_;
};

}  // namespace pipelab
