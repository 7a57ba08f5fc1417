"""The embedded SQLite backend: one file, WAL mode, one writer, durable commits."""
