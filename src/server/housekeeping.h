#pragma once
// What the server removes at start-up so that its data folder holds only what is still needed:
// the job folder of every job recorded done (segments and journal, as large as the output or
// larger). A worker removes a job's folder right after recording it done; a server that died
// between the two, or one from before that rule, left folders behind, and this sweeps them.
// Failed and cancelled jobs keep theirs: a retry resumes from their finished segments.
#include <filesystem>

namespace framelift::server {

class Store;

// Removes DATA/jobs/ID for each job ID the store has as done. Returns how many went. Must run
// while this process holds the data folder (data_lock.h): no other server may be using them.
int remove_done_job_folders(Store& store, const std::filesystem::path& data_dir);

}  // namespace framelift::server
