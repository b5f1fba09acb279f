#pragma once
// A checksum a job file carries over its own content ("seal": SHA-256 of the rest of the object,
// as nlohmann dumps it). Journal records and plan.json are read back to decide what to skip and
// how to assemble; a byte damaged from outside (a bad disk, a hand edit, a stray copy) must make
// the file untrusted, never change the output.
#include <nlohmann/json.hpp>

namespace framelift::jobs {

// Adds the seal field to an object.
void seal_json(nlohmann::json& object);

enum class SealState { Valid, Missing, Broken };
// Missing for files written before seals existed; Broken when the content no longer matches.
SealState check_json_seal(const nlohmann::json& object);

}  // namespace framelift::jobs
