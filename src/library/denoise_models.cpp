#include "library/denoise_models.h"

#include "util/error.h"
#include "util/str.h"

namespace framelift::library {

std::string denoise_model_name(const std::string& method, const std::string& arch, int native_scale, int level) {
  if (method == "waifu2x") {
    if (arch == "upconv7") return str("waifu2x-upconv7-anime-2x-noise", level);
    return native_scale == 1 ? str("waifu2x-cunet-noise", level) : str("waifu2x-cunet-2x-noise", level);
  }
  // Real-CUGAN: conservative is its lightest denoiser; its x3 and x4 come only as 0 and 3.
  if (native_scale > 2 && level != 0 && level != 3)
    throw Error(ErrorKind::Usage, str("stage denoise: Real-CUGAN x", native_scale, " has levels 0 (conservative) and 3 only"));
  return level == 0 ? str("realcugan-se-", native_scale, "x-conservative") : str("realcugan-se-", native_scale, "x-denoise", level, "x");
}

int denoise_native_scale(const std::string& method, const std::string& arch, double scale) {
  if (method == "waifu2x") return arch == "cunet" && scale < 1.5 ? 1 : 2;
  return scale >= 3.5 ? 4 : scale >= 2.5 ? 3 : 2;
}

}  // namespace framelift::library
