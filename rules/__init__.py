"""Rules as data: templates, lexicons, relation tables. Each file has a header saying where it came from."""
