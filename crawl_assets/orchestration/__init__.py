"""The Dagster side: the steps a source's chain runs (plain functions of a ``StepEnv``)."""
