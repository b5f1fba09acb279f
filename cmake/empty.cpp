// Intentionally empty: a component with no sources yet still yields a library.
