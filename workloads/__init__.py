"""Training workloads of the Zeus paper, discovered by zeus_bench through entry points."""
