"""Who pays for idle GPUs, acted on: survey, plan, act, record, settle, simulate."""
