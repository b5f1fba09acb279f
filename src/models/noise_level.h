#pragma once
// Networks conditioned on the noise level they remove (DRUNet reads it as an extra input plane):
// the denoise stage's sigma= reaches them through this interface, found by dynamic_cast on the
// model open_model returns. A model without it has no such knob, and sigma= is refused for it.
namespace framelift::models {

class NoiseLevelInput {
 public:
  virtual ~NoiseLevelInput() = default;
  // sigma on the 0-255 scale of 8-bit pixel values (Gaussian noise's standard deviation).
  virtual void set_noise_level(double sigma) = 0;
  virtual double noise_level() const = 0;
};

}  // namespace framelift::models
