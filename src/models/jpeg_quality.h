#pragma once
// Networks that estimate the JPEG quality of what they restore and are conditioned on it (FBCNN
// predicts a quality factor and modulates its decoder by it, or by one the user gives): found by
// dynamic_cast on the model open_model returns, for the denoise stage's quality=, tests and
// reports. The estimate is the network's own, from the image, not read from any file.
#include <optional>

namespace framelift::models {

class JpegQualityEstimator {
 public:
  virtual ~JpegQualityEstimator() = default;
  // The quality factor, 0-100 as JPEG encoders take it, predicted for the first image of the last
  // forward call (one tile, when the frame was tiled); nullopt before the first call.
  virtual std::optional<double> predicted_quality() const = 0;
  // Conditions the restoration on this quality (0-100) instead of the prediction: lower removes
  // more. It also makes tiles agree, as each would otherwise predict its own. nullopt: predict.
  virtual void set_quality(std::optional<double> quality) = 0;
};

}  // namespace framelift::models
