#include "ui/models/presets.h"

#include <QCoreApplication>

#include "core/io/experiment_io.h"
#include "ui/models/model_templates.h"

namespace pipelab {
namespace {

QString tr_preset(const char* text) { return QCoreApplication::translate("Presets", text); }

// The shared starting point: the spiral task on an input layer, eight equal
// hidden layers (so four or eight stages get equal work) and an output layer,
// wide enough that compute, not message latency, sets the pace; Adam.
Experiment base_experiment() {
  Experiment e = default_experiment();
  const auto linear = [](int64_t out) { return LayerSpec{LayerType::Linear, out, true, 0.0}; };
  const LayerSpec relu{LayerType::Relu, 0, true, 0.0};
  e.model.layers = {linear(256), relu};
  for (int hidden = 0; hidden < 8; ++hidden) {
    e.model.layers.push_back(linear(256));
    e.model.layers.push_back(relu);
  }
  e.model.layers.push_back(linear(3));
  e.training.batch_size = 64;
  e.training.steps = 200;
  e.training.eval_every = 25;
  e.parallel = ParallelPlan{};
  e.parallel.pp = 4;
  e.parallel.microbatches = 8;
  e.parallel.partition = PartitionRule::Balanced;
  // A real device profile, so the memory chart is in bytes and messages cost time.
  e.simulation.profile = "cpu-core";
  e.backend.type = "cpu";
  e.backend.threads = 0;
  return e;
}

// A model template's experiment (model_templates.h), by id.
Experiment transformer_template(const char* id) {
  for (const ModelTemplate& model_template : model_templates())
    if (model_template.id == QLatin1String(id)) return load_model_template(model_template);
  throw ExperimentError(std::string("no model template ") + id);
}

Preset make(const char* id, PresetTopic topic, const char* title, const char* what_to_see,
            Experiment e) {
  e.name = QCoreApplication::translate("Presets", title).toStdString();
  return Preset{QString::fromLatin1(id), tr_preset(title), tr_preset(what_to_see), topic, false,
                std::move(e), std::nullopt};
}

// A small convolutional net with batch norm on 8 x 8 "images" of Gaussian
// clusters, two data-parallel replicas of a batch of 8: each replica's batch
// norm sees 4 samples, few enough that normalising them alone shows. A run
// takes well under a second, no data set to download.
Experiment batch_norm_experiment() {
  Experiment e = base_experiment();
  e.model.input = {1, 8, 8};
  LayerSpec conv{LayerType::Conv2d, 8, false, 0.0};
  conv.kernel = 3;
  conv.padding = 1;
  LayerSpec residual{LayerType::ResidualBlock, 16, false, 0.0};
  residual.stride = 2;
  e.model.layers = {conv,
                    LayerSpec{LayerType::BatchNorm, 0, true, 0.0},
                    LayerSpec{LayerType::Relu, 0, true, 0.0},
                    residual,
                    LayerSpec{LayerType::GlobalAvgPool, 0, true, 0.0},
                    LayerSpec{LayerType::Linear, 4, true, 0.0}};
  e.data.source = "blobs";
  e.data.features = 64;
  e.data.classes = 4;
  e.data.noise = 1.0;
  e.training.batch_size = 8;
  e.training.steps = 100;  // Adam, as every base experiment
  e.parallel.pp = 1;
  e.parallel.dp = 2;
  e.parallel.microbatches = 1;
  e.parallel.schedule = ScheduleKind::GPipe;
  return e;
}

// Every batch norm of the model (a residual block's too) local or synced.
Experiment with_batch_norm_sync(Experiment e, bool sync) {
  for (LayerSpec& layer : e.model.layers)
    if (layer.type == LayerType::BatchNorm || layer.type == LayerType::ResidualBlock)
      layer.sync = sync;
  return e;
}

// Unit costs (the figures' abstract time), so the bars have the proportions of
// a textbook figure: every forward takes 1, a backward b + w, an update u.
Experiment with_unit_costs(Experiment e, double b, double w, double u) {
  e.simulation.profile = "unit";
  e.simulation.unit = UnitCosts{1.0, b, w, 0.0, u};
  return e;
}

}  // namespace

QString preset_topic_title(PresetTopic topic) {
  switch (topic) {
    case PresetTopic::PipelineSchedules:
      return tr_preset(QT_TRANSLATE_NOOP("Presets", "Pipeline schedules"));
    case PresetTopic::Memory:
      return tr_preset(QT_TRANSLATE_NOOP("Presets", "Memory"));
    case PresetTopic::AsynchronousUpdates:
      return tr_preset(QT_TRANSLATE_NOOP("Presets", "Asynchronous updates"));
    case PresetTopic::DataAndTensorParallel:
      return tr_preset(QT_TRANSLATE_NOOP("Presets", "Data and tensor parallel"));
    case PresetTopic::MixtureOfExperts:
      return tr_preset(QT_TRANSLATE_NOOP("Presets", "Mixture of experts"));
  }
  return {};
}

std::vector<Preset> presets() {
  std::vector<Preset> list;
  const PresetTopic schedules = PresetTopic::PipelineSchedules;
  const PresetTopic memory = PresetTopic::Memory;
  const PresetTopic asynchronous = PresetTopic::AsynchronousUpdates;
  const PresetTopic data_tensor = PresetTopic::DataAndTensorParallel;
  const PresetTopic experts = PresetTopic::MixtureOfExperts;

  // --- Pipeline schedules ---------------------------------------------------

  Experiment naive = base_experiment();
  naive.parallel.schedule = ScheduleKind::GPipe;
  naive.parallel.microbatches = 1;
  list.push_back(
      make("naive", schedules,
           QT_TRANSLATE_NOOP("Presets", "Naive model parallel (pp 4, 1 micro-batch)"),
           QT_TRANSLATE_NOOP("Presets",
                             "One device works at a time: 3 of 4 devices idle, a bubble of "
                             "(p-1)/p = 75 % (Statistics: the formula beside the measurement). "
                             "Drag the micro-batch slider, or pick the GPipe preset."),
           naive));

  // The naive pipeline in a textbook's proportions: F, B and U each one unit.
  Experiment naive_fbu = with_unit_costs(naive, 0.5, 0.5, 1.0);
  list.push_back(
      make("naive-fbu", schedules,
           QT_TRANSLATE_NOOP("Presets", "Naive F/B/U pipeline (pp 4, unit costs)"),
           QT_TRANSLATE_NOOP(
               "Presets",
               "Forward down the stages, backward back up, and each stage updates "
               "its own weights (U) after its backward. Each device is busy f+b+u = 3 of the "
               "step's p(f+b)+u = 9 units."),
           naive_fbu));

  // Model-parallel training as it is usually measured: the backward computes
  // the input and the weight gradient, each about a forward.
  Experiment backward_twice = with_unit_costs(naive, 1.0, 1.0, 0.0);
  list.push_back(make(
      "backward-twice-forward", schedules,
      QT_TRANSLATE_NOOP("Presets", "Model parallel, backward = 2 × forward (pp 4, unit costs)"),
      QT_TRANSLATE_NOOP("Presets",
                        "The backward bars are twice as long as the forwards (b = 2f: input "
                        "and weight gradients). Still one device at a time: the bubble "
                        "(p-1)/p does not depend on f and b."),
      backward_twice));

  Experiment gpipe = base_experiment();
  gpipe.parallel.schedule = ScheduleKind::GPipe;
  gpipe.parallel.microbatches = 8;
  list.push_back(make("gpipe", schedules,
                      QT_TRANSLATE_NOOP("Presets", "GPipe (pp 4, 8 micro-batches)"),
                      QT_TRANSLATE_NOOP("Presets",
                                        "Micro-batches fill the pipeline: the bubble falls to "
                                        "(p-1)/(m+p-1) = 3/11, shown beside the measured bubble "
                                        "in Statistics. Compare with the naive preset."),
                      gpipe));

  // GPipe as its paper measured it: with recomputation, on 2 and 4 partitions
  // of the same layers. Ten equal hidden layers split 5 + 5 over two devices
  // but 2 + 3 + 3 + 2 over four, the load imbalance of the paper's figure.
  Experiment overhead_2 = gpipe;
  const LayerSpec hidden{LayerType::Linear, 256, true, 0.0};
  const LayerSpec relu{LayerType::Relu, 0, true, 0.0};
  overhead_2.model.layers.insert(overhead_2.model.layers.end() - 1, {hidden, relu, hidden, relu});
  overhead_2.parallel.pp = 2;
  overhead_2.parallel.recompute = true;
  list.push_back(
      make("gpipe-overhead-2", schedules,
           QT_TRANSLATE_NOOP("Presets", "GPipe overhead breakdown, 2 partitions (recompute)"),
           QT_TRANSLATE_NOOP("Presets",
                             "The Overhead chart splits each device's time into compute, "
                             "recomputation, load imbalance and bubble, measured beside predicted. "
                             "Recomputation costs one more forward per micro-batch; the formula's "
                             "bubble is (p-1)/(m+p-1) = 1/9 (the updates after the last backward "
                             "keep every device busy a little longer). Compare with 4 partitions."),
           overhead_2));
  list.back().shows_overhead = true;

  Experiment overhead_4 = overhead_2;
  overhead_4.parallel.pp = 4;
  list.push_back(make(
      "gpipe-overhead-4", schedules,
      QT_TRANSLATE_NOOP("Presets", "GPipe overhead breakdown, 4 partitions (recompute)"),
      QT_TRANSLATE_NOOP("Presets",
                        "Twice the partitions: the formula's bubble grows to (p-1)/(m+p-1) = "
                        "3/11, and ten hidden layers no longer split evenly (2, 3, 3, 2): "
                        "devices 0 and 3 wait for the heavier middle ones, idle time the "
                        "Overhead chart shows as load imbalance on top of the bubble."),
      overhead_4));
  list.back().shows_overhead = true;

  // The two orders on the same micro-batches, in unit time: all forwards then
  // all backwards, or one forward then one backward.
  Experiment pipedream_order = with_unit_costs(gpipe, 1.0, 1.0, 0.0);
  pipedream_order.parallel.schedule = ScheduleKind::OneFOneB;
  list.push_back(make(
      "gpipe-vs-pipedream-order", schedules,
      QT_TRANSLATE_NOOP("Presets", "GPipe vs PipeDream order: 1F1B (pp 4, 8 micro-batches)"),
      QT_TRANSLATE_NOOP("Presets",
                        "PipeDream's order: after its warm-up forwards each device alternates "
                        "one forward and one backward. The bubble is GPipe's (p-1)/(m+p-1); what "
                        "changes is memory. Set the schedule to gpipe to see GPipe's order on "
                        "the same bars."),
      pipedream_order));

  Experiment interleaved = base_experiment();
  interleaved.parallel.schedule = ScheduleKind::Interleaved1F1B;
  interleaved.parallel.chunks = 2;
  interleaved.parallel.microbatches = 8;
  list.push_back(
      make("interleaved", schedules,
           QT_TRANSLATE_NOOP("Presets", "Interleaved 1F1B (pp 4, 2 chunks, 8 micro-batches)"),
           QT_TRANSLATE_NOOP("Presets",
                             "Each device holds two stages, so the pipeline fills in "
                             "half the time: bubble (p-1)/(v*m+p-1), at the price of "
                             "twice the sends."),
           interleaved));

  Experiment zero_bubble = base_experiment();
  zero_bubble.parallel.schedule = ScheduleKind::ZeroBubbleH1;
  zero_bubble.parallel.microbatches = 8;
  list.push_back(make("zero-bubble", schedules,
                      QT_TRANSLATE_NOOP("Presets", "Zero bubble ZB-H1 (pp 4, 8 micro-batches)"),
                      QT_TRANSLATE_NOOP("Presets",
                                        "The backward splits into BI (input gradient, light green) "
                                        "and BW (weight gradient, dark green); the BWs fill what "
                                        "would be 1F1B's bubbles."),
                      zero_bubble));

  // The two V schedules on the same model and micro-batches as ZB-H1, to compare.
  Experiment zb_v = zero_bubble;
  zb_v.parallel.schedule = ScheduleKind::ZeroBubbleV;
  zb_v.parallel.chunks = 2;
  list.push_back(make("zb-v", schedules,
                      QT_TRANSLATE_NOOP("Presets", "Zero bubble ZB-V (pp 4, 2 chunks in a V)"),
                      QT_TRANSLATE_NOOP("Presets",
                                        "Each device holds two stages in a V: device 0 runs the "
                                        "first and the last, so backwards start as soon as the "
                                        "first forwards come back up, and BWs fill the rest. "
                                        "Compare the bubble with ZB-H1, then with DualPipeV."),
                      zb_v));

  Experiment dualpipe_v = zb_v;
  dualpipe_v.parallel.schedule = ScheduleKind::DualPipeV;
  list.push_back(make("dualpipev", schedules,
                      QT_TRANSLATE_NOOP("Presets", "DualPipeV (pp 4, 2 chunks in a V)"),
                      QT_TRANSLATE_NOOP("Presets",
                                        "ZB-V's placement in DeepSeek's order: in the middle each "
                                        "forward of one chunk runs next to a whole backward (B) of "
                                        "the other, the pair DualPipe overlaps to hide its "
                                        "communication; only the drain splits BI and BW. Compare "
                                        "with the ZB-V preset."),
                      dualpipe_v));

  // --- Memory ---------------------------------------------------------------

  // The memory comparison needs activations that weigh: bigger micro-batches.
  Experiment gpipe_memory = base_experiment();
  gpipe_memory.parallel.schedule = ScheduleKind::GPipe;
  gpipe_memory.parallel.microbatches = 16;
  gpipe_memory.training.batch_size = 512;
  gpipe_memory.training.steps = 100;
  list.push_back(make("gpipe-memory", memory,
                      QT_TRANSLATE_NOOP("Presets", "GPipe memory (pp 4, 16 micro-batches)"),
                      QT_TRANSLATE_NOOP("Presets",
                                        "GPipe keeps every micro-batch's activations until the "
                                        "backwards start: watch device 0's activations climb to m "
                                        "= 16 micro-batches' worth in the Memory chart, and in the "
                                        "comparison beside 1F1B's, which never hold more than p = "
                                        "4."),
                      gpipe_memory));
  list.back().compare_with =
      RunPair{tr_preset(QT_TRANSLATE_NOOP("Presets", "GPipe, 16 micro-batches")),
              tr_preset(QT_TRANSLATE_NOOP("Presets", "1F1B, 16 micro-batches")), [](Experiment e) {
                e.parallel.schedule = ScheduleKind::OneFOneB;
                return e;
              }};

  Experiment one_f_one_b = gpipe_memory;
  one_f_one_b.parallel.schedule = ScheduleKind::OneFOneB;
  list.push_back(make("1f1b-memory", memory,
                      QT_TRANSLATE_NOOP("Presets", "DAPPLE (1F1B) memory (pp 4, 16 micro-batches)"),
                      QT_TRANSLATE_NOOP("Presets",
                                        "Same bubble as GPipe, but each device holds at most p - s "
                                        "micro-batches' activations (stage s): device 0's memory "
                                        "over time saw-tooths at 4 instead of climbing to 16. "
                                        "Compare the peak with the GPipe memory preset."),
                      one_f_one_b));

  // The figures are the cpu-core prediction of examples/offload_vs_recompute.json.
  Experiment offload = gpipe_memory;
  offload.parallel.offload = OffloadMode::Activations;
  list.push_back(make(
      "offload-vs-recompute", memory,
      QT_TRANSLATE_NOOP("Presets", "Offloading vs recomputation (GPipe, pp 4, 16 micro-batches)"),
      QT_TRANSLATE_NOOP("Presets",
                        "Each forward's activations go to host memory (OFFLOAD, brown, "
                        "on the copy lane) and come back just before their backward "
                        "(RELOAD). The copies hide behind compute: the predicted step "
                        "stays at 10.1 ms while device 0's peak falls from 4.1 to 2.3 MiB "
                        "(1.9 MiB wait on the host: the dashed line in Memory). Tick "
                        "Recompute instead (offload switches off): 2.2 MiB, but 13.3 ms."),
      offload));

  // --- Asynchronous updates -------------------------------------------------

  // PipeDream updates after every micro-batch; plain SGD keeps that update light.
  Experiment pipedream = base_experiment();
  pipedream.parallel.schedule = ScheduleKind::PipeDream;
  pipedream.parallel.microbatches = 8;
  pipedream.training.optimizer.type = "sgd";
  pipedream.training.optimizer.lr = 0.05;
  list.push_back(make("pipedream", asynchronous,
                      QT_TRANSLATE_NOOP("Presets", "PipeDream, asynchronous (pp 4)"),
                      QT_TRANSLATE_NOOP("Presets",
                                        "No flush between steps: devices never idle in steady "
                                        "state. Each bar shows the weight version it reads (v2, "
                                        "and a colour strip per version); each U makes the next "
                                        "version current. A backward reads its forward's version, "
                                        "stashed while p - s - 1 updates went by on stage s: "
                                        "Memory shows the stashed weights."),
                      pipedream));

  Experiment two_bw = base_experiment();
  two_bw.parallel.schedule = ScheduleKind::PipeDream2BW;
  two_bw.parallel.microbatches = 8;
  list.push_back(make("pipedream-2bw", asynchronous,
                      QT_TRANSLATE_NOOP("Presets", "PipeDream-2BW (pp 4)"),
                      QT_TRANSLATE_NOOP("Presets",
                                        "Gradients accumulate over the micro-batches and only two "
                                        "weight versions stay alive (two strip colours at a time): "
                                        "less stashed memory than PipeDream."),
                      two_bw));

  // PipeMare beside the PipeDream preset: the same order and settings, no stash.
  Experiment pipemare = pipedream;
  pipemare.parallel.schedule = ScheduleKind::PipeMare;
  list.push_back(make("pipemare", asynchronous,
                      QT_TRANSLATE_NOOP("Presets", "PipeMare vs PipeDream (pp 4)"),
                      QT_TRANSLATE_NOOP("Presets",
                                        "PipeDream's timeline with one weight version per stage: "
                                        "Memory shows no stashed weights (compare the PipeDream "
                                        "preset), and optimizer state holds PipeMare's velocity. "
                                        "A backward reads a newer version than its forward "
                                        "(its label and strip differ), p - s - 1 updates later "
                                        "on stage s. Switch its "
                                        "learning-rate rescheduling and discrepancy correction in "
                                        "the Training box to see their effect on the loss."),
                      pipemare));

  // Asynchronous data parallel next to the synchronous preset: same replicas,
  // same optimizer, and the default's three hidden layers (the presets' deeper
  // net does not learn at all from gradients two updates old).
  Experiment data_parallel = base_experiment();
  data_parallel.model = default_experiment().model;
  data_parallel.parallel.pp = 1;
  data_parallel.parallel.dp = 4;
  data_parallel.parallel.microbatches = 1;
  data_parallel.parallel.schedule = ScheduleKind::OneFOneB;
  Experiment async_data_parallel = data_parallel;
  async_data_parallel.parallel.update = UpdateMode::Async;
  list.push_back(make(
      "async-data-parallel", asynchronous,
      QT_TRANSLATE_NOOP("Presets", "Asynchronous data parallel, parameter server (dp 4)"),
      QT_TRANSLATE_NOOP("Presets",
                        "Each replica pushes its gradients to a parameter server and pulls the "
                        "newest weights without waiting for the others; a gradient may be at "
                        "most 'staleness' = 2 updates old (the v labels on the bars). Run trains "
                        "it, then the same replicas synchronously (ring all-reduce), and compares "
                        "the two: the stale gradients make the asynchronous loss fall more "
                        "slowly, while its replicas never wait for each other."),
      async_data_parallel));
  list.back().compare_with =
      RunPair{tr_preset(QT_TRANSLATE_NOOP("Presets", "Asynchronous, staleness 2")),
              tr_preset(QT_TRANSLATE_NOOP("Presets", "Synchronous, ring all-reduce")), [](Experiment e) {
                e.parallel.update = UpdateMode::Sync;
                return e;
              }};

  // --- Data and tensor parallel ----------------------------------------------

  list.push_back(make("data-parallel", data_tensor,
                      QT_TRANSLATE_NOOP("Presets", "Data parallel, ring all-reduce (dp 4)"),
                      QT_TRANSLATE_NOOP("Presets",
                                        "Four replicas each take a quarter of the batch, then "
                                        "average their gradients with a ring all-reduce (dark "
                                        "grey) before the update: every replica steps with the "
                                        "same weights. Compare with the asynchronous data "
                                        "parallel preset."),
                      data_parallel));

  // Is data parallel a bigger batch? Only with synced batch norm: two runs.
  list.push_back(make(
      "batchnorm-data-parallel", data_tensor,
      QT_TRANSLATE_NOOP("Presets", "Synced vs local BatchNorm in data parallel (dp 2)"),
      QT_TRANSLATE_NOOP(
          "Presets",
          "Is data parallel just a bigger batch? Batch norm computes y = (x - μ) / sqrt(σ² + "
          "ε) γ + β. Local (run A): each replica takes μ and σ² over its own 8/dp = 4 samples, "
          "so dp 2 trains differently from one device on the batch of 8, and its loss curve "
          "parts from run B's. Synced (run B): the replicas all-reduce each channel's Σx and "
          "Σx² (the extra ALLREDUCEs after every F and B on its timeline), so μ and σ² cover "
          "all 8 samples: exactly one device on the whole batch."),
      with_batch_norm_sync(batch_norm_experiment(), false)));
  list.back().compare_with = RunPair{
      tr_preset(QT_TRANSLATE_NOOP("Presets", "Local BatchNorm, dp 2")),
      tr_preset(QT_TRANSLATE_NOOP("Presets", "Synced BatchNorm, dp 2")),
      [](Experiment e) { return with_batch_norm_sync(std::move(e), true); }};

  Experiment tensor_parallel = base_experiment();
  tensor_parallel.parallel.pp = 1;
  tensor_parallel.parallel.tp = 4;
  tensor_parallel.parallel.microbatches = 1;
  tensor_parallel.parallel.schedule = ScheduleKind::OneFOneB;
  list.push_back(make("tensor-parallel", data_tensor,
                      QT_TRANSLATE_NOOP("Presets", "Tensor parallel (tp 4)"),
                      QT_TRANSLATE_NOOP("Presets",
                                        "Each linear layer is split over four devices (Megatron "
                                        "style): an all-reduce follows each pair of layers in "
                                        "the forward and in the backward."),
                      tensor_parallel));

  // Transformers start from the model templates (the shipped examples).
  Experiment megatron = transformer_template("tiny-gpt");
  megatron.parallel.tp = 2;
  megatron.parallel.pp = 2;
  list.push_back(
      make("megatron-attention", data_tensor,
           QT_TRANSLATE_NOOP("Presets", "Megatron tensor parallel on attention (tp 2, pp 2)"),
           QT_TRANSLATE_NOOP("Presets",
                             "Each transformer block splits its attention by heads and "
                             "its MLP by columns then rows: two all-reduces follow every "
                             "block's forward and two its backward: run it and compare "
                             "the measured all-reduces with the predicted ones."),
           megatron));

  Experiment sequence_parallel = transformer_template("gpt2-small");
  sequence_parallel.parallel.tp = 4;
  sequence_parallel.parallel.pp = 1;
  sequence_parallel.parallel.sequence_parallel = true;
  list.push_back(
      make("sequence-parallel", memory,
           QT_TRANSLATE_NOOP("Presets", "Sequence parallel saves activation memory (GPT-2, tp 4)"),
           QT_TRANSLATE_NOOP("Presets",
                             "With sequence parallelism every block keeps s b h (34/t + "
                             "5as/(ht)) bytes instead of s b h (10 + 24/t + 5as/(ht)): "
                             "untick 'Sequence parallel' and watch the activations in the "
                             "Memory chart grow."),
           sequence_parallel));

  // --- Mixture of experts ---------------------------------------------------

  Experiment expert_parallel = transformer_template("moe-gshard");
  list.push_back(
      make("expert-parallel", experts,
           QT_TRANSLATE_NOOP("Presets", "Expert parallel: all-to-all on the timeline"),
           QT_TRANSLATE_NOOP("Presets",
                             "Four replicas share each MoE layer's four experts (ep 4): after "
                             "every forward and backward the tokens travel to their experts "
                             "and back by two ALL_TO_ALL ops on the communication row; run "
                             "it and watch the Expert load chart even out as the "
                             "load-balancing loss works."),
           expert_parallel));
  return list;
}

std::optional<Preset> preset_by_id(const QString& id) {
  for (Preset& preset : presets())
    if (preset.id == id) return std::move(preset);
  return std::nullopt;
}

}  // namespace pipelab
