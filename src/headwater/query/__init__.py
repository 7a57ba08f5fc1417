"""Read models used by every API family and the CLI; they read the store, never the ingest side."""
