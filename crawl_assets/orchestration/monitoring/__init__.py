"""What people watch: per-source sync health in the instance, freshness and failure-streak checks."""
