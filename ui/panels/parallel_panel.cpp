#include "ui/panels/parallel_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "core/io/experiment.h"
#include "core/io/hardware_catalogue.h"
#include "core/schedule/generators.h"
#include "core/sim/cluster_topology.h"
#include "core/sim/cost_model.h"
#include "ui/core_message_text.h"
#include "ui/models/experiment_document.h"
#include "ui/number_text.h"
#include "ui/panels/cluster_picture.h"
#include "ui/panels/local_arrow_keys.h"
#include "ui/panels/problem_label.h"

namespace pipelab {
namespace {

constexpr int kMaxMicrobatches = 256;

QSpinBox* make_spin(QWidget* parent, int minimum, int maximum) {
  auto* spin = new QSpinBox(parent);
  spin->setRange(minimum, maximum);
  spin->setKeyboardTracking(false);  // one edit per finished number, not per digit
  return spin;
}

}  // namespace

ParallelPanel::ParallelPanel(ExperimentDocument* document, const GpuAvailability& gpus,
                             QWidget* parent)
    : QWidget(parent), document_(document), gpus_(gpus) {
  dp_spin_ = make_spin(this, 1, 64);
  dp_spin_->setToolTip(tr("Data-parallel replicas: each holds the whole pipeline"));
  tp_spin_ = make_spin(this, 1, 16);
  tp_spin_->setToolTip(tr("Tensor-parallel shards per stage: each linear is split across them"));
  pp_spin_ = make_spin(this, 1, 64);
  pp_spin_->setToolTip(tr("Pipeline devices: the layer stack is cut into this many parts"));
  cp_spin_ = make_spin(this, 1, 16);
  cp_spin_->setToolTip(
      tr("Context-parallel ranks: each holds two of 2 cp chunks of every sequence, and "
         "each block's attention gathers the keys and values of all of them "
         "(Transformers; trains on the cpu and cuda backends)"));

  schedule_combo_ = new QComboBox(this);
  for (const std::string& name : schedule_names()) {
    const ScheduleKind kind = *parse_schedule(name);
    schedule_combo_->addItem(QString::fromStdString(name), static_cast<int>(kind));
    schedule_combo_->setItemData(schedule_combo_->count() - 1,
                                 QCoreApplication::translate("core", schedule_description(kind)),
                                 Qt::ToolTipRole);
  }
  schedule_description_ = new QLabel(this);
  schedule_description_->setWordWrap(true);
  schedule_description_->setStyleSheet(QStringLiteral("QLabel { color: #555; }"));
  chunks_spin_ = make_spin(this, 1, 8);
  chunks_spin_->setToolTip(tr("Virtual stages per pipeline device (interleaved-1f1b; 2 for zb-v and dualpipev)"));

  microbatch_slider_ = new QSlider(Qt::Horizontal, this);
  microbatch_slider_->setTickPosition(QSlider::TicksBelow);
  microbatch_slider_->setPageStep(1);
  LocalArrowKeys::install(microbatch_slider_);
  microbatch_label_ = new QLabel(this);
  microbatch_label_->setMinimumWidth(70);
  predicted_bubble_label_ = new QLabel(this);
  // A line of its own, not a wrapped second line: a form row does not grow
  // when a label's wrapped text does (seen in the Chinese UI).
  collectives_label_ = new QLabel(this);
  collectives_label_->setVisible(false);

  update_combo_ = new QComboBox(this);
  update_combo_->addItem(tr("sync"), static_cast<int>(UpdateMode::Sync));
  update_combo_->addItem(tr("async"), static_cast<int>(UpdateMode::Async));
  update_combo_->setToolTip(
      tr("Sync: every replica applies the same averaged gradient each step. Async: replicas push "
         "gradients to a parameter server and may read weights up to 'staleness' steps old."));
  staleness_spin_ = make_spin(this, 0, 64);
  recompute_check_ = new QCheckBox(tr("Recompute activations in backward"), this);
  recompute_check_->setToolTip(
      tr("Keep only each stage's input from the forward and rebuild the rest before the backward: "
         "less memory, one more forward per micro-batch"));
  block_recompute_check_ = new QCheckBox(tr("… one block at a time, as Megatron-LM"), this);
  block_recompute_check_->setToolTip(
      tr("Transformers: keep each block's input, not only the stage's, and rebuild one block at a "
         "time in the backward: the memory of Megatron-LM's full recomputation. Trains on the cpu "
         "backend; the cuda backend rebuilds whole stages"));
  recompute_layers_spin_ = make_spin(this, 1, 128);
  recompute_layers_spin_->setToolTip(
      tr("Blocks rebuilt together: the input of every n-th block is kept and n blocks are rebuilt "
         "at a time (Megatron-LM's --recompute-num-layers); more blocks keep fewer inputs and "
         "rebuild more at once"));
  selective_recompute_check_ = new QCheckBox(tr("Recompute only attention scores (selective)"), this);
  selective_recompute_check_->setToolTip(
      tr("Transformers: keep no attention scores from the forward and recompute them in the "
         "backward, the largest activation for little compute (Korthikanti et al.)"));
  offload_combo_ = new QComboBox(this);
  offload_combo_->addItem(tr("nothing"), static_cast<int>(OffloadMode::None));
  offload_combo_->addItem(tr("activations"), static_cast<int>(OffloadMode::Activations));
  offload_combo_->addItem(tr("optimizer state"), static_cast<int>(OffloadMode::Optimizer));
  offload_combo_->setToolTip(
      tr("Activations: copy each forward's activations to host memory on the copy lane and bring them "
         "back just before their backward (free while the copies hide behind compute). Optimizer "
         "state: keep it in host memory and run the update there (ZeRO-Offload)"));
  zero_combo_ = new QComboBox(this);
  zero_combo_->addItem(tr("0: every replica holds everything"), 0);
  zero_combo_->addItem(tr("1: optimizer state sharded"), 1);
  zero_combo_->addItem(tr("2: + gradients sharded"), 2);
  zero_combo_->addItem(tr("3: + weights sharded (FSDP)"), 3);
  zero_combo_->setToolTip(
      tr("ZeRO: the data-parallel replicas share out the optimizer state, then the gradients, then "
         "the "
         "weights (each holds 1/dp), paid for with reduce-scatters and all-gathers. Every stage "
         "trains "
         "and is predicted; 2 and 3 need pp = 1"));
  reshard_check_ = new QCheckBox(tr("Free gathered weights after the forward"), this);
  reshard_check_->setToolTip(tr(
      "ZeRO 3 (FSDP's reshard_after_forward): free each layer's gathered weights after its forward "
      "and gather them again for its backward (least memory), or keep them until the backward "
      "(one gather per forward pass instead of two: less traffic, more memory)"));
  sequence_parallel_check_ = new QCheckBox(tr("Sequence parallel"), this);
  sequence_parallel_check_->setToolTip(
      tr("Transformers with tp > 1: split the norms, dropouts and residuals along the sequence "
         "instead of repeating them on every shard; all-reduces become reduce-scatter + all-gather"));
  partition_combo_ = new QComboBox(this);
  for (PartitionRule rule : {PartitionRule::Balanced, PartitionRule::Uniform, PartitionRule::Params,
                             PartitionRule::Explicit})
    partition_combo_->addItem(QString::fromLatin1(partition_name(rule)), static_cast<int>(rule));
  partition_combo_->setToolTip(
      tr("balanced: even FLOPs per stage; uniform: even layer counts; params: even parameter "
         "counts; explicit: the boundaries set in the Model panel"));

  profile_combo_ = new QComboBox(this);
  profile_combo_->addItem(tr("unit costs (F = B = W = 1)"), QStringLiteral("unit"));
  for (const std::string& name : device_profile_names())
    profile_combo_->addItem(QString::fromStdString(name), QString::fromStdString(name));
  profile_combo_->setToolTip(tr("The device the predicted timeline is simulated on"));
  nodes_spin_ = make_spin(this, 0, 4096);
  nodes_spin_->setSpecialValueText(tr("as many as needed"));
  nodes_spin_->setToolTip(tr("How many nodes of the device's node type the run is placed on "
                             "(tensor parallel innermost, pipeline outermost, as Megatron-LM does)"));
  overlap_check_ = new QCheckBox(tr("Overlap gradient all-reduce with the backward"), this);
  overlap_check_->setToolTip(
      tr("Predict the data-parallel gradient all-reduce in buckets under the last backward, as DDP "
         "and Megatron-LM do; off: after the backward"));
  cluster_label_ = new QLabel(this);
  cluster_label_->setWordWrap(true);
  cluster_label_->setStyleSheet(QStringLiteral("QLabel { color: #555; }"));
  cluster_picture_ = new ClusterPicture(this);
  cluster_picture_->setToolTip(
      tr("Each box is a node, each square a device: its colour is its pipeline stage, "
         "t its tensor-parallel shard, d its data-parallel replica"));

  backend_combo_ = new QComboBox(this);
  backend_combo_->addItem(tr("CPU threads"), QStringLiteral("cpu"));
  backend_combo_->addItem(tr("CUDA"), QStringLiteral("cuda"));
  if (!gpus_.usable()) {
    // Greyed out, with the reason where the user looks for it.
    if (auto* model = qobject_cast<QStandardItemModel*>(backend_combo_->model())) {
      QStandardItem* cuda = model->item(1);
      cuda->setEnabled(false);
      cuda->setToolTip(gpus_.reason_unusable());
    }
  }
  threads_spin_ = make_spin(this, 0, 256);
  threads_spin_->setSpecialValueText(tr("one per device"));
  backend_note_ = new QLabel(this);
  backend_note_->setWordWrap(true);
  backend_note_->setText(gpus_.usable() ? gpus_.description() : gpus_.reason_unusable());
  backend_note_->setStyleSheet(QStringLiteral("QLabel { color: #555; }"));

  problem_label_ = new ProblemLabel(this);

  auto* grid_box = new QGroupBox(tr("Devices"), this);
  auto* grid_form = new QFormLayout(grid_box);
  auto* grid_row = new QHBoxLayout;
  grid_row->addWidget(new QLabel(tr("dp"), this));
  grid_row->addWidget(dp_spin_);
  grid_row->addWidget(new QLabel(tr("tp"), this));
  grid_row->addWidget(tp_spin_);
  grid_row->addWidget(new QLabel(tr("pp"), this));
  grid_row->addWidget(pp_spin_);
  grid_row->addWidget(new QLabel(tr("cp"), this));
  grid_row->addWidget(cp_spin_);
  grid_form->addRow(grid_row);
  plan_button_ = new QToolButton(this);  // shows the window's Plan for me… once setPlanAction() gives it
  plan_button_->setVisible(false);
  grid_form->addRow(plan_button_);

  auto* schedule_box = new QGroupBox(tr("Pipeline schedule"), this);
  auto* schedule_form = new QFormLayout(schedule_box);
  schedule_form->addRow(tr("Schedule:"), schedule_combo_);
  schedule_form->addRow(schedule_description_);
  schedule_form->addRow(tr("Chunks:"), chunks_spin_);
  auto* slider_row = new QHBoxLayout;
  slider_row->addWidget(microbatch_slider_, 1);
  slider_row->addWidget(microbatch_label_);
  schedule_form->addRow(tr("Micro-batches:"), slider_row);
  schedule_form->addRow(predicted_bubble_label_);
  schedule_form->addRow(collectives_label_);
  schedule_form->addRow(tr("Update:"), update_combo_);
  schedule_form->addRow(tr("Staleness:"), staleness_spin_);
  schedule_form->addRow(recompute_check_);
  schedule_form->addRow(block_recompute_check_);
  schedule_form->addRow(tr("Blocks per checkpoint:"), recompute_layers_spin_);
  schedule_form->addRow(selective_recompute_check_);
  schedule_form->addRow(tr("Offload to host:"), offload_combo_);
  schedule_form->addRow(tr("ZeRO stage:"), zero_combo_);
  schedule_form->addRow(reshard_check_);
  schedule_form->addRow(sequence_parallel_check_);
  schedule_form->addRow(tr("Partition rule:"), partition_combo_);
  schedule_form->addRow(tr("Predict on:"), profile_combo_);
  schedule_form->addRow(tr("Nodes:"), nodes_spin_);
  schedule_form->addRow(cluster_label_);
  schedule_form->addRow(cluster_picture_);
  schedule_form->addRow(overlap_check_);

  auto* backend_box = new QGroupBox(tr("Backend"), this);
  auto* backend_form = new QFormLayout(backend_box);
  backend_form->addRow(tr("Run on:"), backend_combo_);
  backend_form->addRow(tr("CPU threads:"), threads_spin_);
  backend_form->addRow(backend_note_);

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(grid_box);
  layout->addWidget(schedule_box);
  layout->addWidget(backend_box);
  layout->addWidget(problem_label_);
  layout->addStretch();

  auto edit_int = [this](QSpinBox* spin, int ParallelPlan::*field) {
    connect(spin, &QSpinBox::valueChanged, this, [this, field](int value) {
      document_->edit([=](Experiment& e) { e.parallel.*field = value; });
    });
  };
  edit_int(dp_spin_, &ParallelPlan::dp);
  edit_int(tp_spin_, &ParallelPlan::tp);
  edit_int(pp_spin_, &ParallelPlan::pp);
  edit_int(cp_spin_, &ParallelPlan::cp);
  edit_int(chunks_spin_, &ParallelPlan::chunks);
  edit_int(staleness_spin_, &ParallelPlan::staleness);
  edit_int(recompute_layers_spin_, &ParallelPlan::recompute_layers);

  connect(schedule_combo_, &QComboBox::activated, this, [this] {
    const auto kind = static_cast<ScheduleKind>(schedule_combo_->currentData().toInt());
    document_->edit([kind](Experiment& e) {
      e.parallel.schedule = kind;
      // Chunks only mean something for the interleaved schedule; a V placement
      // (zb-v, dualpipev) always has 2.
      if (kind != ScheduleKind::Interleaved1F1B) e.parallel.chunks = 1;
      if (kind == ScheduleKind::Interleaved1F1B && e.parallel.chunks < 2) e.parallel.chunks = 2;
      if (uses_v_placement(kind)) e.parallel.chunks = 2;
    });
  });
  connect(microbatch_slider_, &QSlider::valueChanged, this, [this](int position) {
    if (position < 0 || position >= static_cast<int>(microbatch_choices_.size())) return;
    const int microbatches = microbatch_choices_[position];
    document_->edit([microbatches](Experiment& e) { e.parallel.microbatches = microbatches; });
  });
  connect(update_combo_, &QComboBox::activated, this, [this] {
    const auto mode = static_cast<UpdateMode>(update_combo_->currentData().toInt());
    document_->edit([mode](Experiment& e) { e.parallel.update = mode; });
  });
  // Full and selective recomputation exclude each other (parallel.recompute is
  // one field); full recomputation and offloading both free the activations.
  connect(recompute_check_, &QCheckBox::toggled, this, [this](bool on) {
    document_->edit([on](Experiment& e) {
      e.parallel.recompute = on;
      if (!on) e.parallel.recompute_blocks = false;
      if (!on) e.parallel.recompute_layers = 1;
      if (on) e.parallel.selective_recompute = false;
      if (on && e.parallel.offload == OffloadMode::Activations) e.parallel.offload = OffloadMode::None;
    });
  });
  connect(zero_combo_, &QComboBox::activated, this, [this] {
    const int zero = zero_combo_->currentData().toInt();
    document_->edit([zero](Experiment& e) {
      e.parallel.zero = zero;
      if (zero != 3)
        e.parallel.reshard_after_forward = true;  // only zero 3 gathers weights for use
    });
  });
  connect(reshard_check_, &QCheckBox::toggled, this, [this](bool on) {
    document_->edit([on](Experiment& e) { e.parallel.reshard_after_forward = on; });
  });
  connect(offload_combo_, &QComboBox::activated, this, [this] {
    const auto mode = static_cast<OffloadMode>(offload_combo_->currentData().toInt());
    document_->edit([mode](Experiment& e) {
      e.parallel.offload = mode;
      if (mode == OffloadMode::Activations) e.parallel.recompute = false;
      if (mode == OffloadMode::Activations) e.parallel.recompute_blocks = false;
      if (!e.parallel.recompute_blocks) e.parallel.recompute_layers = 1;
    });
  });
  connect(block_recompute_check_, &QCheckBox::toggled, this, [this](bool on) {
    document_->edit([on](Experiment& e) {
      e.parallel.recompute_blocks = on && e.parallel.recompute;
      if (!e.parallel.recompute_blocks) e.parallel.recompute_layers = 1;  // groups of blocks only
    });
  });
  connect(selective_recompute_check_, &QCheckBox::toggled, this, [this](bool on) {
    document_->edit([on](Experiment& e) {
      e.parallel.selective_recompute = on;
      if (on) e.parallel.recompute = false;
      if (on) e.parallel.recompute_blocks = false;
      if (on) e.parallel.recompute_layers = 1;
    });
  });
  connect(sequence_parallel_check_, &QCheckBox::toggled, this, [this](bool on) {
    document_->edit([on](Experiment& e) { e.parallel.sequence_parallel = on; });
  });
  connect(partition_combo_, &QComboBox::activated, this, [this] {
    const auto rule = static_cast<PartitionRule>(partition_combo_->currentData().toInt());
    document_->edit([rule](Experiment& e) { e.parallel.partition = rule; });
  });
  connect(profile_combo_, &QComboBox::activated, this, [this] {
    const std::string profile = profile_combo_->currentData().toString().toStdString();
    document_->edit([profile](Experiment& e) { e.simulation.profile = profile; });
  });
  connect(overlap_check_, &QCheckBox::toggled, this, [this](bool on) {
    document_->edit([on](Experiment& e) { e.simulation.overlap_grad_reduce = on; });
  });
  connect(nodes_spin_, &QSpinBox::valueChanged, this, [this](int nodes) {
    document_->edit([nodes](Experiment& e) { e.simulation.cluster.nodes = nodes; });
  });
  connect(backend_combo_, &QComboBox::activated, this, [this] {
    const std::string type = backend_combo_->currentData().toString().toStdString();
    document_->edit([type](Experiment& e) { e.backend.type = type; });
  });
  connect(threads_spin_, &QSpinBox::valueChanged, this, [this](int threads) {
    document_->edit([threads](Experiment& e) { e.backend.threads = threads; });
  });
  connect(document_, &ExperimentDocument::changed, this, &ParallelPanel::refreshFromDocument);
  refreshFromDocument();
}

void ParallelPanel::rebuildMicrobatchChoices() {
  const Experiment& experiment = document_->experiment();
  const ParallelPlan& plan = experiment.parallel;
  const int64_t per_replica = experiment.training.batch_size / std::max(1, plan.dp);
  std::vector<int> choices;
  // Counts that split each replica's batch evenly; interleaving also needs a
  // multiple of pp, dualpipev at least 2 pp.
  const bool interleaved = plan.schedule == ScheduleKind::Interleaved1F1B;
  const bool dualpipe_v = plan.schedule == ScheduleKind::DualPipeV;
  const int limit = static_cast<int>(std::min<int64_t>(per_replica, kMaxMicrobatches));
  for (int m = 1; m <= limit; ++m) {
    if (per_replica % m != 0) continue;
    if (interleaved && m % std::max(1, plan.pp) != 0) continue;
    if (dualpipe_v && !dualpipe_v_microbatches_problem(std::max(1, plan.pp), m).empty()) continue;
    choices.push_back(m);
  }
  if (std::find(choices.begin(), choices.end(), plan.microbatches) == choices.end()) {
    choices.push_back(plan.microbatches);  // keep the file's value visible, even if invalid
    std::sort(choices.begin(), choices.end());
  }
  microbatch_choices_ = choices;
  const QSignalBlocker blocker(microbatch_slider_);
  microbatch_slider_->setRange(0, static_cast<int>(choices.size()) - 1);
  const auto position = std::find(choices.begin(), choices.end(), plan.microbatches);
  microbatch_slider_->setValue(static_cast<int>(position - choices.begin()));
}

void ParallelPanel::refreshFromDocument() {
  const Experiment& experiment = document_->experiment();
  const ParallelPlan& plan = experiment.parallel;
  auto set_spin = [](QSpinBox* spin, int value) {
    const QSignalBlocker blocker(spin);
    spin->setValue(value);
  };
  auto set_combo = [](QComboBox* combo, const QVariant& data) {
    const QSignalBlocker blocker(combo);
    combo->setCurrentIndex(combo->findData(data));
  };
  set_spin(dp_spin_, plan.dp);
  set_spin(tp_spin_, plan.tp);
  set_spin(pp_spin_, plan.pp);
  set_spin(cp_spin_, plan.cp);
  set_spin(chunks_spin_, plan.chunks);
  set_spin(staleness_spin_, plan.staleness);
  set_spin(recompute_layers_spin_, plan.recompute_layers);
  set_spin(threads_spin_, experiment.backend.threads);
  set_combo(schedule_combo_, static_cast<int>(plan.schedule));
  set_combo(update_combo_, static_cast<int>(plan.update));
  set_combo(offload_combo_, static_cast<int>(plan.offload));
  set_combo(zero_combo_, plan.zero);
  set_combo(partition_combo_, static_cast<int>(plan.partition));
  set_combo(profile_combo_, QString::fromStdString(experiment.simulation.profile));
  set_spin(nodes_spin_, experiment.simulation.cluster.nodes);
  refreshCluster(experiment);
  set_combo(backend_combo_, QString::fromStdString(experiment.backend.type));
  const auto set_check = [](QCheckBox* check, bool on) {
    const QSignalBlocker blocker(check);
    check->setChecked(on);
  };
  set_check(recompute_check_, plan.recompute);
  set_check(block_recompute_check_, plan.recompute_blocks);
  set_check(selective_recompute_check_, plan.selective_recompute);
  set_check(sequence_parallel_check_, plan.sequence_parallel);
  set_check(reshard_check_, plan.reshard_after_forward);
  set_check(overlap_check_, experiment.simulation.overlap_grad_reduce);
  // Offered where they mean something; a set one stays enabled so it can be cleared.
  const bool transformer = is_sequence_model(experiment.model);
  selective_recompute_check_->setEnabled(transformer || plan.selective_recompute);
  block_recompute_check_->setEnabled((transformer && plan.recompute) || plan.recompute_blocks);
  recompute_layers_spin_->setEnabled(plan.recompute_blocks || plan.recompute_layers != 1);
  sequence_parallel_check_->setEnabled((transformer && plan.tp > 1) || plan.sequence_parallel);
  reshard_check_->setEnabled(plan.zero == 3 || !plan.reshard_after_forward);
  schedule_description_->setText(
      QCoreApplication::translate("core", schedule_description(plan.schedule)));
  chunks_spin_->setEnabled(plan.schedule == ScheduleKind::Interleaved1F1B);
  staleness_spin_->setEnabled(plan.update == UpdateMode::Async);
  threads_spin_->setEnabled(experiment.backend.type == "cpu");

  rebuildMicrobatchChoices();
  const int64_t samples = microbatch_size(experiment);
  microbatch_label_->setText(tr("m = %1").arg(plan.microbatches));
  microbatch_slider_->setToolTip(
      tr("%1 micro-batches of %2 samples per replica").arg(plan.microbatches).arg(samples));
}

void ParallelPanel::setPlanAction(QAction* plan) {
  plan_button_->setDefaultAction(plan);
  plan_button_->setToolButtonStyle(Qt::ToolButtonTextOnly);
  plan_button_->setVisible(plan != nullptr);
}

void ParallelPanel::setProblems(const QStringList& problems) {
  problem_label_->setProblems(problems);
}

void ParallelPanel::setPredictedBubble(double fraction, double collectives) {
  // Tensor parallelism's idle time is mostly waiting on its collectives.
  const bool communicates = std::isfinite(fraction) && collectives >= 0.005;
  collectives_label_->setVisible(communicates);
  if (!std::isfinite(fraction)) {
    predicted_bubble_label_->setText(tr("Predicted bubble: —"));
    return;
  }
  predicted_bubble_label_->setText(
      tr("Predicted bubble: %1 of device time idle").arg(percent_text(fraction)));
  if (communicates)
    collectives_label_->setText(
        tr("of which %1 in collectives (see Overhead)").arg(percent_text(collectives)));
}

// Where the prediction places the devices, and which groups that puts on the
// network: what a student should see before reading the timeline.
void ParallelPanel::refreshCluster(const Experiment& experiment) {
  const bool unit = experiment.simulation.profile == "unit";
  nodes_spin_->setEnabled(!unit);
  if (unit) {
    cluster_label_->setText(tr("Unit costs: no hardware, every op takes its unit."));
    cluster_picture_->clear();
    return;
  }
  try {
    const ClusterSpec cluster = experiment_cluster(experiment);
    const DeviceLayout layout = experiment.parallel.layout();
    const ClusterTopology topology =
        place_devices(layout, cluster.node, experiment.parallel.sequence_parallel);
    const PlacementSummary placed = summarize_placement(layout, topology);
    cluster_picture_->setPlacement(layout, topology);
    QStringList crossing;
    if (placed.tensor_parallel_crosses) crossing << tr("tensor-parallel groups");
    if (placed.context_parallel_crosses) crossing << tr("context-parallel rings");
    if (placed.data_parallel_crosses) crossing << tr("data-parallel groups");
    if (placed.pipeline_crosses) crossing << tr("pipeline sends");
    const QString node_name = QString::fromStdString(cluster.node.name.empty() ? cluster.node.id : cluster.node.name);
    QString text = tr("%1 × %2 (%3 devices each, %4 in use)")
                       .arg(cluster.nodes)
                       .arg(node_name)
                       .arg(cluster.node.devices_per_node)
                       .arg(layout.device_count());
    text += crossing.isEmpty() ? tr("; every group stays inside one node")
                               : tr("; across the network: %1").arg(crossing.join(tr(", ")));
    cluster_label_->setText(text);
  } catch (const std::exception& error) {
    cluster_label_->setText(core_message_text(QString::fromUtf8(error.what())));
    cluster_picture_->clear();
  }
}

}  // namespace pipelab
