"""What a training job will cost: the estimate and its job files."""
