"""Ingest: turning bodies, files and messages into validated events and appending them durably."""
