"""The session database file: opening and checks, schema and migrations, the log's SQL, the
full-text index, the summary and view tables, and the one-writer lock."""
