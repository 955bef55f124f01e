"""What a run produces and every writer reads: the `Generation` (contrast-set lines, the views'
entries, the statistics), apart from the code that runs shards, so a writer needs no process
pool to get a dataclass."""
