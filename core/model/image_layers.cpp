#include "core/model/image_layers.h"

#include <stdexcept>

#include "core/model/model_limits.h"

namespace pipelab {
namespace {

constexpr int64_t kBytesPerValue = 4;

std::string shape_text(const ImageShape& image) {
  return std::to_string(image.channels) + " x " + std::to_string(image.height) + " x " +
         std::to_string(image.width);
}

void check_window(const LayerSpec& spec, const Window& window, const ImageShape& in,
                  const std::string& label) {
  const std::string type = layer_type_name(spec.type);
  if (window.kernel < 1 || window.kernel > kMaxWidth)
    throw std::invalid_argument(label + ": " + type + " needs kernel >= 1, got " + std::to_string(window.kernel));
  if (window.stride < 1 || window.stride > kMaxWidth)
    throw std::invalid_argument(label + ": " + type + " needs stride >= 1, got " + std::to_string(window.stride));
  if (window.padding < 0 || window.padding >= window.kernel)
    throw std::invalid_argument(label + ": " + type + " padding = " + std::to_string(window.padding) +
                                " must be in [0, kernel) (kernel " + std::to_string(window.kernel) +
                                "); a larger padding only adds rows of zeros");
  if (window_output_size(in.height, window) < 1 || window_output_size(in.width, window) < 1)
    throw std::invalid_argument(label + ": " + type + "'s " + std::to_string(window.kernel) + " x " +
                                std::to_string(window.kernel) + " window (padding " +
                                std::to_string(window.padding) + ") does not fit its " + shape_text(in) +
                                " input; use a smaller kernel or more padding, or downsample less before it");
}

void check_channels(const std::string& label, const char* type, int64_t channels) {
  if (channels < 1 || channels > kMaxWidth)
    throw std::invalid_argument(label + ": " + type + " needs out (output channels) >= 1, got " +
                                std::to_string(channels));
}

// A convolution's cost per sample (FLOPs count a multiply-add as two).
struct ConvCost {
  int64_t params = 0;
  double forward = 0;
  double backward_input = 0;
  double backward_weight = 0;
};

ConvCost conv_cost(const ImageShape& in, const ImageShape& out, int64_t kernel, bool bias) {
  const double taps = static_cast<double>(in.channels * kernel * kernel);
  const double outputs = static_cast<double>(out.size());
  const double bias_flops = bias ? outputs : 0.0;
  ConvCost cost;
  cost.params = out.channels * in.channels * kernel * kernel + (bias ? out.channels : 0);
  cost.forward = 2 * taps * outputs + bias_flops;  // each output: a dot product over its taps
  cost.backward_input = 2 * taps * outputs;        // each tap gathers its outputs' gradients
  cost.backward_weight = 2 * taps * outputs + bias_flops;
  return cost;
}

// Batch normalisation per element, as layernorm's: forward 8 (mean, variance,
// normalise, scale, shift), backward input 10, backward weight 3.
void add_batchnorm_cost(LayerInfo& info, const ImageShape& image) {
  const double elements = static_cast<double>(image.size());
  info.params += 2 * image.channels;  // gamma and beta per channel
  info.forward_flops += 8 * elements;
  info.backward_input_flops += 10 * elements;
  info.backward_weight_flops += 3 * elements;
}

void add_conv_cost(LayerInfo& info, const ImageShape& in, const ImageShape& out, int64_t kernel, bool bias) {
  const ConvCost cost = conv_cost(in, out, kernel, bias);
  info.params += cost.params;
  info.forward_flops += cost.forward;
  info.backward_input_flops += cost.backward_input;
  info.backward_weight_flops += cost.backward_weight;
}

LayerInfo describe_residual(const LayerSpec& spec, const ImageShape& in, const std::string& label) {
  check_channels(label, "residual_block", spec.out);
  if (spec.stride < 1 || spec.stride > kMaxWidth)
    throw std::invalid_argument(label + ": residual_block needs stride >= 1, got " + std::to_string(spec.stride));
  const ResidualShape shape = residual_shape(in, spec.out, spec.stride);
  if (!shape.out.valid())
    throw std::invalid_argument(label + ": residual_block's stride " + std::to_string(spec.stride) +
                                " leaves nothing of its " + shape_text(in) + " input; use a smaller stride");
  if (shape.out.size() > kMaxWidth)
    throw std::invalid_argument(label + ": residual_block's output " + shape_text(shape.out) +
                                " is more than the " + std::to_string(kMaxWidth) +
                                " values per sample PipeLab handles; use fewer channels");
  LayerInfo info;
  add_conv_cost(info, shape.in, shape.out, 3, false);
  add_batchnorm_cost(info, shape.out);
  add_conv_cost(info, shape.out, shape.out, 3, false);
  add_batchnorm_cost(info, shape.out);
  if (shape.projection) {
    add_conv_cost(info, shape.in, shape.out, 1, false);
    add_batchnorm_cost(info, shape.out);
  }
  const double outputs = static_cast<double>(shape.out.size());
  info.forward_flops += 3 * outputs;         // two relus and the sum
  info.backward_input_flops += 3 * outputs;  // the relus' masks and the shortcut's share
  // Kept for the backward: the input, each convolution's output, the first
  // relu's output and the block's output (ResidualBlockLayer's state).
  const int64_t kept_outputs = shape.projection ? 5 : 4;
  info.activation_bytes = (in.size() + kept_outputs * shape.out.size()) * kBytesPerValue;
  info.image_out = shape.out;
  return info;
}

}  // namespace

ResidualShape residual_shape(const ImageShape& in, int64_t out_channels, int64_t stride) {
  ResidualShape shape;
  shape.in = in;
  shape.stride = stride;
  shape.out = window_output(in, Window{3, stride, 1}, out_channels);
  shape.projection = in.channels != out_channels || stride != 1;
  return shape;
}

LayerInfo describe_image_layer(const LayerSpec& spec, const ImageShape& image, int64_t width,
                               const std::string& label) {
  const std::string type = layer_type_name(spec.type);
  if (needs_image(spec.type) && !image.valid())
    throw std::invalid_argument(label + ": " + type +
                                " works on images, but its input is a flat vector of " + std::to_string(width) +
                                " values; give model.input as [channels, height, width] (MNIST: [1, 28, 28]) "
                                "and keep image layers before any flatten, global_avgpool or linear");
  LayerInfo info;
  info.image_in = image;
  const ImageShape in = image.valid() ? image : ImageShape{width, 1, 1};
  info.in_features = in.size();
  info.activation_bytes = in.size() * kBytesPerValue;  // the input, kept for the backward
  ImageShape out = in;
  const double in_values = static_cast<double>(in.size());
  switch (spec.type) {
    case LayerType::Conv2d: {
      check_channels(label, "conv2d", spec.out);
      const Window window = layer_window(spec);
      check_window(spec, window, in, label);
      out = window_output(in, window, spec.out);
      if (out.size() > kMaxWidth)
        throw std::invalid_argument(label + ": conv2d's output " + shape_text(out) + " is more than the " +
                                    std::to_string(kMaxWidth) +
                                    " values per sample PipeLab handles; use fewer channels or a larger stride");
      add_conv_cost(info, in, out, window.kernel, spec.bias);
      break;
    }
    case LayerType::MaxPool:
    case LayerType::AvgPool: {
      const Window window = layer_window(spec);
      check_window(spec, window, in, label);
      out = window_output(in, window, in.channels);
      const double taps = static_cast<double>(out.size() * window.kernel * window.kernel);
      info.forward_flops = taps;         // a compare or an add per tap
      info.backward_input_flops = taps;  // max: find the tap again; avg: spread the gradient
      break;
    }
    case LayerType::GlobalAvgPool:
      out = {in.channels, 1, 1};
      info.forward_flops = in_values;
      info.backward_input_flops = in_values;
      break;
    case LayerType::Flatten:
      break;
    case LayerType::BatchNorm:
      if (!(spec.momentum > 0.0 && spec.momentum <= 1.0))
        throw std::invalid_argument(label + ": batchnorm momentum must be in (0, 1], got " +
                                    std::to_string(spec.momentum) + " (PyTorch's default is 0.1)");
      if (!(spec.eps > 0.0 && spec.eps < 1.0))
        throw std::invalid_argument(label + ": batchnorm eps must be in (0, 1), got " + std::to_string(spec.eps) +
                                    " (PyTorch's default is 1e-5)");
      add_batchnorm_cost(info, in);
      break;
    case LayerType::ResidualBlock: {
      const LayerInfo residual = describe_residual(spec, in, label);
      info.params = residual.params;
      info.forward_flops = residual.forward_flops;
      info.backward_input_flops = residual.backward_input_flops;
      info.backward_weight_flops = residual.backward_weight_flops;
      info.activation_bytes = residual.activation_bytes;
      out = residual.image_out;
      break;
    }
    default:
      throw std::logic_error(label + ": " + type + " is not an image layer");
  }
  // Flatten and global_avgpool end the image; batchnorm keeps what it was given.
  const bool stays_image = image.valid() && spec.type != LayerType::Flatten;
  info.image_out = stays_image && spec.type != LayerType::GlobalAvgPool ? out : ImageShape{};
  info.out_features = out.size();
  return info;
}

}  // namespace pipelab
