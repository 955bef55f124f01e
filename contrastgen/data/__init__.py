"""Sample data that ships with the package (a small GQA-format dataset)."""
