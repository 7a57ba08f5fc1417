"""Headwater: an OpenLineage lineage server."""

__version__ = "0.1.0"
