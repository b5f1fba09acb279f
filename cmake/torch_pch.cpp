// Compiles the shared libtorch precompiled header once.
