#pragma once
// Key and shape queries the detectors share.
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "weights/state_dict.h"

namespace framelift::models {

// Indices N of keys "<prefix>N.<rest>" (prefix includes its trailing dot: "body.").
std::set<int> key_indices(const weights::StateDict& dict, std::string_view prefix);

// The tensor's size on one axis when the key exists with that rank; nullopt otherwise.
std::optional<int64_t> dim_of(const weights::StateDict& dict, const std::string& key, int64_t rank, int64_t axis);

// Whether dict holds every one of keys (the keys a detector recognises its layout by).
bool has_keys(const weights::StateDict& dict, std::initializer_list<std::string> keys);

// Whether key exists and is a 4-D (convolution) tensor.
bool is_conv(const weights::StateDict& dict, const std::string& key);

// n = s * s * base for an integer s >= 1; nullopt otherwise (pixel-shuffle channel counts).
std::optional<int> shuffle_factor(int64_t n, int64_t base);

}  // namespace framelift::models
