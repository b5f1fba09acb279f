/* What a hostile `filter:graph='ladspa=file=UPLOAD'` would have loaded into the server: a shared
 * object whose constructor runs on dlopen and writes the file $FRAMELIFT_POLICY_MARKER. The policy
 * tests upload it and assert that the marker never appears. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((constructor)) static void write_marker(void) {
  const char* path = getenv("FRAMELIFT_POLICY_MARKER");
  if (!path) return;
  FILE* f = fopen(path, "w");
  if (f) {
    fputs("loaded\n", f);
    fclose(f);
  }
}
