// BatchNormLayer: batch normalisation (Ioffe and Szegedy, 2015), as PyTorch's
// nn.BatchNorm2d on images [C, H, W] (statistics per channel over the batch
// and every pixel) and nn.BatchNorm1d on flat features (per feature over the
// batch):
//   training:   y = (x - mean_B) / sqrt(var_B + eps) * gamma + beta
//               running = (1 - momentum) running + momentum stat_B
//               (the running variance takes the unbiased var_B, as PyTorch)
//   evaluation: y = (x - running_mean) / sqrt(running_var + eps) * gamma + beta
// B is the micro-batch the forward sees: in a pipeline each micro-batch is
// normalised by its own statistics, as GPipe does. With `sync` under data
// parallelism the statistics are summed over the replicas first (a
// collective the stage connects: connect_batch_statistics), so B is the
// micro-batch of every replica together.
//
// The forward keeps each channel's mean and 1/std for the backward (a few
// numbers per channel; recomputed from x when a caller kept no state); with
// xhat = (x - mean) / std, over the M values of a channel:
//   dx = gamma / std * (dy - sum(dy) / M - xhat * sum(dy xhat) / M)
//   dgamma += sum(dy xhat),  dbeta += sum(dy)
// The running statistics move once per micro-batch and step: a recomputed
// forward (parallel.recompute) does not move them again.
#pragma once

#include <functional>
#include <set>
#include <utility>
#include <vector>

#include "core/model/image_shape.h"
#include "core/nn/layer.h"

namespace pipelab {

// Which micro-batches have moved the running statistics: each (step, first
// sample) moves them once, so a recomputed forward does not move them again.
// The CPU and CUDA layers share it.
class RunningStatisticsFolds {
 public:
  // True the first time a micro-batch asks; forgets steps long past (a
  // recompute comes within its step).
  bool first_time(const ForwardInfo& info);

 private:
  std::set<std::pair<int, int64_t>> folded_;
};

struct BatchNormOptions {
  double momentum = 0.1;
  double eps = 1e-5;
};

class BatchNormLayer : public Layer {
 public:
  // `image` gives the channels and pixels; a flat input of `width` features is
  // {width, 1, 1}.
  BatchNormLayer(int index, const ImageShape& image, const BatchNormOptions& options,
                 DeviceAllocator* allocator);

  Tensor forward(const Tensor& x, const ForwardInfo& info) override;
  Tensor backward_input(const Tensor& x, const Tensor& dy, const ForwardInfo& info) override;
  void backward_weight(const Tensor& x, const Tensor& dy) override;
  Tensor forward_keeping(const Tensor& x, const ForwardInfo& info, std::unique_ptr<LayerState>& state) override;
  Tensor backward_input_with(const Tensor& x, const Tensor& dy, const ForwardInfo& info,
                             LayerState* state) override;
  void backward_weight_with(const Tensor& x, const Tensor& dy, LayerState* state) override;
  std::vector<Tensor*> params() override { return {&gamma_, &beta_}; }
  std::vector<Tensor*> grads() override { return {&gamma_grad_, &beta_grad_}; }
  std::vector<Tensor*> buffers() override { return {&running_mean_, &running_var_}; }

  // Synchronised batch normalisation: `all_reduce` sums the batch statistics
  // (in the forward) and the gradient sums (in the backward) over the replicas.
  void connect_batch_statistics(BatchStatisticsAllReduce all_reduce) override { all_reduce_ = std::move(all_reduce); }

  Tensor& gamma() { return gamma_; }
  Tensor& beta() { return beta_; }
  Tensor& running_mean() { return running_mean_; }
  Tensor& running_var() { return running_var_; }

  struct Statistics {
    std::vector<double> mean;
    std::vector<double> inv_std;
    double count = 0;  // values per channel, over every replica that shares them
  };

 private:
  Statistics batch_statistics(const Tensor& x) const;
  // The statistics the forward kept, or the batch's again.
  Statistics statistics_for(const Tensor& x, LayerState* state) const;
  void fold_into_running(const Statistics& stats, const ForwardInfo& info);
  // Per channel: sum(dy) and sum(dy * xhat), summed over the replicas.
  std::pair<std::vector<double>, std::vector<double>> gradient_sums(const Tensor& x, const Tensor& dy,
                                                                   const Statistics& stats) const;

  ImageShape image_;
  BatchNormOptions options_;
  BatchStatisticsAllReduce all_reduce_;
  Tensor gamma_;         // [1, C], Weights, starts at 1
  Tensor beta_;          // [1, C], Weights, starts at 0
  Tensor gamma_grad_;
  Tensor beta_grad_;
  Tensor running_mean_;  // [1, C], Weights (not trained), starts at 0
  Tensor running_var_;   // [1, C], starts at 1
  RunningStatisticsFolds folded_;
};

}  // namespace pipelab
