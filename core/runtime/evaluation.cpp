#include "core/runtime/evaluation.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <numeric>
#include <vector>

#include "core/data/batch_iterator.h"
#include "core/nn/embedding_layer.h"
#include "core/nn/moe_layer.h"
#include "core/nn/linear.h"
#include "core/nn/per_token_layer.h"
#include "core/nn/tensor_parallel.h"
#include "core/nn/transformer_block_layer.h"
#include "core/runtime/microbatch_loss.h"

namespace pipelab {
namespace {

// Writes `part` into the block `slice` of `full`.
void paste_slice(Tensor& full, const MatrixSlice& slice, const Tensor& part) {
  assert(part.rows() == slice.rows && part.cols() == slice.cols);
  for (int64_t r = 0; r < slice.rows; ++r)
    std::memcpy(full.row(slice.row_begin + r) + slice.col_begin, part.row(r),
                static_cast<size_t>(slice.cols) * sizeof(float));
}

// The linear itself, also when a sequence model applies it per token.
LinearLayer& linear_of(Layer& layer) {
  if (auto* per_token = dynamic_cast<PerTokenLayer*>(&layer))
    return static_cast<LinearLayer&>(per_token->inner());
  return static_cast<LinearLayer&>(layer);
}

}  // namespace

Evaluator::Evaluator(const ModelSpec& model, uint64_t seed, const Dataset& data)
    : loss_(model.loss),
      data_(data),
      whole_(model, 0, static_cast<int>(model.layers.size()), seed, nullptr) {}

namespace {

// A moe layer's gate, and the experts member `rank` of an expert-parallel
// group holds, into the whole layer; under expert tensor parallelism
// (moe_layer.h) tensor-parallel shard `tp_shard`'s hidden columns of them.
void copy_experts(MoeLayer& part, MoeLayer& full, int rank, int tp_shard = 0) {
  if (rank == 0 && tp_shard == 0) full.gate().copy_from(part.gate());
  for (int64_t l = 0; l < part.local_experts(); ++l) {
    MoeLayer::Expert& from = part.expert(l);
    MoeLayer::Expert& to = full.expert(rank * part.local_experts() + l);
    const int64_t width = from.w1.cols();  // the shard's hidden columns
    const int64_t first = tp_shard * width;
    paste_slice(to.w1, {0, from.w1.rows(), first, width}, from.w1);
    paste_slice(to.b1, {0, 1, first, width}, from.b1);
    paste_slice(to.w2, {first, width, 0, from.w2.cols()}, from.w2);
    if (tp_shard == 0) to.b2.copy_from(from.b2);
  }
}

}  // namespace

void Evaluator::copy_weights_from(Sequential& stage, int tp, int shard, ExpertShard experts) {
  for (int k = 0; k < stage.layer_count(); ++k) {
    Layer& part = stage.layer(k);
    Layer& full = whole_.layer(stage.begin() + k);
    if (part.type() == LayerType::Moe) {
      if (shard == 0) copy_experts(static_cast<MoeLayer&>(part), static_cast<MoeLayer&>(full), experts.rank);
      continue;
    }
    auto* block = part.type() == LayerType::TransformerBlock
                      ? &static_cast<TransformerBlockLayer&>(part)
                      : nullptr;
    if (block && block->experts()) {
      auto& full_block = static_cast<TransformerBlockLayer&>(full);
      copy_experts(*block->experts(), *full_block.experts(), experts.rank, shard);
      if (experts.rank != 0) continue;
      paste_block_tensors(full_block.block().weights(), block->block().weights(),
                          full_block.block().config(), block->block().shard());
      continue;
    }
    if (experts.rank != 0) continue;  // the other members hold the same non-expert weights
    const TensorParallelRole role = stage.role(k);
    if (tp > 1 && role == TensorParallelRole::VocabParallel) {
      auto& part_embedding = static_cast<EmbeddingLayer&>(part);
      auto& full_embedding = static_cast<EmbeddingLayer&>(full);
      const Tensor& rows = part_embedding.token_table();
      paste_slice(full_embedding.token_table(),
                  {part_embedding.range().begin, rows.rows(), 0, rows.cols()}, rows);
      full_embedding.position_table().copy_from(part_embedding.position_table());
      continue;
    }
    if (tp > 1 && role == TensorParallelRole::BlockParallel) {
      GptBlock& part_block = static_cast<TransformerBlockLayer&>(part).block();
      GptBlock& full_block = static_cast<TransformerBlockLayer&>(full).block();
      paste_block_tensors(full_block.weights(), part_block.weights(), full_block.config(),
                          part_block.shard());
      continue;
    }
    const bool split =
        tp > 1 && part.type() == LayerType::Linear &&
        (role == TensorParallelRole::ColumnParallel || role == TensorParallelRole::RowParallel);
    if (!split) {
      // The whole layer: every shard holds the same values; take shard 0's.
      if (shard != 0) continue;
      const std::vector<Tensor*> from = part.params();
      const std::vector<Tensor*> to = full.params();
      assert(from.size() == to.size());
      for (size_t i = 0; i < from.size(); ++i) to[i]->copy_from(*from[i]);
      // BatchNorm's running statistics: replica 0's (each replica keeps its
      // own under local batch norm; synced ones agree).
      const std::vector<Tensor*> buffers_from = part.buffers();
      const std::vector<Tensor*> buffers_to = full.buffers();
      assert(buffers_from.size() == buffers_to.size());
      for (size_t i = 0; i < buffers_from.size(); ++i) buffers_to[i]->copy_from(*buffers_from[i]);
      continue;
    }
    LinearLayer& part_linear = linear_of(part);
    LinearLayer& full_linear = linear_of(full);
    const int64_t in = full_linear.in_features();
    const int64_t out = full_linear.out_features();
    paste_slice(full_linear.weight(), linear_weight_slice(role, in, out, tp, shard),
                part_linear.weight());
    if (!part_linear.has_bias()) continue;
    if (role == TensorParallelRole::ColumnParallel)
      paste_slice(full_linear.bias(), linear_bias_slice(role, out, tp, shard), part_linear.bias());
    else if (shard == 0)  // row-parallel: every shard holds the whole bias
      full_linear.bias().copy_from(part_linear.bias());
  }
}

EvaluationResult Evaluator::evaluate(int64_t batch_rows) {
  EvaluationResult result;
  if (data_.samples == 0) return result;
  const TargetEncoding encoding =
      loss_ == LossType::Mse ? TargetEncoding::OneHot : TargetEncoding::Labels;
  std::vector<int64_t> ids(static_cast<size_t>(data_.samples));
  std::iota(ids.begin(), ids.end(), int64_t{0});
  double loss_sum = 0;
  int64_t correct = 0;
  int64_t counted = 0;  // samples, or for a sequence set the positions its mask counts
  Batch batch;
  for (int64_t begin = 0; begin < data_.samples; begin += batch_rows) {
    const int64_t rows = std::min(batch_rows, data_.samples - begin);
    gather_batch(data_, std::span<const int64_t>(ids).subspan(begin, rows), encoding, batch);
    if (data_.is_classification() && batch.labels.empty())
      for (int64_t id : batch.sample_ids) batch.labels.push_back(data_.labels[id]);
    Tensor x(rows, data_.features);
    std::memcpy(x.data(), batch.x.data(), static_cast<size_t>(x.size()) * sizeof(float));
    ForwardInfo info;
    info.first_sample = begin;
    info.training = false;
    const Tensor outputs = whole_.infer(x, info);
    MicrobatchTargets targets;
    targets.rows = rows;
    targets.labels = batch.labels;
    if (batch.target_width > 0) {
      targets.width = batch.target_width;
      targets.targets = batch.targets.data();
    }
    if (data_.is_sequence()) {
      targets.tokens = data_.features;
      targets.token_labels = batch.token_labels;
      targets.loss_mask = batch.loss_mask;
    }
    const LossResult loss = output_loss(loss_, outputs, targets, 1.0, false);
    loss_sum += loss.loss_sum;
    correct += loss.correct;
    counted += loss.samples;
  }
  result.samples = data_.samples;
  if (counted == 0) return result;
  result.loss = loss_sum / static_cast<double>(counted);
  if (data_.is_classification() || data_.is_sequence())
    result.accuracy = static_cast<double>(correct) / static_cast<double>(counted);
  return result;
}

}  // namespace pipelab
