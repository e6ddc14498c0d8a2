#include "gpu/executor/memory_preflight.h"

#include <algorithm>
#include <cassert>
#include <stdexcept>

#include "core/nn/basic_residual_block.h"
#include "core/nn/stack_layout.h"
#include "core/plan/stage_profile.h"
#include "core/schedule/lowering.h"
#include "core/sim/experiment_prediction.h"
#include "core/sim/simulator.h"
#include "gpu/comm/comm_world.h"
#include "gpu/comm/message_routes.h"
#include "gpu/executor/device_mapping.h"
#include "gpu/layers/attention.h"
#include "gpu/layers/conv2d.h"
#include "gpu/layers/kept_bf16.h"
#include "gpu/memory/out_of_memory.h"

namespace pipelab::gpu {

std::string device_profile_name_for_gpu(const std::string& gpu_name) {
  const auto has = [&](const char* part) { return gpu_name.find(part) != std::string::npos; };
  if (has("A100")) return has("40GB") ? "a100-40gb" : "a100";
  if (has("H100")) return "h100";
  if (has("B200")) return "b200";
  if (has("4090")) return "rtx-4090";
  return "h200";
}

namespace {

// The stages as the CUDA backend holds them: it keeps float32 weights (under
// bf16-mixed, the masters), gradients, activations and stashed versions in
// every precision, which is the fp32 profile's count; bf16-mixed's own bytes
// come on top (bf16_mixed_bytes).
std::vector<StageProfile> stage_profiles(const Experiment& experiment) {
  return profile_stages(experiment.model, experiment.parallel, microbatch_size(experiment),
                        Precision::Fp32);
}

}  // namespace

int64_t bf16_weight_copy_bytes(const StageProfile& stage) {
  return stage.params * static_cast<int64_t>(sizeof(uint16_t));
}

namespace {

// Per sample, the values a stage over `layers` keeps in bf16 (kept_bf16.h):
// its blocks' (all of them, and the most one block keeps), its other
// layers' (moe layers', linear and conv2d inputs), and the norm outputs its
// blocks gather again from BI to BW under sequence parallelism.
struct StageKeptBf16Values {
  int64_t blocks = 0;
  int64_t largest_block = 0;
  int64_t others = 0;
  int64_t gathered_norms = 0;
};

StageKeptBf16Values stage_kept_bf16_values(const Experiment& experiment, LayerRange layers) {
  const ModelSpec& model = experiment.model;
  const std::vector<LayerInfo> infos = describe_layers(model);
  const BlockSplit split = block_split(experiment.parallel);
  const std::vector<TensorParallelRole> roles = tensor_parallel_roles(model, {layers});
  const bool sequence_model = is_sequence_model(model);
  StageKeptBf16Values values;
  for (int i = layers.begin; i < layers.end; ++i) {
    const LayerInfo& info = infos[static_cast<size_t>(i)];
    if (info.type == LayerType::TransformerBlock) {
      const int64_t block = block_kept_bf16_values(info.block, split);
      values.blocks += block;
      values.largest_block = std::max(values.largest_block, block);
      values.gathered_norms += block_gathered_bf16_values(info.block, split);
    }
    if (info.type == LayerType::Moe) values.others += moe_kept_bf16_values(info.moe);
    values.others += layer_input_kept_bf16_values(info, roles[static_cast<size_t>(i)], split,
                                                  i == layers.begin, sequence_model);
  }
  return values;
}

int64_t bf16_bytes_per_microbatch(const Experiment& experiment, int64_t values_per_sample) {
  return values_per_sample * static_cast<int64_t>(sizeof(uint16_t)) * microbatch_size(experiment);
}

}  // namespace

int64_t bf16_kept_activation_bytes(const Experiment& experiment, LayerRange layers) {
  const StageKeptBf16Values values = stage_kept_bf16_values(experiment, layers);
  return bf16_bytes_per_microbatch(experiment, values.blocks + values.others);
}

int64_t bf16_recomputed_activation_bytes(const Experiment& experiment, LayerRange layers) {
  // The executors rebuild the whole stage: every value it keeps in bf16.
  return bf16_kept_activation_bytes(experiment, layers);
}

int64_t bf16_gathered_norm_bytes(const Experiment& experiment, LayerRange layers) {
  return bf16_bytes_per_microbatch(experiment,
                                   stage_kept_bf16_values(experiment, layers).gathered_norms);
}

int64_t bf16_rounding_bytes(const StageProfile& stage, int64_t bf16_kept_bytes,
                            int64_t im2col_bytes) {
  const int64_t float32_kept = stage.activation_bytes - 2 * bf16_kept_bytes;
  return (float32_kept + stage.backward_working_bytes + im2col_bytes) / 2;
}

int64_t largest_im2col_bytes(const Experiment& experiment, LayerRange layers) {
  const ModelSpec& model = experiment.model;
  const bool has_image_layers = std::any_of(model.layers.begin(), model.layers.end(),
                                            [](const LayerSpec& layer) { return is_image_layer(layer.type); });
  if (!has_image_layers) return 0;
  const std::vector<LayerInfo> infos = describe_layers(model);
  int64_t largest = 0;
  for (int i = layers.begin; i < layers.end; ++i) {
    const LayerSpec& spec = model.layers[static_cast<size_t>(i)];
    const ImageShape& in = infos[static_cast<size_t>(i)].image_in;
    std::vector<ConvGeometry> convolutions;
    if (spec.type == LayerType::Conv2d) convolutions = {conv_geometry(in, spec.out, layer_window(spec))};
    if (spec.type == LayerType::ResidualBlock) {
      const ResidualConvolutions block = residual_convolutions(residual_shape(in, spec.out, spec.stride));
      convolutions = {block.conv1, block.conv2};
      if (block.projection) convolutions.push_back(*block.projection);
    }
    for (const ConvGeometry& geometry : convolutions)
      largest = std::max(largest, im2col_bytes(geometry, microbatch_size(experiment)));
  }
  return largest;
}

int64_t largest_attention_workspace_bytes(const Experiment& experiment, LayerRange layers) {
  const std::vector<LayerInfo> infos = describe_layers(experiment.model);
  const BlockSplit split = block_split(experiment.parallel);
  const bool bf16_mixed = experiment.training.precision == Precision::Bf16Mixed;
  int64_t largest = 0;
  for (int i = layers.begin; i < layers.end; ++i) {
    const LayerInfo& info = infos[static_cast<size_t>(i)];
    if (info.type != LayerType::TransformerBlock) continue;
    const TransformerBlockShape& block = info.block;
    // A context rank's queries (all the keys): tokens / cp rows per head.
    const int64_t rows =
        microbatch_size(experiment) * (block.heads / split.tp) * (block.tokens / split.cp);
    AttentionShape heads;
    heads.head_dim = block.dim / block.heads;
    if (split.cp > 1) heads.queries = block.tokens / split.cp;  // never fused
    if (uses_fused_attention(heads, !split.selective_recompute, bf16_mixed)) {
      largest = std::max(largest, 2 * rows * static_cast<int64_t>(sizeof(float)));
      continue;
    }
    const int64_t scores = rows * block.tokens;
    const int64_t buffers = 1 + (split.selective_recompute ? 1 : 0) + (block.dropout ? 1 : 0);
    // Under bf16-mixed the products also read P (or P with dropout), then dS,
    // rounded to bf16 for the call: one such rounding at a time.
    const int64_t rounding = bf16_mixed ? scores * static_cast<int64_t>(sizeof(uint16_t)) : 0;
    largest = std::max(largest, buffers * scores * static_cast<int64_t>(sizeof(float)) + rounding);
  }
  return largest;
}

int64_t largest_per_token_copy_bytes(const Experiment& experiment, LayerRange layers) {
  const ModelSpec& model = experiment.model;
  if (!is_sequence_model(model)) return 0;
  const ParallelPlan& plan = experiment.parallel;
  const std::vector<TensorParallelRole> roles = tensor_parallel_roles(model, {layers});
  const std::vector<LayerLayout> stack = stack_layout(
      model, layers.begin, layers.end,
      {plan.tp, 0, roles, plan.tp > 1, plan.sequence_parallel && plan.tp > 1, plan.cp, 0});
  int64_t largest = 0;  // values per sample
  for (const LayerLayout& layer : stack) {
    const LayerType type = layer.spec.type;
    if (type != LayerType::Linear && type != LayerType::LayerNorm) continue;
    // The positions the layer sees, as sequential.cpp builds it.
    const int64_t tokens = layer.gathers_sequence ? layer.context_tokens() : layer.local_tokens();
    if (tokens == 1) continue;  // not wrapped
    // A layer norm's width (its input's and its output's).
    const int64_t width = layer.out / layer.local_tokens();
    const int64_t in = type == LayerType::Linear ? layer.weight.rows : width;
    const int64_t out = type == LayerType::Linear ? layer.weight.cols : width;
    largest = std::max(largest, (in + out) * tokens);
  }
  return largest * microbatch_size(experiment) * static_cast<int64_t>(sizeof(float));
}

std::vector<int64_t> estimate_device_bytes(const Experiment& experiment,
                                           const DeviceProfile& profile, int64_t workspace_bytes) {
  const ParallelPlan& plan = experiment.parallel;
  const bool bf16_mixed = experiment.training.precision == Precision::Bf16Mixed;
  const std::vector<StageProfile> profiles = stage_profiles(experiment);
  // What the backend holds: the bf16-kept activations at 2 bytes a value.
  std::vector<int64_t> bf16_kept(profiles.size(), 0);
  std::vector<StageProfile> held = profiles;
  for (size_t stage = 0; stage < profiles.size() && bf16_mixed; ++stage) {
    bf16_kept[stage] = bf16_kept_activation_bytes(experiment, profiles[stage].layers);
    StageProfile& kept = held[stage];
    kept.activation_bytes -= bf16_kept[stage];
    // Full recompute: the recomputed activations are kept in bf16 again.
    kept.recompute_kept_bytes = std::min(kept.recompute_kept_bytes, kept.activation_bytes);
    kept.recompute_working_bytes =
        std::min(kept.recompute_working_bytes -
                     bf16_recomputed_activation_bytes(experiment, profiles[stage].layers),
                 kept.activation_bytes - kept.recompute_kept_bytes);
    kept.recompute_forward_peak_bytes = kept.activation_bytes;  // the stage is the unit
    // Sequence parallelism: the norm outputs gathered again, bf16 from BI to BW.
    kept.split_backward_kept_bytes -= bf16_gathered_norm_bytes(experiment, profiles[stage].layers);
    // The backward's peaks and what BI leaves for BW are net of the kept
    // activations the backward has freed, counted at 4 bytes a value; the
    // ones kept in bf16 held 2, so the netting takes off up to their bf16
    // bytes too many: add those back (erring high).
    kept.backward_peak_bytes += bf16_kept[stage];
    kept.split_backward_peak_bytes += bf16_kept[stage];
    kept.split_backward_kept_bytes += bf16_kept[stage];
  }
  const Schedule schedule = build_schedule(plan, held);
  // This backend's own allowances (below) stand for the catalogue's runtime
  // memory: the free bytes measured are net of the context, and its NCCL
  // communicators are counted per GPU (estimate_nccl_bytes_per_gpu).
  DeviceProfile device = profile;
  device.runtime_bytes = device.collective_group_bytes = device.all_to_all_peer_bytes = 0;
  const CostModel cost = CostModel::from_profiles(held, device, optimizer_slots(experiment));
  SimulationOptions options;
  options.record_events = false;
  options.record_memory = false;
  const SimulationResult simulated = simulate(schedule, cost, options);

  const bool staged_all_reduce = plan.dp > 1 && plan.update == UpdateMode::Sync;
  std::vector<int64_t> needed(static_cast<size_t>(plan.devices()), 0);
  for (int d = 0; d < plan.devices(); ++d) {
    const int64_t peak = simulated.per_device[static_cast<size_t>(d)].peak_total_bytes;
    int64_t staging = 0;
    int64_t im2col = 0;
    int64_t attention = 0;
    int64_t per_token = 0;
    int64_t bf16_copies = 0;    // every chunk's, held all along
    int64_t bf16_rounding = 0;  // one GEMM's at a time: the largest chunk's
    const int rank = device_coord(plan, d).pipeline_rank;
    for (int chunk = 0; chunk < plan.chunks; ++chunk) {
      const size_t stage_index = static_cast<size_t>(plan.layout().stage_of(rank, chunk));
      const StageProfile& stage = profiles[stage_index];
      // The all-reduce flattens one stage's gradients at a time: the largest chunk's.
      if (staged_all_reduce) staging = std::max(staging, stage.params * static_cast<int64_t>(sizeof(float)));
      // A moe layer's all-to-all receives into a buffer of its dispatch
      // buffer's size (NCCL; the copies' scratch is one slice of it), one at a time.
      for (const ExpertAllToAll& exchange : stage.expert_all_to_alls)
        staging = std::max(staging, exchange.bytes);
      const int64_t stage_im2col = largest_im2col_bytes(experiment, stage.layers);
      im2col = std::max(im2col, stage_im2col);
      attention = std::max(attention, largest_attention_workspace_bytes(experiment, stage.layers));
      per_token = std::max(per_token, largest_per_token_copy_bytes(experiment, stage.layers));
      if (bf16_mixed) {
        bf16_copies += bf16_weight_copy_bytes(stage);
        bf16_rounding = std::max(bf16_rounding,
                                 bf16_rounding_bytes(stage, bf16_kept[stage_index], stage_im2col));
      }
    }
    needed[static_cast<size_t>(d)] = peak + workspace_bytes + kCublasHandleBytes + staging +
                                     im2col + attention + per_token + bf16_copies + bf16_rounding +
                                     peak * (kEstimateMarginPercent + kCacheOverheadPercent) / 100;
  }
  return needed;
}

std::vector<int64_t> estimate_nccl_bytes_per_gpu(const Experiment& experiment,
                                                 const std::vector<int>& gpu_of_device, int gpus) {
  std::vector<int64_t> bytes(static_cast<size_t>(gpus), 0);
  if (!kHaveNccl) return bytes;
  const ParallelPlan& plan = experiment.parallel;
  std::vector<std::vector<int>> device_groups;
  for (const auto& [a, b] : message_links(build_schedule(plan, stage_profiles(experiment))))
    device_groups.push_back({a, b});
  const std::vector<std::vector<int>> collectives =
      collective_groups(plan, model_has_experts(experiment.model)).all();
  device_groups.insert(device_groups.end(), collectives.begin(), collectives.end());
  const std::vector<int> communicators =
      nccl_communicators_per_gpu(nccl_gpu_sets(device_groups, gpu_of_device), gpus);
  for (int gpu = 0; gpu < gpus; ++gpu)
    bytes[static_cast<size_t>(gpu)] = communicators[static_cast<size_t>(gpu)] * kNcclCommunicatorBytes;
  return bytes;
}

int64_t estimate_rank_nccl_bytes(const RankCommPlan& plan, int rank) {
  return communicators_on_rank(plan, rank) * kNcclCommunicatorBytes;
}

std::vector<GpuShortfall> find_memory_shortfalls(const std::vector<int64_t>& needed_per_device,
                                                 const std::vector<int>& gpu_of_device,
                                                 const std::vector<int64_t>& free_per_gpu,
                                                 const std::vector<int64_t>& nccl_per_gpu) {
  if (needed_per_device.size() != gpu_of_device.size())
    throw std::invalid_argument("memory check: " + std::to_string(needed_per_device.size()) +
                                " estimates for " + std::to_string(gpu_of_device.size()) +
                                " virtual devices");
  if (!nccl_per_gpu.empty() && nccl_per_gpu.size() != free_per_gpu.size())
    throw std::invalid_argument("memory check: NCCL bytes for " +
                                std::to_string(nccl_per_gpu.size()) + " GPUs, free bytes for " +
                                std::to_string(free_per_gpu.size()));
  std::vector<GpuShortfall> shortfalls;
  for (int gpu = 0; gpu < static_cast<int>(free_per_gpu.size()); ++gpu) {
    GpuShortfall candidate;
    candidate.gpu = gpu;
    candidate.devices = devices_on_gpu(gpu_of_device, gpu);
    candidate.free_bytes = free_per_gpu[static_cast<size_t>(gpu)];
    for (int device : candidate.devices)
      candidate.needed_bytes += needed_per_device[static_cast<size_t>(device)];
    if (!nccl_per_gpu.empty()) candidate.nccl_bytes = nccl_per_gpu[static_cast<size_t>(gpu)];
    candidate.needed_bytes += candidate.nccl_bytes;
    if (!candidate.devices.empty() && candidate.needed_bytes > candidate.free_bytes)
      shortfalls.push_back(std::move(candidate));
  }
  return shortfalls;
}

std::string describe_shortfall(const GpuShortfall& shortfall,
                               const std::vector<int64_t>& needed_per_device,
                               const std::string& gpu_name) {
  std::string text = gpu_name + " (virtual device" + (shortfall.devices.size() == 1 ? " " : "s ") +
                     device_list_text(shortfall.devices) + ") needs " +
                     format_bytes(shortfall.needed_bytes);
  std::string details;
  if (shortfall.devices.size() > 1) {
    int largest = shortfall.devices.front();
    for (int device : shortfall.devices)
      if (needed_per_device[static_cast<size_t>(device)] >
          needed_per_device[static_cast<size_t>(largest)])
        largest = device;
    details = "the largest, device " + std::to_string(largest) + ", " +
              format_bytes(needed_per_device[static_cast<size_t>(largest)]);
  }
  if (shortfall.nccl_bytes > 0)
    details +=
        (details.empty() ? "" : "; ") + std::string("NCCL ") + format_bytes(shortfall.nccl_bytes);
  if (!details.empty()) text += " (" + details + ")";
  return text + " but has " + format_bytes(shortfall.free_bytes) + " free";
}

std::string memory_fixes(bool gpu_shared_by_ranks) {
  return std::string(
             gpu_shared_by_ranks
                 ? "use fewer ranks per GPU (as many ranks on each machine as it has GPUs, "
                   "or more machines), parallel.offload = activations, "
                 : "use more pipeline stages (parallel.pp) or tensor shards (parallel.tp), ") +
         "parallel.recompute = true, a schedule with fewer micro-batches in flight (1f1b rather "
         "than gpipe), a smaller batch or model, or backend.type = cpu";
}

std::string memory_shortfall_message(const std::vector<GpuShortfall>& shortfalls,
                                     const std::vector<int64_t>& needed_per_device) {
  assert(!shortfalls.empty());
  std::string text = kMemoryShortfallStart;
  for (size_t i = 0; i < shortfalls.size(); ++i)
    text += (i > 0 ? "; " : "") + describe_shortfall(shortfalls[i], needed_per_device,
                                                     "GPU " + std::to_string(shortfalls[i].gpu));
  return text + "; " + memory_fixes(false);
}

}  // namespace pipelab::gpu
