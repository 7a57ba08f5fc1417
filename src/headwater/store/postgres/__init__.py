"""The PostgreSQL backend for server deployments (psycopg 3)."""
