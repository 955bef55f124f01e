"""Where heavy work runs: this machine's worker processes or a Ray cluster, for any stage."""
