"""HTTP routes only: each module maps one API family onto ingest and query functions."""
